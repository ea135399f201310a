#include "cli/controller_client.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/grpc_status.h"
#include "base/logging.h"
#include "base/net_address.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/channel_arguments.h"

namespace fabricctl::cli {

absl::StatusOr<std::unique_ptr<v1::ControllerService::Stub>> ConnectController(
    const ControllerTarget& target) {
  auto addresses = ParseHostPorts(target.address, "--controller");
  if (!addresses.ok()) return addresses.status();
  // Reports come in parts of about 1 MiB (report/chunks.h) and history in pages of about as
  // much; the receive limit leaves room for one oversized entry (a node with thousands of
  // audit lines) without letting a single message grow without bound.
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  // A sweep's call may be quiet for minutes (a long round). Pings tell a controller whose host
  // vanished (no reset ever comes) from a slow one: unanswered for 10 s, the call fails
  // UNAVAILABLE, and a Slurm prolog decides at once instead of at its sweep's deadline.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (const HostPort& address : *addresses) {
    auto security = TransportSecurity::Create(target.tls, {address.host});
    if (!security.ok()) return security.status();
    if (security->insecure_override()) {
      Logger("fabricctl")->warn("--insecure: plain text to {}", address.ToString());
    }
    channels.push_back(
        grpc::CreateCustomChannel(address.ToString(), security->ChannelCredentials(), args));
  }
  if (channels.size() == 1) return v1::ControllerService::NewStub(channels[0]);
  // A controller and its standby: the first that takes a connection is the active one (a
  // standby does not listen, so a refused connection moves on at once), each given at most a
  // few seconds.
  const absl::Duration each = std::min(target.timeout, absl::Seconds(3));
  for (const auto& channel : channels) {
    const auto deadline = DeadlineAfter(each);
    for (grpc_connectivity_state state = channel->GetState(/*try_to_connect=*/true);
         state != GRPC_CHANNEL_TRANSIENT_FAILURE && state != GRPC_CHANNEL_SHUTDOWN;
         state = channel->GetState(/*try_to_connect=*/true)) {
      if (state == GRPC_CHANNEL_READY) return v1::ControllerService::NewStub(channel);
      if (!channel->WaitForStateChange(state, deadline)) break;
    }
  }
  return absl::UnavailableError(absl::StrCat("no controller of ", target.address,
                                             " takes connections (is one of them active?)"));
}

std::chrono::system_clock::time_point DeadlineAfter(absl::Duration timeout) {
  return std::chrono::system_clock::now() + absl::ToChronoMicroseconds(timeout);
}

absl::Status DescribeRpcFailure(const ControllerTarget& target, const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE: {
      // A refused TLS handshake surfaces only as a closed socket.
      bool closed = status.error_message().find("Socket closed") != std::string::npos ||
                    status.error_message().find("handshake") != std::string::npos;
      return absl::UnavailableError(absl::StrCat(
          "controller ", target.address, " unreachable: ", status.error_message(),
          closed ? " (the connection was closed: does the controller use mutual TLS, and "
                   "did its CA sign --tls-cert?)"
                 : ""));
    }
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::DeadlineExceededError(absl::StrCat("controller ", target.address,
                                                      " did not answer within ",
                                                      absl::FormatDuration(target.timeout)));
    default:
      return absl::Status(
          FromGrpcStatus(status).code(),
          absl::StrCat("controller ", target.address, ": ", status.error_message()));
  }
}

}  // namespace fabricctl::cli
