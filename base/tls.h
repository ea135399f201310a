#ifndef FABRICCTL_BASE_TLS_H_
#define FABRICCTL_BASE_TLS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_context.h"

namespace fabricctl {

// Transport security of one process, from --tls-cert/--tls-key/--tls-ca and --insecure.
struct TlsOptions {
  std::string cert_path;  // PEM chain of this process
  std::string key_path;   // PEM private key
  std::string ca_path;    // PEM CA that signs every process of the cluster
  // Allow plain text on non-loopback addresses (a warning is logged at start).
  bool insecure = false;
};

// The loaded material and the decision, made once at start.
class TransportSecurity {
 public:
  // Decides between mutual TLS and plain text. With all three paths: mTLS (files are read
  // now, so a missing file fails at start). With none: plain text, allowed only when every
  // address in `addresses` (host parts) is loopback, or with `insecure`. Anything else is an
  // InvalidArgument naming the flag.
  static absl::StatusOr<TransportSecurity> Create(const TlsOptions& options,
                                                  const std::vector<std::string>& hosts);

  bool tls() const { return tls_; }
  // True when plain text was allowed only by --insecure (callers log a warning).
  bool insecure_override() const { return insecure_override_; }

  // Server credentials: with TLS, clients must present a certificate the CA signed.
  std::shared_ptr<grpc::ServerCredentials> ServerCredentials() const;
  // Channel credentials: with TLS, this process's certificate and the CA to verify the server.
  std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials() const;

 private:
  bool tls_ = false;
  bool insecure_override_ = false;
  std::string cert_pem_, key_pem_, ca_pem_;
};

// The identities (certificate common name and DNS/IP subject alternative names) of the peer
// of a call; empty for a plain-text peer.
std::vector<std::string> PeerIdentities(const grpc::ServerContext& context);

// OK when the call's peer is `identity` (its certificate's CN or a SAN), or when the call is
// plain text (the plain-text decision was made at start). PermissionDenied otherwise, with
// `why` after the names.
grpc::Status RequirePeerIdentity(
    const grpc::ServerContext& context, const std::string& identity,
    const std::string& why = "only the controller may run probes here");

// OK when the call's peer may act as node `name`: its certificate's CN is `name` (or, with
// `any_name`, its CN or a SAN is), or the call is plain text. PermissionDenied otherwise.
grpc::Status RequireNodeName(const grpc::ServerContext& context, const std::string& name,
                             bool any_name, const std::string& why);

// The largest configuration or TLS file read (ReadFileToString).
inline constexpr size_t kMaxInputFileBytes = 4 << 20;

// Reads a whole regular file of at most kMaxInputFileBytes (ReadBoundedFile); `what` names the
// flag in the error.
absl::StatusOr<std::string> ReadFileToString(const std::string& path, const std::string& what);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_TLS_H_
