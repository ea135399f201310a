// A deterministic stand-in for libFuzzer where clang is not at hand: replays the seeds, then
// random mutations of them (byte flips, inserts, deletes, splices), through
// LLVMFuzzerTestOneInput. `parsers_fuzz_test [RUNS]` (default 200000).
#include <linux/ethtool_netlink.h>
#include <linux/netlink.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "probes/audit/dcb.h"
#include "probes/audit/ethtool_netlink.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// A module EEPROM of `size` bytes: its identifier, a temperature of 35.5 C, for CMIS a first
// application of 8 host onto 8 media lanes and the lane monitors advertised, and the 16-bit
// `words` at their offsets (tests/fixtures/make_eeprom.py writes fuller dumps).
std::string ModuleDump(uint8_t identifier, size_t size,
                       std::vector<std::pair<size_t, uint16_t>> words) {
  std::string dump(size, '\0');
  dump[0] = static_cast<char>(identifier);
  const bool cmis = identifier >= 0x18;
  words.push_back({cmis ? 14 : 22, 0x2380});
  for (const auto& [at, word] : words) {
    dump[at] = static_cast<char>(word >> 8);
    dump[at + 1] = static_cast<char>(word & 0xFF);
  }
  if (cmis) {
    dump[86] = 0x11;
    dump[88] = static_cast<char>(0x88);
    dump[128 + 160] = 0x07;
  }
  return dump;
}

// The attributes of an ETHTOOL_MSG_FEC_GET reply: the statistics nest with corrected and
// uncorrected blocks (a total and two lanes each) and corrected bits not counted.
std::string FecReply() {
  auto attribute = [](uint16_t type, const std::string& payload) {
    std::string out;
    fabricctl::probes::PutAttribute(&out, type, payload.data(), payload.size());
    return out;
  };
  auto u64s = [](std::vector<uint64_t> values) {
    return std::string(reinterpret_cast<const char*>(values.data()), values.size() * 8);
  };
  return attribute(ETHTOOL_A_FEC_AUTO, std::string(1, '\0')) +
         attribute(ETHTOOL_A_FEC_STATS | NLA_F_NESTED,
                   attribute(ETHTOOL_A_FEC_STAT_CORRECTED, u64s({1500, 1000, 500})) +
                       attribute(ETHTOOL_A_FEC_STAT_UNCORR, u64s({7, 3, 4})) +
                       attribute(ETHTOOL_A_FEC_STAT_CORR_BITS, ""));
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t runs = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
  std::vector<std::string> seeds = {
      "4: ACTIVE\n",
      "TcpExt: RcvPruned TCPBacklogDrop\nTcpExt: 1 12\n",
      "0000a1b2 00000010 00000003\n00001000 0000000f 00000000\n",
      "5: LinkUp\n",
      "400 Gb/sec (4X NDR)\n",
      "2.5 Gb/sec (1X SDR)\n",
      "fe80:0000:0000:0000:ba59:9fff:fe3e:1a2b\n",
      "0000:0000:0000:0000:0000:ffff:0a00:0107\n",
      "Max locked memory         8388608              8388608              bytes     \n",
      "Max locked memory         unlimited            unlimited            bytes\n",
      "9000\n",
      "-1\n",
      "mlx5_0:1,mlx5_1",
      "^mlx5_2",
      "=eth0,ib",
      "",
      fabricctl::probes::BuildDcbIeeeGetRequest("ens0np0", 1),
      FecReply(),
      "h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.4.7<0>\n",
      "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n",
      "h:1:2 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1\n"};
  // QSFP28 (SFF-8636): Rx power, page 03h's temperature and Rx power thresholds; one of page 0
  // only. OSFP (CMIS): page 02h's thresholds, page 11h's Rx power of lanes 1 and 8.
  seeds.push_back(
      ModuleDump(0x11, 640, {{34, 8000}, {512, 0x4B00}, {518, 0}, {560, 30000}, {562, 500}}));
  seeds.push_back(ModuleDump(0x11, 256, {{26, 33000}, {36, 8000}}));
  seeds.push_back(
      ModuleDump(0x19, 768, {{384, 0x5000}, {448, 40000}, {450, 500}, {698, 10000}, {712, 9000}}));
  std::mt19937_64 random(20261122);
  auto run = [](const std::string& input) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  };
  for (const auto& seed : seeds) run(seed);
  for (uint64_t i = 0; i < runs; ++i) {
    std::string input = seeds[random() % seeds.size()];
    const int mutations = 1 + static_cast<int>(random() % 8);
    for (int m = 0; m < mutations; ++m) {
      const size_t at = input.empty() ? 0 : random() % input.size();
      switch (random() % 5) {
        case 0:
          if (!input.empty()) input[at] = static_cast<char>(random());
          break;
        case 1:
          input.insert(at, 1, static_cast<char>(random()));
          break;
        case 2:
          if (!input.empty()) input.erase(at, 1 + random() % 4);
          break;
        case 3:
          input.insert(at, seeds[random() % seeds.size()]);
          break;
        default:
          input.insert(at, 1, "0123456789:abcdef -^=,\n"[random() % 23]);
          break;
      }
    }
    run(input);
  }
  std::printf("parsers_fuzz: %llu inputs, no invariant broken\n",
              static_cast<unsigned long long>(runs + seeds.size()));
  std::printf("1 passed, 0 failed\n");  // the closing line scripts/test.sh counts
  return 0;
}
