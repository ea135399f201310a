#include "base/utf8.h"

#include <catch2/catch.hpp>

#include "google/protobuf/util/json_util.h"
#include "proto/report.pb.h"

namespace fabricctl {
namespace {

TEST_CASE("Invalid UTF-8 becomes U+FFFD, byte by byte; valid text is untouched") {
  CHECK(ValidUtf8("plain") == "plain");
  CHECK(ValidUtf8("caf\xC3\xA9") == "caf\xC3\xA9");
  CHECK(ValidUtf8("a\xFF"
                  "b") ==
        "a\xEF\xBF\xBD"
        "b");
  CHECK(ValidUtf8("\xC3") == "\xEF\xBF\xBD");                                  // cut short
  CHECK(ValidUtf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong
  CHECK(ValidUtf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
}

TEST_CASE("A report with bytes from a log prints as JSON once sanitised") {
  v1::Report report;
  auto* f = report.add_findings();
  f->set_kind("tcp_fallback");
  (*f->mutable_evidence())["line"] = "NCCL INFO \xFF\xFE garbage";
  report.mutable_health()->add_nodes()->set_node("node-\x80");
  CHECK(SanitizeUtf8(&report) == 2);
  std::string json;
  REQUIRE(google::protobuf::util::MessageToJsonString(report, &json).ok());
  CHECK(json.find("NCCL INFO \xEF\xBF\xBD\xEF\xBF\xBD garbage") != std::string::npos);
  v1::Report back;
  REQUIRE(back.ParseFromString(report.SerializeAsString()));
  CHECK(SanitizeUtf8(&report) == 0);
}

TEST_CASE("PrintableText: no control character, no second line, nothing XML forbids") {
  CHECK(PrintableText("a\tb\nc\rd") == "a b c d");
  CHECK(PrintableText("x\x1b[2Jy") == "x\xEF\xBF\xBD[2Jy");
  CHECK(PrintableText("\x01\x7f") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(PrintableText("csi \xC2\x9B") == "csi \xEF\xBF\xBD");  // U+009B, a one-byte CSI
  CHECK(PrintableText("\xEF\xBF\xBE\xEF\xBF\xBF") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(PrintableText("gr\xC3\xBC\xC3\x9F \xE2\x86\x92") == "gr\xC3\xBC\xC3\x9F \xE2\x86\x92");
  v1::Report report;
  report.set_source("fine");
  report.add_findings()->set_detail("bad\x1b");
  CHECK(SanitizeText(&report) == 1);
  CHECK(SanitizeText(&report) == 0);
}

}  // namespace
}  // namespace fabricctl
