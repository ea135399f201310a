#include "controller/verdict/reference.h"

#include <catch2/catch.hpp>

#include "controller/verdict/testing.h"

namespace fabricctl::controller {
namespace {

// Nodes in `slow` send and receive at rate x 100 Gb/s, the rest at 100, with 1 % of
// deterministic noise; a pair goes at its slower end's pace.
Figure Rack(std::vector<uint32_t> slow, float rate) {
  return [slow, rate](uint32_t a, uint32_t b) {
    const bool s =
        std::count(slow.begin(), slow.end(), a) + std::count(slow.begin(), slow.end(), b) > 0;
    return (s ? 100.0f * rate : 100.0f) *
           (1 + 0.01f * static_cast<float>(static_cast<int>((a * 7 + b * 3) % 5) - 2) / 2);
  };
}

AnalysisInput WithReferences(AnalysisInput in, std::vector<uint32_t> references) {
  for (uint32_t i : references) in.nodes[i].reference = true;
  return in;
}

std::vector<std::string> Below(std::vector<uint32_t> nodes) {
  std::vector<std::string> out;
  for (uint32_t i : nodes) out.push_back("below_reference:node-" + std::to_string(i) + ":");
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("A new rack slow as a whole is below the references, though no outlier in its sweep") {
  // Eight new nodes (2-9) at 70 %, two references (0, 1): without references, nothing names them
  // (the slow nodes are the majority; the split would ask, not drain).
  const Figure rack = Rack({2, 3, 4, 5, 6, 7, 8, 9}, 0.7f);
  const AnalysisResult alone = Analyze(Sweep(10, rack));
  for (const auto& node : alone.nodes) CHECK_FALSE(node.straggler);
  const AnalysisResult judged = Analyze(WithReferences(Sweep(10, rack), {0, 1}));
  CHECK(Kinds(judged) == Below({2, 3, 4, 5, 6, 7, 8, 9}));
  const v1::Finding& f = judged.findings[0];
  CHECK(f.severity() == v1::SEVERITY_CRITICAL);
  CHECK(f.action() == v1::ACTION_DRAIN);
  CHECK(f.evidence().at("references") == "node-0,node-1");
  CHECK(std::stod(f.evidence().at("reference_gbps")) == Approx(100).epsilon(0.02));
  CHECK(judged.nodes[2].verdict == Verdict::kCritical);
  CHECK(judged.nodes[0].verdict == Verdict::kOk);
}

TEST_CASE("A healthy new rack, or one within min_effect of the references, raises nothing") {
  for (float rate : {1.0f, 0.9f}) {
    INFO("new nodes at " << rate);
    const AnalysisResult r =
        Analyze(WithReferences(Sweep(10, Rack({2, 3, 4, 5, 6, 7, 8, 9}, rate)), {0, 1}));
    CHECK(Kinds(r).empty());
  }
}

TEST_CASE("One slow node among new ones is a straggler, named once, not also below_reference") {
  const AnalysisResult r = Analyze(WithReferences(Sweep(10, Rack({6}, 0.5f)), {0, 1}));
  CHECK(Kinds(r) == std::vector<std::string>{"straggler_node:node-6:"});
}

TEST_CASE("One reference, or no node measured with two, judges nothing against references") {
  const Figure rack = Rack({1, 2, 3, 4, 5, 6, 7}, 0.6f);
  SECTION("one reference") {
    const AnalysisResult r = Analyze(WithReferences(Sweep(8, rack), {0}));
    for (const auto& f : r.findings) CHECK(f.kind() != "below_reference");
  }
  SECTION("every node a reference") {
    const AnalysisResult r = Analyze(WithReferences(Sweep(4, Rack({}, 1)), {0, 1, 2, 3}));
    CHECK(Kinds(r).empty());
  }
}

TEST_CASE("A node measured with fewer than two references is not judged, and says so") {
  const Figure rack = Rack({1, 2, 3, 4, 5, 6, 7}, 0.6f);
  const AnalysisResult r = Analyze(WithReferences(Sweep(8, rack), {0}));
  size_t not_judged = 0;
  for (const auto& f : r.findings) not_judged += f.kind() == "insufficient_data";
  CHECK(not_judged == 7);
  CHECK(r.nodes[3].verdict != Verdict::kOk);
  CHECK(r.nodes[0].verdict == Verdict::kOk);
}

TEST_CASE("References not measured together judge by their stored pass figures, from two") {
  // Six stale nodes (2-7) at 60 %, two references (0, 1) whose pair between them was not
  // measured (a pairing that left it out, or a fault of its own): no yardstick today.
  AnalysisInput in = WithReferences(Sweep(8, Rack({2, 3, 4, 5, 6, 7}, 0.6f)), {0, 1});
  in.pairs.erase(std::remove_if(in.pairs.begin(), in.pairs.end(),
                                [](const PairInput& p) { return p.client + p.server == 1; }),
                 in.pairs.end());
  auto count = [](const AnalysisResult& r, const std::string& kind) {
    return std::count_if(r.findings.begin(), r.findings.end(),
                         [&](const v1::Finding& f) { return f.kind() == kind; });
  };
  CHECK(count(Analyze(in), "insufficient_data") == 6);  // not judged
  in.nodes[0].stored_gbps = 100;
  CHECK(count(Analyze(in), "insufficient_data") == 6);  // one stored figure is no yardstick
  in.nodes[1].stored_gbps = 98;
  const AnalysisResult r = Analyze(in);
  CHECK(Kinds(r) == Below({2, 3, 4, 5, 6, 7}));
  CHECK(r.findings[0].evidence().at("yardstick") == "stored passes");
  CHECK(std::stod(r.findings[0].evidence().at("reference_gbps")) == Approx(99));
  CHECK_THAT(r.findings[0].detail(), Catch::Contains("where they last passed"));
}

TEST_CASE("References measured together are the yardstick; their stored figures are not") {
  // Stored in another era at twice today's rate: today's figures, under like conditions, judge.
  AnalysisInput in = WithReferences(Sweep(8, Rack({}, 1)), {0, 1, 2});
  for (uint32_t i : {0, 1, 2}) in.nodes[i].stored_gbps = 200;
  CHECK(Kinds(Analyze(in)).empty());
}

TEST_CASE("A sweep with no bandwidth figure judges nothing against references") {
  AnalysisInput in = WithReferences(Sweep(8, Rack({2, 3, 4, 5, 6, 7}, 0.6f)), {0, 1});
  for (PairInput& pair : in.pairs) {
    pair.forward.bw_gbps = std::nanf("");
    pair.reverse.bw_gbps = std::nanf("");
  }
  for (const auto& f : Analyze(in).findings) {
    CHECK(f.kind() != "below_reference");
    CHECK(f.kind() != "insufficient_data");
  }
}

TEST_CASE("A reference blamed as a straggler is no yardstick: the slow rack is still below") {
  // References 0, 1, 2; reference 2 at a fifth of the rate (its own fault), the new rack at 60 %.
  Figure figure = [](uint32_t a, uint32_t b) {
    auto rate = [](uint32_t i) { return i == 2 ? 0.2f : i <= 1 ? 1.0f : 0.6f; };
    return 100.0f * std::min(rate(a), rate(b)) *
           (1 + 0.01f * static_cast<float>(static_cast<int>((a * 7 + b * 3) % 5) - 2) / 2);
  };
  const AnalysisResult r = Analyze(WithReferences(Sweep(10, figure), {0, 1, 2}));
  std::vector<std::string> want = Below({3, 4, 5, 6, 7, 8, 9});
  want.push_back("straggler_node:node-2:");
  std::sort(want.begin(), want.end());
  CHECK(Kinds(r) == want);
}

TEST_CASE("A slow group of new nodes beside fast references is below them, not a fleet_split") {
  // Half the sweep slow: the split is found, and the references say which side is right.
  const Figure half = Rack({4, 5, 6, 7}, 0.33f);
  CHECK(Kinds(Analyze(Sweep(8, half))) == std::vector<std::string>{"fleet_split::"});
  CHECK(Kinds(Analyze(WithReferences(Sweep(8, half), {0, 1}))) == Below({4, 5, 6, 7}));
}

}  // namespace fabricctl::controller
