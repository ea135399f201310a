// The module EEPROM parser over the dumps of tests/fixtures/make_eeprom.py (each fixture's header
// lists the fields it was written from).
#include "probes/audit/module_eeprom.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "probes/audit/testing.h"

namespace fabricctl::probes {
namespace {

using audit_testing::EepromFixture;
using V = std::vector<std::string>;

ModuleReading Parse(const std::string& fixture) {
  auto reading = ParseModuleEeprom(EepromFixture(fixture));
  INFO(fixture << ": " << reading.status());
  REQUIRE(reading.ok());
  return *reading;
}

const Monitor& Find(const ModuleReading& r, const std::string& name, int lane) {
  for (const Monitor& m : r.monitors) {
    if (m.name == name && m.lane == lane) return m;
  }
  FAIL("no " << name << " lane " << lane);
  return r.monitors.front();
}

void CheckLimits(const Monitor& m, double high_alarm, double low_alarm, double high_warning,
                 double low_warning) {
  INFO(m.name << " lane " << m.lane);
  REQUIRE(m.thresholds.has_value());
  CHECK(m.thresholds->high_alarm == Approx(high_alarm));
  CHECK(m.thresholds->low_alarm == Approx(low_alarm));
  CHECK(m.thresholds->high_warning == Approx(high_warning));
  CHECK(m.thresholds->low_warning == Approx(low_warning));
}

// "rx_power 3 low_alarm" for every monitor beyond a threshold.
V Crossed(const ModuleReading& r) {
  V out;
  for (const Monitor& m : r.monitors) {
    const Judgement j = Judge(m);
    if (j.level != Judgement::kNone) {
      out.push_back(m.name + " " + std::to_string(m.lane) + " " + j.limit);
    }
  }
  return out;
}

TEST_CASE("SFF-8636: a healthy QSFP28's monitors and its thresholds in page 03h") {
  const ModuleReading r = Parse("qsfp28-healthy");
  CHECK(r.standard == "SFF-8636");
  CHECK(r.form_factor == "QSFP28");
  CHECK(r.identifier == 0x11);
  CHECK(r.lanes == 4);
  CHECK(r.missing.empty());
  CHECK(r.monitors.size() == 2 + 3 * 4);
  const Monitor& temperature = Find(r, "temperature", 0);
  CHECK(temperature.value == Approx(35.5));
  CHECK(temperature.unit == "C");
  CheckLimits(temperature, 75, -5, 70, 0);
  CHECK(Find(r, "vcc", 0).value == Approx(3.3));
  CheckLimits(Find(r, "vcc", 0), 3.63, 2.97, 3.465, 3.135);
  const Monitor& rx2 = Find(r, "rx_power", 2);
  CHECK(rx2.value == Approx(0.8));
  CHECK(rx2.unit == "mW");
  CheckLimits(rx2, 3.0, 0.05, 2.0, 0.1);
  CHECK(Find(r, "tx_power", 4).value == Approx(1.2));
  CheckLimits(Find(r, "tx_power", 4), 3.0, 0.1, 2.0, 0.2);
  CHECK(Find(r, "tx_bias", 1).value == Approx(7.5));
  CHECK(Find(r, "tx_bias", 1).unit == "mA");
  CheckLimits(Find(r, "tx_bias", 3), 15, 2, 13, 3);
  CHECK(Crossed(r).empty());
}

TEST_CASE("SFF-8636: a dark lane is an alarm, a hot module a warning") {
  const ModuleReading dark = Parse("qsfp28-rx-low-alarm");
  CHECK(Find(dark, "rx_power", 3).value == Approx(0.02));
  CHECK(Crossed(dark) == V{"rx_power 3 low_alarm"});
  const Judgement j = Judge(Find(dark, "rx_power", 3));
  CHECK(j.level == Judgement::kAlarm);
  CHECK(j.threshold == Approx(0.05));
  const ModuleReading hot = Parse("qsfp28-hot-warning");
  CHECK(Find(hot, "temperature", 0).value == Approx(72.0));
  CHECK(Crossed(hot) == V{"temperature 0 high_warning"});
  CHECK(Judge(Find(hot, "temperature", 0)).level == Judgement::kWarning);
  CHECK(Judge(Find(hot, "temperature", 0)).threshold == Approx(70.0));
}

TEST_CASE("SFF-8636: without page 03h, or with it all zero, the monitors have no thresholds") {
  const ModuleReading page0 = Parse("qsfp28-page0-only");
  CHECK(page0.missing == V{"page 03h (thresholds): the dump ends at 256 bytes"});
  CHECK(page0.monitors.size() == 14);
  CHECK(Find(page0, "rx_power", 2).value == Approx(0.8));
  for (const Monitor& m : page0.monitors) CHECK_FALSE(m.thresholds.has_value());
  CHECK(Crossed(page0).empty());
  const ModuleReading zero = Parse("qsfp28-no-thresholds");
  CHECK(zero.missing.empty());
  for (const Monitor& m : zero.monitors) CHECK_FALSE(m.thresholds.has_value());
  // Flat_mem (byte 2 bit 2): whatever lies where page 03h would be is not the module's.
  std::string flat = EepromFixture("qsfp28-rx-low-alarm");
  flat[2] = 0x04;
  auto r = ParseModuleEeprom(flat);
  REQUIRE(r.ok());
  CHECK(r->missing == V{"page 03h (thresholds): flat memory, the module has no upper pages"});
  CHECK(Crossed(*r).empty());
}

TEST_CASE("SFF-8636: Tx power only where the module measures it, nothing without diagnostics") {
  std::string dump = EepromFixture("qsfp28-healthy");
  dump[220] = 0x08;  // byte 220 bit 2 clear: Tx power not measured
  auto r = ParseModuleEeprom(dump);
  REQUIRE(r.ok());
  CHECK(r->monitors.size() == 2 + 2 * 4);
  CHECK(r->missing == V{"tx_power: not measured by this module (page 00h byte 220)"});
  dump[22] = dump[23] = 0;  // a temperature of 0x0000: a passive cable
  r = ParseModuleEeprom(dump);
  REQUIRE(r.ok());
  CHECK(r->monitors.empty());
  CHECK(r->lanes == 0);
}

TEST_CASE("CMIS: a healthy OSFP's eight lanes from page 11h, thresholds from page 02h") {
  const ModuleReading r = Parse("cmis-osfp-healthy");
  CHECK(r.standard == "CMIS");
  CHECK(r.form_factor == "OSFP");
  CHECK(r.lanes == 8);
  CHECK(r.missing.empty());
  CHECK(r.monitors.size() == 2 + 3 * 8);
  CHECK(Find(r, "temperature", 0).value == Approx(45.25));
  CheckLimits(Find(r, "temperature", 0), 80, -5, 75, 0);
  CHECK(Find(r, "vcc", 0).value == Approx(3.28));
  CheckLimits(Find(r, "vcc", 0), 3.63, 2.97, 3.465, 3.135);
  CHECK(Find(r, "rx_power", 2).value == Approx(0.8));
  CHECK(Find(r, "rx_power", 8).value == Approx(1.05));
  CheckLimits(Find(r, "rx_power", 8), 4.0, 0.05, 3.0, 0.1);
  CHECK(Find(r, "tx_power", 5).value == Approx(1.2));
  CheckLimits(Find(r, "tx_power", 5), 4.0, 0.2, 3.0, 0.3);
  CHECK(Find(r, "tx_bias", 7).value == Approx(8.0));
  CheckLimits(Find(r, "tx_bias", 7), 15, 2, 13, 3);
  CHECK(Crossed(r).empty());
  CHECK(Crossed(Parse("cmis-lane3-rx-alarm")) == V{"rx_power 3 low_alarm"});
}

TEST_CASE("CMIS: an SR4 module's four media lanes and its Tx bias multiplier") {
  const ModuleReading r = Parse("cmis-qsfpdd-sr4");
  CHECK(r.form_factor == "QSFP-DD");
  CHECK(r.lanes == 4);  // 400GAUI-8 onto 4 media lanes: lanes 5-8 are dark and not judged
  CHECK(r.monitors.size() == 2 + 3 * 4);
  CHECK(Find(r, "rx_power", 4).value == Approx(0.85));
  CHECK(Find(r, "tx_bias", 4).value == Approx(10.5));  // 2625 steps of 2 uA, times 2
  CheckLimits(Find(r, "tx_bias", 1), 15, 2, 13, 3);
  CHECK(Crossed(r).empty());
}

TEST_CASE("CMIS: shorter dumps give what they hold and say what is missing") {
  const ModuleReading ioctl = Parse("cmis-osfp-ioctl-512");
  CHECK(ioctl.monitors.size() == 2);
  CHECK(ioctl.missing == V{"page 11h (lane monitors): the dump ends at 512 bytes"});
  CheckLimits(Find(ioctl, "temperature", 0), 80, -5, 75, 0);
  auto page0 = ParseModuleEeprom(EepromFixture("cmis-osfp-healthy").substr(0, 256));
  REQUIRE(page0.ok());
  CHECK(page0->missing == V{"page 01h (advertisement): the dump ends at 256 bytes",
                            "page 02h (thresholds): the dump ends at 256 bytes",
                            "page 11h (lane monitors): the dump ends at 256 bytes"});
  CHECK_FALSE(Find(*page0, "temperature", 0).thresholds.has_value());
  const ModuleReading flat = Parse("cmis-dac-flat");
  CHECK(flat.monitors.empty());
  CHECK(flat.missing == V{"monitors: flat memory, a module without diagnostics (passive copper)"});
}

TEST_CASE("Other identifiers, short and empty dumps are refused; no prefix reads past its end") {
  std::string sfp(512, '\0');
  sfp[0] = 0x03;
  auto r = ParseModuleEeprom(sfp);
  CHECK(absl::IsUnimplemented(r.status()));
  CHECK(std::string(r.status().message()).rfind("module identifier 0x03 (SFP, SFF-8472)", 0) == 0);
  CHECK(absl::IsUnimplemented(ParseModuleEeprom(std::string(1, '\x7f')).status()));
  r = ParseModuleEeprom(EepromFixture("qsfp28-healthy").substr(0, 200));
  CHECK(absl::IsInvalidArgument(r.status()));
  CHECK(r.status().message() ==
        "module EEPROM: 200 bytes, expected at least 256 (the lower page and page 00h)");
  CHECK(absl::IsInvalidArgument(ParseModuleEeprom("").status()));
  // Every prefix, and the whole with bytes after it (a driver that gives more than it should).
  for (const char* fixture : {"qsfp28-healthy", "cmis-osfp-healthy", "cmis-qsfpdd-sr4"}) {
    const std::string whole = EepromFixture(fixture);
    for (size_t n = 0; n <= whole.size() + 1; ++n) {
      auto part = ParseModuleEeprom(n <= whole.size() ? whole.substr(0, n)
                                                      : whole + std::string(300, '\xff'));
      CHECK(part.ok() == (n >= 256));
      if (!part.ok()) continue;
      for (const Monitor& m : part->monitors) CHECK((m.lane >= 0 && m.lane <= 8));
    }
  }
}

TEST_CASE("Judge: alarms before warnings, strict limits, nothing without thresholds") {
  Monitor m{"rx_power", 1, 1.0, "mW", Thresholds{3.0, 0.05, 2.0, 0.1}};
  CHECK(Judge(m).level == Judgement::kNone);
  m.value = 3.5;
  CHECK(Judge(m).level == Judgement::kAlarm);
  CHECK(Judge(m).limit == "high_alarm");
  m.value = 2.5;
  CHECK(Judge(m).limit == "high_warning");
  CHECK(Judge(m).level == Judgement::kWarning);
  m.value = 0.05;  // on the low alarm: not past it, but past the low warning
  CHECK(Judge(m).limit == "low_warning");
  m.value = 0.04;
  CHECK(Judge(m).limit == "low_alarm");
  CHECK(Judge(m).threshold == Approx(0.05));
  m.thresholds.reset();
  CHECK(Judge(m).level == Judgement::kNone);
}

}  // namespace
}  // namespace fabricctl::probes
