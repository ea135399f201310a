#ifndef FABRICCTL_CLI_CONTROLLER_CLIENT_H_
#define FABRICCTL_CLI_CONTROLLER_CLIENT_H_

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/tls.h"
#include "proto/controller.grpc.pb.h"

namespace fabricctl::cli {

// Where and how fabricctl reaches the controller.
struct ControllerTarget {
  // --controller (or $FABRICCTL_CONTROLLER): HOST:PORT, or a list of them separated by commas
  // (a controller and its standby), tried in turn.
  std::string address = "127.0.0.1:7400";
  absl::Duration timeout = absl::Seconds(5);  // deadline of every RPC
  TlsOptions tls;
};

// The largest message fabricctl takes from the controller (reports and history come in parts
// far below it).
inline constexpr int kMaxReceiveBytes = 64 << 20;

// A stub for the controller (of a list, the first that takes a connection); transport
// security decided as for the daemons (mTLS, or plain text on loopback / with --insecure).
absl::StatusOr<std::unique_ptr<v1::ControllerService::Stub>> ConnectController(
    const ControllerTarget& target);

// A deadline `timeout` from now, for grpc::ClientContext::set_deadline.
std::chrono::system_clock::time_point DeadlineAfter(absl::Duration timeout);

// "controller 127.0.0.1:7400 unreachable: connection refused (deadline 5s)" and the like:
// a failed call turned into one line naming the controller and the cause. A controller that
// answered but whose TLS handshake failed (its certificate not signed by the cluster's CA, or
// ours refused by it) is not unreachable: that error carries IsHandshakeRefused.
absl::Status DescribeRpcFailure(const ControllerTarget& target, const grpc::Status& status);

// Whether a failed connection is a handshake something at the address answered and that
// failed: certificate verification, a handshake the server closed (it refused our
// certificate, or speaks no TLS), ALPN. Connection refused, timed out, no route, no name:
// nothing answered.
bool HandshakeFailed(const grpc::Status& status);

// Whether `status` (from DescribeRpcFailure or ConnectController) is a refused handshake.
bool IsHandshakeRefused(const absl::Status& status);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_CONTROLLER_CLIENT_H_
