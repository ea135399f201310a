#include "controller/database.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "controller/database_backends.h"

namespace fabricctl::controller {

bool Database::IsPostgres(const std::string& where) {
  return absl::StartsWith(where, "postgresql://") || absl::StartsWith(where, "postgres://");
}

std::string Database::Describe(const std::string& where) {
  if (!IsPostgres(where)) return where;
  const size_t scheme = where.find("://") + 3, at = where.find('@', scheme);
  const size_t colon = where.find(':', scheme);
  if (at == std::string::npos || colon == std::string::npos || colon > at) return where;
  return where.substr(0, colon) + ":***" + where.substr(at);
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(const std::string& where) {
  return IsPostgres(where) ? OpenPostgres(where) : OpenSqlite(where);
}

int64_t ColumnInt(const Database::Row& row, size_t i) {
  int64_t value = 0;
  if (i < row.size() && row[i] && absl::SimpleAtoi(*row[i], &value)) return value;
  return 0;
}

}  // namespace fabricctl::controller
