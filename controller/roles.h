#ifndef FABRICCTL_CONTROLLER_ROLES_H_
#define FABRICCTL_CONTROLLER_ROLES_H_

#include <string>
#include <vector>

#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"
#include "proto/config.pb.h"

namespace fabricctl::controller {

// Who may call what on the controller, by the identities (CN or SAN) of the caller's
// certificate under mutual TLS:
//
//   node           any certificate the CA signed: Register and Heartbeat under a name the
//                  certificate carries, nothing else
//   operator       tls.operator_identities: also list nodes, start and queue sweeps, record
//                  acceptances, read reports and history
//   administrator  tls.admin_identities: also remove nodes and prune the history
//
// An administrator is an operator too. On plain text (allowed only on loopback or with
// --insecure) every call is allowed: there is no identity to check.
enum class Role { kOperator, kAdmin };

struct Roles {
  std::vector<std::string> operators;
  std::vector<std::string> admins;
  // The configuration's (its defaults where it gives none).
  static Roles Of(const v1::TlsConfig& tls);
};

// OK when the call's caller holds `role` (or the call is plain text); PERMISSION_DENIED
// otherwise, naming the caller's identity, `what` it tried and the role and identities that may.
grpc::Status RequireRole(const grpc::ServerContext& context, const Roles& roles, Role role,
                         const std::string& what);

// The caller's identity as queues and logs name it: its certificate's first name (the CN), or
// "plain text" on a channel without one.
std::string CallerOf(const grpc::ServerContext& context);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_ROLES_H_
