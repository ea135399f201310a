#ifndef FABRICCTL_PROBES_AUDIT_TESTING_H_
#define FABRICCTL_PROBES_AUDIT_TESTING_H_

// What the audits' tests share: the fixture nodes of tests/fixtures/make_sysfs.py, written
// afresh once per test binary, the RoCE H100 expectations of configs/roce-h100.yaml, and the
// module EEPROM dumps of tests/fixtures/make_eeprom.py.

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "probes/audit/audit.h"
#include "tests/subprocess.h"

namespace fabricctl::probes::audit_testing {

// The directory holding one fixture tree per node.
inline std::string Fixtures() {
  static const std::string dir = [] {
    std::string out = fabricctl::testing::TempDir("sysfs");
    auto made =
        fabricctl::testing::RunCommand({"/usr/bin/python3", "tests/fixtures/make_sysfs.py", out});
    REQUIRE(made.exit_code == 0);
    return out;
  }();
  return dir;
}

inline v1::Expectations RoceH100() {
  v1::Expectations e;
  e.set_link_rate_gbps(400);
  e.set_netdev_mtu(9000);
  e.set_roce_mtu(4096);
  e.set_pcie_speed_gts(32);
  e.set_gpudirect(true);
  e.set_pfc_priority(3);
  e.set_ecn(true);
  e.set_dscp_trust(true);
  return e;
}

// "kind:device" of every finding of every audit on fixture `node`, sorted.
inline std::vector<std::string> Findings(const std::string& node, v1::Expectations expect,
                                         std::map<std::string, std::string> env = {}) {
  SysfsRoot root(Fixtures() + "/" + node);
  AuditContext ctx;
  ctx.root = &root;
  ctx.expect = expect;
  ctx.environment = std::move(env);
  ctx.node = node;
  auto results = RunAudits(ctx, {});
  REQUIRE(results.ok());
  std::vector<std::string> out;
  for (const auto& r : *results) {
    for (const auto& f : r.findings()) out.push_back(f.kind() + ":" + f.device());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The bytes of a module EEPROM fixture of tests/fixtures/make_eeprom.py, kept as hex text in
// tests/fixtures/eeprom/<name>.hex ("# " comments, then lines of "offset: byte byte ...").
inline std::string EepromFixture(const std::string& name) {
  const std::string path = "tests/fixtures/eeprom/" + name + ".hex";
  std::ifstream in(path);
  INFO(path);
  REQUIRE(in.good());
  std::string bytes, line, word;
  while (std::getline(in, line)) {
    std::istringstream words(line.substr(0, line.find('#')));
    while (words >> word) {
      if (word.back() != ':') bytes += static_cast<char>(std::stoi(word, nullptr, 16));
    }
  }
  return bytes;
}

}  // namespace fabricctl::probes::audit_testing

#endif  // FABRICCTL_PROBES_AUDIT_TESTING_H_
