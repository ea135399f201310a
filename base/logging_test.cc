#include "base/logging.h"

#include <catch2/catch.hpp>

namespace fabricctl {

TEST_CASE("JsonEscape escapes quotes, backslashes and control characters") {
  CHECK(JsonEscape("plain") == "plain");
  CHECK(JsonEscape("a\"b\\c") == "a\\\"b\\\\c");
  CHECK(JsonEscape("line\nnext\ttab") == "line\\nnext\\ttab");
  CHECK(JsonEscape(std::string("\x01", 1)) == "\\u0001");
}

TEST_CASE("SetupLogging rejects unknown levels and formats by flag name") {
  LoggingOptions bad_level;
  bad_level.level = "verbose";
  auto status = SetupLogging(bad_level);
  REQUIRE_FALSE(status.ok());
  CHECK(std::string(status.message()).find("--log-level") != std::string::npos);

  LoggingOptions bad_format;
  bad_format.format = "xml";
  status = SetupLogging(bad_format);
  REQUIRE_FALSE(status.ok());
  CHECK(std::string(status.message()).find("--log-format") != std::string::npos);

  LoggingOptions json;
  json.format = "json";
  json.level = "debug";
  REQUIRE(SetupLogging(json).ok());
  CHECK(Logger("test")->level() == spdlog::level::debug);
}

}  // namespace fabricctl
