// Rails against each other (slow_rail.h): a rail whose every NIC is slow is named, its hosts
// are not; noise, a lone rail and rails of different rates name nothing.
#include "controller/verdict/slow_rail.h"

#include "base/config.h"
#include "catch2/catch.hpp"

namespace fabricctl::controller {
namespace {

RailFigure Rail(const std::string& name, double typical, double nominal = 400,
                double spread = 0.02) {
  RailFigure r;
  r.rail = name;
  r.netdev = "eth-" + name;
  r.typical_gbps = typical;
  r.log_spread = spread;
  r.nominal_gbps = nominal;
  return r;
}

const v1::Thresholds& Defaults() {
  static const v1::Thresholds t = DefaultConfig().thresholds();
  return t;
}

TEST_CASE("a rail at a third of the others' rate is slow_rail; nobody is drained for it") {
  for (int rails : {2, 4, 8}) {
    INFO(rails << " rails");
    std::vector<RailFigure> figures;
    for (int r = 0; r < rails; ++r)
      figures.push_back(Rail("rail" + std::to_string(r), r == 1 ? 120 : 370 + r));
    const RailComparison c = CompareRails(figures, Defaults());
    REQUIRE(c.findings.size() == 1);
    const v1::Finding& f = c.findings[0];
    CHECK(f.kind() == "slow_rail");
    CHECK(f.rail() == "rail1");
    CHECK(f.device() == "eth-rail1");
    CHECK(f.node().empty());
    CHECK(f.action() == v1::ACTION_INVESTIGATE);
    CHECK(f.evidence().at("rails").find("rail0") != std::string::npos);
    REQUIRE(c.summaries.size() == static_cast<size_t>(rails));
    for (const auto& s : c.summaries) CHECK(s.not_compared().empty());
  }
}

TEST_CASE("half the rails slow: each of them is named") {
  const RailComparison c = CompareRails(
      {Rail("rail0", 390), Rail("rail1", 130), Rail("rail2", 392), Rail("rail3", 128)}, Defaults());
  REQUIRE(c.findings.size() == 2);
  CHECK(c.findings[0].rail() == "rail1");
  CHECK(c.findings[1].rail() == "rail3");
}

TEST_CASE("rails within noise, or a deficit smaller than min_effect, name nothing") {
  CHECK(CompareRails({Rail("rail0", 390), Rail("rail1", 350), Rail("rail2", 385)}, Defaults())
            .findings.empty());
  // 25 % below, but the rails' own pairs scatter by 30 %: not beyond their noise.
  CHECK(CompareRails({Rail("rail0", 400, 400, 0.3), Rail("rail1", 300, 400, 0.3)}, Defaults())
            .findings.empty());
}

TEST_CASE("rails whose NICs report other rates are not compared, and say why") {
  const RailComparison c = CompareRails(
      {Rail("rail0", 390, 400), Rail("rail1", 190, 200), Rail("rail2", 388, 400)}, Defaults());
  CHECK(c.findings.empty());
  REQUIRE(c.summaries.size() == 3);
  CHECK(c.summaries[1].not_compared().find("different rates") != std::string::npos);
  CHECK(c.summaries[0].not_compared().empty());
  // A lone rail of its rate has nothing to be compared with.
  const RailComparison lone = CompareRails({Rail("rail0", 390), Rail("rail1", 100, 0)}, Defaults());
  CHECK(lone.findings.size() == 1);  // a rail that reports no rate is taken to be alike
  const RailComparison one = CompareRails({Rail("rail0", 390)}, Defaults());
  CHECK(one.findings.empty());
  CHECK(one.summaries[0].not_compared() == "no other rail of its rate to compare with");
}

}  // namespace
}  // namespace fabricctl::controller
