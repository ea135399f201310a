#include "controller/roles.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/config.h"
#include "base/tls.h"

namespace fabricctl::controller {
namespace {

bool Holds(const std::vector<std::string>& ids, const std::vector<std::string>& allowed) {
  return std::any_of(ids.begin(), ids.end(), [&](const std::string& id) {
    return std::find(allowed.begin(), allowed.end(), id) != allowed.end();
  });
}

}  // namespace

Roles Roles::Of(const v1::TlsConfig& tls) {
  const v1::TlsConfig defaults = DefaultConfig().tls();
  const auto& operators = tls.operator_identities().empty() ? defaults.operator_identities()
                                                            : tls.operator_identities();
  const auto& admins =
      tls.admin_identities().empty() ? defaults.admin_identities() : tls.admin_identities();
  return Roles{{operators.begin(), operators.end()}, {admins.begin(), admins.end()}};
}

grpc::Status RequireRole(const grpc::ServerContext& context, const Roles& roles, Role role,
                         const std::string& what) {
  auto auth = context.auth_context();
  if (!auth || auth->GetPeerIdentityPropertyName().empty()) return grpc::Status::OK;  // plain text
  const std::vector<std::string> ids = PeerIdentities(context);
  if (Holds(ids, roles.admins) || (role == Role::kOperator && Holds(ids, roles.operators))) {
    return grpc::Status::OK;
  }
  const bool admin = role == Role::kAdmin;
  return grpc::Status(
      grpc::StatusCode::PERMISSION_DENIED,
      absl::StrCat(
          "'", CallerOf(context), "' may not ", what, ": that takes ",
          admin ? "an administrator's" : "an operator's", " certificate (tls.",
          admin ? "admin_identities" : "operator_identities", ": ",
          absl::StrJoin(admin ? roles.admins : roles.operators, ", "),
          admin ? ""
                : absl::StrCat("; or tls.admin_identities: ", absl::StrJoin(roles.admins, ", ")),
          ")"));
}

std::string CallerOf(const grpc::ServerContext& context) {
  const std::vector<std::string> ids = PeerIdentities(context);
  return ids.empty() ? "plain text" : ids.front();
}

}  // namespace fabricctl::controller
