#!/usr/bin/env bash
# Builds fabricctl's Debian package from the Bazel outputs (run by //deploy/debian:deb).
#
#   build-deb.sh OUT.deb VERSION DEST=SRC...
#
# Each DEST=SRC installs SRC at /DEST (usr/bin/* and the Slurm scripts mode 0755, etc/* 0640, the rest 0644). DEBIAN/ holds the
# control file (control.in with the version and the shared-library dependencies that
# dpkg-shlibdeps finds for the binaries), conffiles, the maintainer scripts and md5sums. Man
# pages come from each binary's --help through help2man (fabricctl's with its subcommands').
set -euo pipefail
out=$1 version=$2; shift 2
here=$(dirname "$0")
stage=$(mktemp -d "${TMPDIR:-/tmp}/fabricctl-deb.XXXXXX")
work=$(mktemp -d "${TMPDIR:-/tmp}/fabricctl-shlibs.XXXXXX")
trap 'rm -rf "$stage" "$work"' EXIT

for item in "$@"; do
  dest=${item%%=*} src=${item#*=}
  mode=0644
  [[ $dest == usr/bin/* || $dest == usr/lib/fabricctl/slurm/* ]] && mode=0755
  # Settings and configuration may hold what other local users must not read (a database URL,
  # TLS paths, a controller's address): the owner and group fabricctl only (postinst).
  [[ $dest == etc/* ]] && mode=0640
  install -D -m "$mode" "$src" "$stage/$dest"
done
bins=("$stage"/usr/bin/*)
for b in "${bins[@]}"; do strip --strip-unneeded "$b"; done

# Man pages: fabricctl(1), fabric-agent(8), fabric-controller(8).
man() {  # BINARY SECTION DESCRIPTION [INCLUDE]
  local bin=$1 section=$2 what=$3 include=${4:-}
  mkdir -p "$stage/usr/share/man/man$section"
  help2man --no-info --section "$section" --name "$what" ${include:+--include "$include"} \
    --version-string "$version" "$stage/usr/bin/$bin" | gzip -9n > "$stage/usr/share/man/man$section/$bin.$section.gz"
}
{
  echo "[SUBCOMMANDS]"
  for sub in sweep check probe nodes map history lab; do
    echo ".SS $sub"
    echo ".nf"
    "$stage/usr/bin/fabricctl" "$sub" --help 2>&1 | sed -e 's/\\/\\\\/g' -e 's/^[.'\'']/\\\&&/'
    echo ".fi"
  done
  echo "[FILES]"
  echo "/etc/fabricctl/fabricctl.yaml: the configuration (else \$FABRICCTL_CONFIG, or --config)."
} > "$work/fabricctl.h2m"
man fabricctl 1 "validate a GPU cluster's network fabric" "$work/fabricctl.h2m"
man fabric-agent 8 "fabricctl's per-node probe daemon"
man fabric-controller 8 "fabricctl's cluster daemon: registry, sweeps, health map, history"

# Depends: the packages of the shared libraries the binaries link, as dpkg-shlibdeps finds them.
mkdir -p "$work/debian"
printf 'Source: fabricctl\n\nPackage: fabricctl\nArchitecture: amd64\n' > "$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O "${bins[@]}" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[[ -n $depends ]] || { echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

mkdir -p "$stage/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@DEPENDS@/$depends/" "$here/control.in" > "$stage/DEBIAN/control"
echo "Installed-Size: $size" >> "$stage/DEBIAN/control"
install -m 0644 "$here/conffiles" "$stage/DEBIAN/conffiles"
for script in postinst prerm postrm; do install -m 0755 "$here/$script" "$stage/DEBIAN/$script"; done
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
  xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
find "$stage" -type d -exec chmod 0755 {} +
dpkg-deb --root-owner-group -Zxz --build "$stage" "$out" > /dev/null
