#include "cli/controller_client.h"

#include <algorithm>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "base/grpc_status.h"
#include "base/logging.h"
#include "base/net_address.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/channel_arguments.h"

namespace fabricctl::cli {

namespace {

constexpr char kHandshakePayload[] = "type.fabricctl/handshake_refused";

bool Has(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }

// The refused handshake, naming whose certificate was refused by whom.
absl::Status Refused(const std::string& address, const TlsOptions& tls,
                     const std::string& grpc_message) {
  const bool ours_refused = !Has(grpc_message, "certificate verify failed") &&
                            !Has(grpc_message, "CERTIFICATE_VERIFY_FAILED");
  const std::string why =
      ours_refused
          ? absl::StrCat("it closed the TLS handshake: it refused this client's certificate (",
                         tls.cert_path.empty() ? "none: plain text" : tls.cert_path,
                         ": not signed by its CA, expired, or from a CA rotated without it), or "
                         "it speaks no TLS")
          : absl::StrCat("it presented a certificate the cluster's CA (",
                         tls.ca_path.empty() ? "none" : tls.ca_path,
                         ") did not sign: an impostor at the controller's address, or a "
                         "controller with another CA's certificate");
  absl::Status status = absl::UnavailableError(
      absl::StrCat("controller ", address, " answered, but the TLS handshake failed: ", why, " (",
                   grpc_message, ")"));
  status.SetPayload(kHandshakePayload, absl::Cord("1"));
  return status;
}

}  // namespace

bool HandshakeFailed(const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return false;
  const std::string& m = status.error_message();
  // Only while connecting: a socket closed in the middle of a call is a controller gone.
  if (!Has(m, "failed to connect")) return false;
  for (const char* nothing :
       {"Connection refused", "Connection timed out", "No route to host", "Network is unreachable",
        "Host is unreachable", "DNS resolution", "Name or service not known"}) {
    if (Has(m, nothing)) return false;
  }
  for (const char* answered :
       {"Ssl handshake", "SSL_ERROR", "andshake", "certificate", "Socket closed", "ALPN", "alpn"}) {
    if (Has(m, answered)) return true;
  }
  return false;
}

bool IsHandshakeRefused(const absl::Status& status) {
  return status.GetPayload(kHandshakePayload).has_value();
}

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
  // None took a connection: a controller that answered and failed the handshake is not down.
  for (size_t i = 0; i < channels.size(); ++i) {
    auto stub = v1::ControllerService::NewStub(channels[i]);
    grpc::ClientContext context;
    context.set_deadline(DeadlineAfter(each));
    v1::GetReportRequest ask;
    ask.set_sweep_id(-1);  // refused by any controller that reads it: the connection is all
    v1::Report ignored;
    grpc::Status status = stub->GetReport(&context, ask, &ignored);
    if (HandshakeFailed(status))
      return Refused((*addresses)[i].ToString(), target.tls, status.error_message());
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
      if (HandshakeFailed(status))
        return Refused(target.address, target.tls, status.error_message());
      return absl::UnavailableError(
          absl::StrCat("controller ", target.address, " unreachable: ", status.error_message()));
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
