# The version of fabricctl: base/version.h (every binary's --version) and the Debian
# package's name and control file are generated from this one constant.
VERSION = "0.2.0"
