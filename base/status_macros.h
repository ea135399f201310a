#ifndef FABRICCTL_BASE_STATUS_MACROS_H_
#define FABRICCTL_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Error propagation in one line, as Abseil-based codebases write it (and nccl-tests' TESTCHECK):
//
//   RETURN_IF_ERROR(Write(fd, data));          // returns the Status when it is not OK
//   ASSIGN_OR_RETURN(auto fd, Connect(host));  // declares fd = *Connect(host), or returns
//
// Both evaluate their expression once. ASSIGN_OR_RETURN's left side may be a declaration or an
// existing variable; it returns the StatusOr's status converted to the function's return type
// (absl::Status or any absl::StatusOr<T>).

#define FABRICCTL_STATUS_CONCAT_INNER(a, b) a##b
#define FABRICCTL_STATUS_CONCAT(a, b) FABRICCTL_STATUS_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                                                 \
  do {                                                                        \
    if (::absl::Status fabricctl_status_ = (expr); !fabricctl_status_.ok()) { \
      return fabricctl_status_;                                               \
    }                                                                         \
  } while (false)

#define ASSIGN_OR_RETURN(lhs, expr) \
  FABRICCTL_ASSIGN_OR_RETURN_IMPL(FABRICCTL_STATUS_CONCAT(fabricctl_statusor_, __LINE__), lhs, expr)

#define FABRICCTL_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                                    \
  if (!statusor.ok()) return std::move(statusor).status();   \
  lhs = *std::move(statusor)

#endif  // FABRICCTL_BASE_STATUS_MACROS_H_
