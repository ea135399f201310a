#include "report/chunks.h"

#include <string>
#include <vector>

#include "catch2/catch.hpp"

namespace fabricctl::report {
namespace {

v1::Report Big(int nodes, int pairs, int findings) {
  v1::Report report;
  report.set_schema("fabricctl.report/v1");
  report.mutable_summary()->add_drain("n1");
  for (int i = 0; i < findings; ++i) {
    v1::Finding* f = report.add_findings();
    f->set_kind("slow_link");
    f->set_node("n" + std::to_string(i));
    f->set_detail(std::string(200, 'd'));
  }
  for (int i = 0; i < nodes; ++i)
    report.mutable_health()->add_nodes()->set_node("n" + std::to_string(i));
  for (int i = 0; i < pairs; ++i) {
    v1::PairHealth* p = report.mutable_health()->add_pairs();
    p->set_node("n" + std::to_string(i));
    p->set_peer("m" + std::to_string(i));
    p->set_bw_gbps(i);
  }
  return report;
}

TEST_CASE("a report comes back whole from chunks no larger than the part size") {
  const v1::Report report = Big(3000, 20000, 500);
  std::vector<v1::ReportChunk> chunks;
  REQUIRE(SendReportChunks(report, 64 << 10, [&](v1::ReportChunk c) {
    chunks.push_back(std::move(c));
    return true;
  }));
  REQUIRE(chunks.size() > 10);
  CHECK(chunks.front().has_head());
  CHECK(chunks.front().head().findings_size() == 0);
  CHECK(chunks.front().head().summary().drain(0) == "n1");  // the verdict comes first
  CHECK(chunks.back().has_end());
  for (size_t i = 1; i + 1 < chunks.size(); ++i) CHECK(chunks[i].ByteSizeLong() < (64 << 10) + 256);
  ReportAssembler assembler;
  for (auto& c : chunks) REQUIRE(assembler.Add(c).ok());
  auto back = assembler.Take();
  REQUIRE(back.ok());
  CHECK(back->SerializeAsString() == report.SerializeAsString());
}

TEST_CASE("a stream cut short or out of order gives no report") {
  std::vector<v1::ReportChunk> chunks;
  SendReportChunks(Big(10, 100, 5), 1024, [&](v1::ReportChunk c) {
    chunks.push_back(std::move(c));
    return true;
  });
  {
    ReportAssembler a;
    for (size_t i = 0; i + 1 < chunks.size(); ++i) REQUIRE(a.Add(chunks[i]).ok());
    CHECK(!a.complete());
    CHECK(absl::IsDataLoss(a.Take().status()));
  }
  {
    ReportAssembler a;
    CHECK(absl::IsFailedPrecondition(a.Add(chunks[1])));  // a part before the head
  }
  {
    ReportAssembler a;
    REQUIRE(a.Add(chunks[0]).ok());
    CHECK(absl::IsFailedPrecondition(a.Add(chunks.back())));  // the end counts what never came
  }
}

TEST_CASE("a broken stream stops the sending at once") {
  int writes = 0;
  CHECK(!SendReportChunks(Big(100, 1000, 10), 1024, [&](v1::ReportChunk) { return ++writes < 3; }));
  CHECK(writes == 3);
}

}  // namespace
}  // namespace fabricctl::report
