#include "base/process.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>

namespace fabricctl {

TEST_CASE("A duration flag takes a bare number as seconds, as iperf3's -t does") {
  CHECK(*ParsePositiveDuration("4", "--duration") == absl::Seconds(4));
  CHECK(*ParsePositiveDuration("0.5", "--duration") == absl::Milliseconds(500));
  CHECK(*ParsePositiveDuration("500ms", "--duration") == absl::Milliseconds(500));
  CHECK(*ParsePositiveDuration("2m", "--duration") == absl::Minutes(2));
  CHECK(*ParsePositiveDuration("7d", "--forget-after") == absl::Hours(168));
  for (const char* bad : {"", "0", "-1", "4x", "ms", "1.2.3", "d", "0d", "1dd"}) {
    INFO(bad);
    auto d = ParsePositiveDuration(bad, "--duration");
    REQUIRE_FALSE(d.ok());
    CHECK(std::string(d.status().message()).rfind("--duration: '", 0) == 0);
  }
}

}  // namespace fabricctl

namespace fabricctl {

TEST_CASE("Without --config, $FABRICCTL_CONFIG names the configuration file") {
  ::setenv("FABRICCTL_CONFIG", "/some/where.yaml", 1);
  CHECK(DefaultConfigPath() == "/some/where.yaml");
  CommonFlags flags;
  auto config = ApplyCommonFlags(&flags);
  REQUIRE_FALSE(config.ok());  // the file named is read, and its absence is an error
  CHECK(std::string(config.status().message()).find("/some/where.yaml") != std::string::npos);
  ::setenv("FABRICCTL_CONFIG", "", 1);
  struct stat st {};
  CHECK(DefaultConfigPath() == (::stat(kSystemConfigPath, &st) == 0 ? kSystemConfigPath : ""));
}

}  // namespace fabricctl
