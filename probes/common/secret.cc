#include "probes/common/secret.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace fabricctl::probes {

absl::StatusOr<std::string> NewSecret() {
  std::string secret(16, '\0');
  size_t got = 0;
  while (got < secret.size()) {
    const ssize_t n = ::getrandom(secret.data() + got, secret.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::InternalError(absl::StrCat("getrandom: ", std::strerror(errno)));
    got += static_cast<size_t>(n);
  }
  return secret;
}

bool SameSecret(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace fabricctl::probes
