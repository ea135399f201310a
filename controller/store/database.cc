#include "controller/store/database.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "controller/store/database_backends.h"

namespace fabricctl::controller {

bool Database::IsPostgres(const std::string& where) {
  return absl::StartsWith(where, "postgresql://") || absl::StartsWith(where, "postgres://");
}

namespace {

// The passwords a URL carries: user:PASSWORD@host, and ?password=... or &sslpassword=...
std::vector<std::string> Passwords(const std::string& where) {
  std::vector<std::string> out;
  const size_t scheme = where.find("://");
  if (scheme == std::string::npos) return out;
  const size_t start = scheme + 3, at = where.find('@', start), colon = where.find(':', start);
  const size_t slash = where.find('/', start);
  if (at != std::string::npos && colon != std::string::npos && colon < at &&
      (slash == std::string::npos || at < slash)) {
    out.push_back(where.substr(colon + 1, at - colon - 1));
  }
  for (const char* key : {"password=", "sslpassword="}) {
    for (size_t k = where.find(key); k != std::string::npos; k = where.find(key, k + 1)) {
      if (k > 0 && where[k - 1] != '?' && where[k - 1] != '&') continue;
      const size_t begin = k + std::string(key).size(), end = where.find('&', begin);
      out.push_back(
          where.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    }
  }
  return out;
}

}  // namespace

std::string Database::Scrub(const std::string& where, std::string message) {
  for (const std::string& secret : Passwords(where)) {
    if (secret.empty()) continue;
    for (size_t k = message.find(secret); k != std::string::npos; k = message.find(secret, k + 3)) {
      message.replace(k, secret.size(), "***");
    }
  }
  return message;
}

std::string Database::Describe(const std::string& where) {
  return IsPostgres(where) ? Scrub(where, where) : where;
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(const std::string& where,
                                                         const std::string& password) {
  return IsPostgres(where) ? OpenPostgres(where, password) : OpenSqlite(where);
}

absl::Status Database::RefuseInlinePassword(const std::string& where, const std::string& flag) {
  if (!IsPostgres(where) || Passwords(where).empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      flag, ": the URL ", Describe(where),
      " carries a password, which any local user can read in "
      "the process list (ps); put it in a file of mode 0600 named by --db-password-file, or in "
      "libpq's password file (PGPASSFILE, or passfile= in the URL)"));
}

int64_t ColumnInt(const Database::Row& row, size_t i) {
  int64_t value = 0;
  if (i < row.size() && row[i] && absl::SimpleAtoi(*row[i], &value)) return value;
  return 0;
}

}  // namespace fabricctl::controller
