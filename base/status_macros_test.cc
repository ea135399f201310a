#include "base/status_macros.h"

#include <catch2/catch.hpp>
#include <string>

namespace fabricctl {
namespace {

int calls = 0;

absl::Status Fails() {
  ++calls;
  return absl::NotFoundError("gone");
}
absl::Status Works() {
  ++calls;
  return absl::OkStatus();
}
absl::StatusOr<std::string> Named(bool ok) {
  ++calls;
  if (!ok) return absl::UnavailableError("down");
  return std::string("node-1");
}

absl::Status Chain(bool ok) {
  RETURN_IF_ERROR(Works());
  ASSIGN_OR_RETURN(std::string name, Named(ok));
  if (name != "node-1") return absl::InternalError(name);
  RETURN_IF_ERROR(Fails());
  return absl::OkStatus();
}

absl::StatusOr<int> Length(bool ok) {
  std::string name;
  ASSIGN_OR_RETURN(name, Named(ok));
  return static_cast<int>(name.size());
}

TEST_CASE("RETURN_IF_ERROR and ASSIGN_OR_RETURN return the first error, evaluating each once") {
  calls = 0;
  CHECK(absl::IsNotFound(Chain(true)));
  CHECK(calls == 3);
  calls = 0;
  CHECK(absl::IsUnavailable(Chain(false)));
  CHECK(calls == 2);
  CHECK(*Length(true) == 6);
  CHECK(absl::IsUnavailable(Length(false).status()));
}

}  // namespace
}  // namespace fabricctl
