#ifndef FABRICCTL_PROBES_SYSFS_SYSFS_ROOT_H_
#define FABRICCTL_PROBES_SYSFS_SYSFS_ROOT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fabricctl::probes {

// Every read of the system's files (sysfs, procfs, /sys/module) goes through one SysfsRoot,
// so that audits and inventory run against a fixture tree as well as against "/".
// Paths given to it are absolute system paths ("/sys/class/net"); it prefixes the root.
//
// Thread-safe: holds only the root path.
class SysfsRoot {
 public:
  explicit SysfsRoot(std::string root = "/");

  // The file's contents. NotFound when absent; other errno values become Unavailable with
  // the path and the reason (sysfs answers EINVAL for some attributes, e.g. an empty GID).
  absl::StatusOr<std::string> Read(const std::string& path) const;
  // Read() with surrounding white space removed.
  absl::StatusOr<std::string> ReadTrimmed(const std::string& path) const;
  // Entry names of a directory, sorted; "." and ".." left out.
  absl::StatusOr<std::vector<std::string>> List(const std::string& path) const;
  // The target of a symbolic link as stored (often relative, "../../../0000:18:00.0").
  absl::StatusOr<std::string> ReadLink(const std::string& path) const;
  bool Exists(const std::string& path) const;

  const std::string& root() const { return root_; }

 private:
  std::string Resolve(const std::string& path) const;
  std::string root_;  // without a trailing slash; empty for "/"
};

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_SYSFS_SYSFS_ROOT_H_
