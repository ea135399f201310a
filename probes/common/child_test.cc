#include "probes/common/child.h"

#include <csignal>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "absl/time/clock.h"

namespace fabricctl::probes {

TEST_CASE("The child's answer comes back, errors included") {
  auto ok = RunInChild([]() -> absl::StatusOr<std::string> { return std::string("a\\0b", 3); },
                       absl::Seconds(10));
  REQUIRE(ok.ok());
  CHECK(*ok == std::string("a\\0b", 3));
  auto refused = RunInChild([]() -> absl::StatusOr<std::string> {
    return absl::NotFoundError("no libcuda.so.1");
  }, absl::Seconds(10));
  CHECK(absl::IsNotFound(refused.status()));
  CHECK(refused.status().message() == "no libcuda.so.1");
}

TEST_CASE("A hung child is killed by the watchdog; a crashed one is reported") {
  absl::Time start = absl::Now();
  auto hung = RunInChild([]() -> absl::StatusOr<std::string> {
    for (;;) ::pause();
  }, absl::Milliseconds(300));
  CHECK(absl::IsDeadlineExceeded(hung.status()));
  CHECK(absl::Now() - start < absl::Seconds(5));
  auto crashed = RunInChild([]() -> absl::StatusOr<std::string> {
    std::raise(SIGSEGV);
    return std::string();
  }, absl::Seconds(10));
  CHECK(absl::IsInternal(crashed.status()));
  CHECK(std::string(crashed.status().message()).find("signal 11") != std::string::npos);
}

}  // namespace fabricctl::probes
