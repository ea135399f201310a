#ifndef FABRICCTL_BASE_VERSION_H_
#define FABRICCTL_BASE_VERSION_H_

namespace fabricctl {

// The version of every fabricctl binary; reported by --version, in inventories and reports.
inline constexpr char kVersion[] = "0.1.0";

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_VERSION_H_
