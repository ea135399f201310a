#ifndef FABRICCTL_BASE_GRPC_STATUS_H_
#define FABRICCTL_BASE_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace fabricctl {

// absl and gRPC status codes agree one to one; these convert at the service edge only.
inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

inline absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_GRPC_STATUS_H_
