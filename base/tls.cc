#include "base/tls.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/files.h"
#include "base/net_address.h"

namespace fabricctl {

absl::StatusOr<std::string> ReadFileToString(const std::string& path, const std::string& what) {
  return ReadBoundedFile(path, what, kMaxInputFileBytes);
}

absl::StatusOr<TransportSecurity> TransportSecurity::Create(const TlsOptions& options,
                                                            const std::vector<std::string>& hosts) {
  TransportSecurity out;
  int given = !options.cert_path.empty() + !options.key_path.empty() + !options.ca_path.empty();
  if (given == 3) {
    auto cert = ReadFileToString(options.cert_path, "--tls-cert");
    if (!cert.ok()) return cert.status();
    auto key = ReadFileToString(options.key_path, "--tls-key");
    if (!key.ok()) return key.status();
    auto ca = ReadFileToString(options.ca_path, "--tls-ca");
    if (!ca.ok()) return ca.status();
    for (const auto& [flag, pem] :
         {std::pair<const char*, const std::string*>{"--tls-cert", &*cert},
          {"--tls-key", &*key},
          {"--tls-ca", &*ca}}) {
      if (pem->find("-----BEGIN ") == std::string::npos) {
        return absl::InvalidArgumentError(absl::StrCat(flag, ": not a PEM file"));
      }
    }
    out.tls_ = true;
    out.cert_pem_ = *std::move(cert);
    out.key_pem_ = *std::move(key);
    out.ca_pem_ = *std::move(ca);
    return out;
  }
  if (given != 0) {
    return absl::InvalidArgumentError(
        "--tls-cert, --tls-key and --tls-ca go together: give all three, or none");
  }
  std::vector<std::string> remote;
  for (const auto& host : hosts) {
    if (!IsLoopbackHost(host)) remote.push_back(host);
  }
  if (!remote.empty()) {
    if (!options.insecure) {
      return absl::InvalidArgumentError(
          absl::StrCat("plain text on non-loopback address ", absl::StrJoin(remote, ", "),
                       ": give --tls-cert, --tls-key and --tls-ca, or --insecure"));
    }
    out.insecure_override_ = true;
  }
  return out;
}

std::shared_ptr<grpc::ServerCredentials> TransportSecurity::ServerCredentials() const {
  if (!tls_) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = ca_pem_;
  ssl.pem_key_cert_pairs.push_back({key_pem_, cert_pem_});
  return grpc::SslServerCredentials(ssl);
}

std::shared_ptr<grpc::ChannelCredentials> TransportSecurity::ChannelCredentials() const {
  if (!tls_) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ca_pem_;
  ssl.pem_private_key = key_pem_;
  ssl.pem_cert_chain = cert_pem_;
  return grpc::SslCredentials(ssl);
}

std::vector<std::string> PeerIdentities(const grpc::ServerContext& context) {
  std::vector<std::string> out;
  auto auth = context.auth_context();
  if (!auth || !auth->IsPeerAuthenticated()) return out;
  for (const char* property : {"x509_common_name", "x509_subject_alternative_name"}) {
    for (const auto& value : auth->FindPropertyValues(property)) {
      out.emplace_back(value.data(), value.size());
    }
  }
  return out;
}

grpc::Status RequirePeerIdentity(const grpc::ServerContext& context, const std::string& identity,
                                 const std::string& why) {
  auto auth = context.auth_context();
  if (!auth || auth->GetPeerIdentityPropertyName().empty()) {
    return grpc::Status::OK;  // plain text: permitted by the start-up decision
  }
  std::vector<std::string> ids = PeerIdentities(context);
  for (const auto& id : ids) {
    if (id == identity) return grpc::Status::OK;
  }
  return grpc::Status(
      grpc::StatusCode::PERMISSION_DENIED,
      absl::StrCat("caller '", absl::StrJoin(ids, ","), "' is not '", identity, "'; ", why));
}

grpc::Status RequireNodeName(const grpc::ServerContext& context, const std::string& name,
                             bool any_name, const std::string& why) {
  if (any_name) return RequirePeerIdentity(context, name, why);
  auto auth = context.auth_context();
  if (!auth || auth->GetPeerIdentityPropertyName().empty()) {
    return grpc::Status::OK;  // plain text: permitted by the start-up decision
  }
  std::vector<std::string> cns;
  for (const auto& value : auth->FindPropertyValues("x509_common_name")) {
    cns.emplace_back(value.data(), value.size());
  }
  for (const auto& cn : cns) {
    if (cn == name) return grpc::Status::OK;
  }
  return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                      absl::StrCat("caller's certificate name (CN) '", absl::StrJoin(cns, ","),
                                   "' is not '", name, "' (tls.node_names: cn); ", why));
}

}  // namespace fabricctl
