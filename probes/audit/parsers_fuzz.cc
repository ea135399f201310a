// Fuzz target of the audit parsers: every parser takes every input, and each result keeps its
// invariants. Built two ways: with clang -fsanitize=fuzzer,address by scripts/fuzz.sh (libFuzzer
// drives it), and with fuzz_driver.cc into //probes/audit:parsers_fuzz_test, which replays
// seeds and random mutations of them in CI.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "probes/audit/dcb.h"
#include "probes/audit/parsers.h"
#include "probes/gpu/nccl_log.h"

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
  NcclLog log = ParseNcclLog(text);
  Require(log.gdr_channels + log.socket_channels <= log.net_channels);
  (void)NcclLogFindings(log, "fuzz");
  HcaList list = ParseHcaList(text);
  for (const auto& device : list.devices) Require(device.find(':') == std::string::npos);
  return 0;
}
