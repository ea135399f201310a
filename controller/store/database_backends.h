#ifndef FABRICCTL_CONTROLLER_STORE_DATABASE_BACKENDS_H_
#define FABRICCTL_CONTROLLER_STORE_DATABASE_BACKENDS_H_

// The two backends of Database; Database::Open chooses. Not for use elsewhere.
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "controller/store/database.h"

namespace fabricctl::controller {

absl::StatusOr<std::unique_ptr<Database>> OpenSqlite(const std::string& path);
absl::StatusOr<std::unique_ptr<Database>> OpenPostgres(const std::string& url,
                                                       const std::string& password);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_STORE_DATABASE_BACKENDS_H_
