#include "base/process.h"

#include <catch2/catch.hpp>

namespace fabricctl {

TEST_CASE("A duration flag takes a bare number as seconds, as iperf3's -t does") {
  CHECK(*ParsePositiveDuration("4", "--duration") == absl::Seconds(4));
  CHECK(*ParsePositiveDuration("0.5", "--duration") == absl::Milliseconds(500));
  CHECK(*ParsePositiveDuration("500ms", "--duration") == absl::Milliseconds(500));
  CHECK(*ParsePositiveDuration("2m", "--duration") == absl::Minutes(2));
  for (const char* bad : {"", "0", "-1", "4x", "ms", "1.2.3"}) {
    INFO(bad);
    auto d = ParsePositiveDuration(bad, "--duration");
    REQUIRE_FALSE(d.ok());
    CHECK(std::string(d.status().message()).rfind("--duration: '", 0) == 0);
  }
}

}  // namespace fabricctl
