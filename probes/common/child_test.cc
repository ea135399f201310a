#include "probes/common/child.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>

#include "absl/time/clock.h"

namespace fabricctl::probes {

TEST_CASE("The child's answer comes back, errors included") {
  auto ok = RunInChild([]() -> absl::StatusOr<std::string> { return std::string("a\\0b", 3); },
                       absl::Seconds(10));
  REQUIRE(ok.ok());
  CHECK(*ok == std::string("a\\0b", 3));
  auto refused = RunInChild(
      []() -> absl::StatusOr<std::string> { return absl::NotFoundError("no libcuda.so.1"); },
      absl::Seconds(10));
  CHECK(absl::IsNotFound(refused.status()));
  CHECK(refused.status().message() == "no libcuda.so.1");
}

TEST_CASE("A hung child is killed by the watchdog; a crashed one is reported") {
  absl::Time start = absl::Now();
  auto hung = RunInChild(
      []() -> absl::StatusOr<std::string> {
        for (;;) ::pause();
      },
      absl::Milliseconds(300));
  CHECK(absl::IsDeadlineExceeded(hung.status()));
  CHECK(absl::Now() - start < absl::Seconds(5));
  auto crashed = RunInChild(
      []() -> absl::StatusOr<std::string> {
        std::raise(SIGSEGV);
        return std::string();
      },
      absl::Seconds(10));
  CHECK(absl::IsInternal(crashed.status()));
  CHECK(std::string(crashed.status().message()).find("signal 11") != std::string::npos);
}

TEST_CASE("A held child stays alive after answering until it is released") {
  auto held =
      HeldChild::Start([]() -> absl::StatusOr<std::string> { return std::to_string(::getpid()); },
                       absl::Seconds(10));
  REQUIRE(held.ok());
  const pid_t pid = std::stoi(held->answer());
  CHECK(held->running());
  ::usleep(100 * 1000);
  CHECK(::kill(pid, 0) == 0);  // still there after its answer
  { HeldChild gone = *std::move(held); }
  CHECK(::kill(pid, 0) != 0);  // killed and reaped: no such process

  auto refused = HeldChild::Start(
      []() -> absl::StatusOr<std::string> { return absl::NotFoundError("no libnccl.so.2"); },
      absl::Seconds(10));
  CHECK(absl::IsNotFound(refused.status()));
  auto hung = HeldChild::Start(
      []() -> absl::StatusOr<std::string> {
        for (;;) ::pause();
      },
      absl::Milliseconds(300));
  CHECK(absl::IsDeadlineExceeded(hung.status()));
}

}  // namespace fabricctl::probes
