// Fuzz target of the audit parsers: every parser takes every input, and each result keeps its
// invariants. Built two ways: with clang -fsanitize=fuzzer,address by scripts/fuzz.sh (libFuzzer
// drives it), and with fuzz_driver.cc into //probes/audit:parsers_fuzz_test, which replays
// seeds and random mutations of them in CI.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "probes/audit/dcb.h"
#include "probes/audit/fec_stats.h"
#include "probes/audit/module_eeprom.h"
#include "probes/audit/parsers.h"
#include "probes/gpu/nccl_log.h"
#include "probes/tcp/host_drops.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fabricctl::probes;
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (auto state = ParseNumberedState(text)) Require(!state->name.empty());
  if (auto rate = ParseRateGbps(text)) Require(*rate >= 0 && *rate <= 1e6);
  if (auto gid = ParseGid(text)) Require(gid->size() == 16);
  if (auto gts = ParsePcieSpeedGts(text)) Require(*gts > 0 && *gts <= 1000);
  (void)ParseMemlockLimit(text);
  if (auto n = ParseInteger(text)) {
    const uint32_t mtu = RoceMtuForNetdevMtu(*n);
    Require(mtu == 0 || mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096);
  }
  if (auto dcb = ParseDcbIeeeReply(text); dcb.ok()) {
    // Each app entry is an attribute of its own (a 4-byte header and 4 bytes): none invented.
    Require(dcb->apps.size() * 8 <= text.size());
  }
  (void)ParseAcsControl(text);
  if (auto fec = ParseFecReply(text); fec.ok()) {
    // Each count is a u64 in an attribute of its own (12 bytes) within a nest (4): none invented.
    size_t counts = 0;
    for (const auto* count : {&fec->corrected, &fec->uncorrected, &fec->corrected_bits}) {
      counts += count->has_value() ? 1 : 0;
    }
    Require(counts == 0 || 4 + 12 * counts <= text.size());
  }
  if (auto module = ParseModuleEeprom(text); module.ok()) {
    // Temperature and Vcc, then at most three monitors of 8 lanes; every value from a 16-bit
    // word, so never NaN, whatever the bytes.
    Require(module->lanes >= 0 && module->lanes <= 8);
    Require(module->monitors.size() <= 2 + 3 * static_cast<size_t>(module->lanes));
    for (const Monitor& m : module->monitors) {
      Require(m.lane >= 0 && m.lane <= module->lanes);
      Require(!std::isnan(m.value));
      if (m.thresholds) {
        Require(!std::isnan(m.thresholds->high_alarm) && !std::isnan(m.thresholds->low_alarm) &&
                !std::isnan(m.thresholds->high_warning) && !std::isnan(m.thresholds->low_warning));
      }
      (void)Judge(m);
    }
  }
  NcclLog log = ParseNcclLog(text);
  Require(log.gdr_channels + log.socket_channels <= log.net_channels);
  (void)NcclLogFindings(log, "fuzz");
  for (const auto& [name, value] : ParseTcpExtDrops(text)) Require(!name.empty());
  (void)ParseSoftnetDropped(text);
  HcaList list = ParseHcaList(text);
  for (const auto& device : list.devices) Require(device.find(':') == std::string::npos);
  return 0;
}
