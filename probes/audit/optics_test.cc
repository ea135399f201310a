// optics on fixture nodes whose netdevs the test fits with modules: the EEPROM dumps of
// tests/fixtures/make_eeprom.py, written where the audit reads them (<root>/ethtool/module/).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "probes/audit/audit.h"
#include "probes/audit/testing.h"

namespace fabricctl::probes {
namespace {

using audit_testing::EepromFixture;
using audit_testing::Fixtures;
using audit_testing::RoceH100;
using V = std::vector<std::string>;

void PlugModule(const std::string& node, const std::string& netdev, const std::string& fixture) {
  std::filesystem::create_directories(node + "/ethtool/module");
  std::ofstream(node + "/ethtool/module/" + netdev, std::ios::binary) << EepromFixture(fixture);
}

v1::AuditResult RunOptics(const AuditContext& ctx) {
  auto results = RunAudits(ctx, {"optics"});
  REQUIRE(results.ok());
  REQUIRE(results->size() == 1);
  return (*results)[0];
}

V Kinds(const v1::AuditResult& r) {
  V out;
  for (const auto& f : r.findings()) out.push_back(f.kind() + ":" + f.device());
  return out;
}

}  // namespace

TEST_CASE("optics: without a readable module the audit is skipped, saying why") {
  SysfsRoot root(Fixtures() + "/roce-h100");
  AuditContext ctx{&root, RoceH100(), {}, "n1"};
  const v1::AuditResult r = RunOptics(ctx);
  CHECK(r.outcome() == v1::AUDIT_SKIPPED);
  // The physical netdevs (a `device` link): the RoCE ports', not lo's.
  CHECK(r.reason() ==
        "no transceiver module readable: ens0np0, ens1np0, ens2np0, ens3np0, ens4np0, ens5np0, "
        "ens6np0, ens7np0: no module EEPROM (no file under ethtool/module/)");
}

TEST_CASE("optics: healthy modules pass; a dark lane is an alarm, a hot module a warning") {
  const std::string node = Fixtures() + "/roce-h100-counters";  // a healthy copy to edit
  for (int i = 0; i < 8; ++i) {
    PlugModule(node, "ens" + std::to_string(i) + "np0",
               i < 4 ? "qsfp28-healthy" : "cmis-osfp-healthy");
  }
  SysfsRoot root(node);
  AuditContext ctx{&root, RoceH100(), {}, "n1"};
  const v1::AuditResult healthy = RunOptics(ctx);
  CHECK(healthy.outcome() == v1::AUDIT_RAN);
  CHECK(healthy.findings_size() == 0);
  CHECK(healthy.observed().at("ens0np0") == "QSFP28 (SFF-8636), 4 lanes");
  CHECK(healthy.observed().at("ens0np0 temperature") == "35.50 C");
  CHECK(healthy.observed().at("ens0np0 rx_power") == "0.9000 0.8000 0.8500 0.9500 mW");
  CHECK(healthy.observed().at("ens0np0 tx_bias") == "7.500 7.400 7.600 7.500 mA");
  CHECK(healthy.observed().at("ens4np0") == "OSFP (CMIS), 8 lanes");
  CHECK(healthy.observed().at("ens4np0 vcc") == "3.2800 V");

  PlugModule(node, "ens2np0", "qsfp28-rx-low-alarm");
  PlugModule(node, "ens5np0", "cmis-lane3-rx-alarm");
  PlugModule(node, "ens6np0", "qsfp28-hot-warning");
  const v1::AuditResult faulty = RunOptics(ctx);
  REQUIRE(Kinds(faulty) ==
          V{"optics_alarm:mlx5_2", "optics_alarm:mlx5_5", "optics_warning:mlx5_6"});
  const v1::Finding& dark = faulty.findings(0);
  CHECK(dark.severity() == v1::SEVERITY_CRITICAL);
  CHECK(dark.action() == v1::ACTION_INVESTIGATE);
  CHECK(dark.port() == 1);
  CHECK(dark.detail() ==
        "n1: ens2np0 (mlx5_2:1): QSFP28 rx_power lane 3 0.0200 mW, below the module's low alarm "
        "threshold 0.0500 mW");
  CHECK(dark.evidence().at("netdev") == "ens2np0");
  CHECK(dark.evidence().at("monitor") == "rx_power");
  CHECK(dark.evidence().at("lane") == "3");
  CHECK(dark.evidence().at("value") == "0.0200");
  CHECK(dark.evidence().at("threshold") == "0.0500");
  CHECK(dark.evidence().at("limit") == "low_alarm");
  CHECK(faulty.findings(1).evidence().at("value") == "0.0100");
  const v1::Finding& hot = faulty.findings(2);
  CHECK(hot.severity() == v1::SEVERITY_WARNING);
  CHECK(hot.detail() ==
        "n1: ens6np0 (mlx5_6:1): QSFP28 temperature 72.00 C, above the module's high warning "
        "threshold 70.00 C");
  CHECK(hot.evidence().at("lane") == "0");
}

TEST_CASE("optics: the module_eeprom seam; netdevs without a module are observed, not judged") {
  SysfsRoot root(Fixtures() + "/roce-h100");
  AuditContext ctx{&root, RoceH100(), {}, "n1"};
  ctx.module_eeprom = [](const std::string& dev) -> absl::StatusOr<std::string> {
    if (dev == "ens3np0") return EepromFixture("cmis-lane3-rx-alarm");
    if (dev == "ens1np0") return std::string(1, '\x03') + std::string(511, '\0');  // an SFP
    return absl::NotFoundError("no module EEPROM (the driver has no module EEPROM access)");
  };
  const v1::AuditResult r = RunOptics(ctx);
  CHECK(r.outcome() == v1::AUDIT_RAN);
  CHECK(Kinds(r) == V{"optics_alarm:mlx5_3"});
  CHECK(r.observed().at("ens0np0") == "no module EEPROM (the driver has no module EEPROM access)");
  CHECK(r.observed().at("ens1np0").rfind("module identifier 0x03 (SFP, SFF-8472)", 0) == 0);
  CHECK(r.observed().at("ens3np0") == "OSFP (CMIS), 8 lanes");
  CHECK(r.observed().at("ens3np0 rx_power") ==
        "1.0000 0.8000 0.0100 0.9000 1.2000 1.0000 0.9500 1.0500 mW");
}

}  // namespace fabricctl::probes
