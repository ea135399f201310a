#ifndef FABRICCTL_PROBES_AUDIT_PARSERS_H_
#define FABRICCTL_PROBES_AUDIT_PARSERS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fabricctl::probes {

// Pure parsers of the kernel's text formats (the kernel's sysfs ABI:
// Documentation/ABI/stable/sysfs-class-infiniband and sysfs-class-net). Each takes the bytes a file
// holds and returns values or nullopt; none reads a file. Fuzzed by //probes/audit:parsers_fuzz.

// "4: ACTIVE" (port state) or "5: LinkUp" (phys_state) -> {4, "ACTIVE"}.
struct NumberedState {
  int number = 0;
  std::string name;
};
std::optional<NumberedState> ParseNumberedState(const std::string& text);

// "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)" -> Gb/s.
std::optional<double> ParseRateGbps(const std::string& text);

// "fe80:0000:...:1a2b" (8 groups of 4 hex digits) -> 16 bytes.
std::optional<std::vector<uint8_t>> ParseGid(const std::string& text);

// The "Max locked memory" soft limit of /proc/<pid>/limits in bytes; UINT64_MAX for unlimited.
std::optional<uint64_t> ParseMemlockLimit(const std::string& limits_text);

// current_link_speed / max_link_speed: "32.0 GT/s PCIe", "8 GT/s", "2.5 GT/s" -> GT/s.
std::optional<double> ParsePcieSpeedGts(const std::string& text);

// The ACS Control register of a PCI function from its config space (sysfs `config`): walks the
// extended capability list from offset 0x100 to the ACS capability (ID 0x000D) and returns
// its control word; nullopt when the space is short (unprivileged reads stop at 256 bytes) or
// there is no ACS capability.
std::optional<uint16_t> ParseAcsControl(const std::string& config);

// ACS control bits that redirect peer-to-peer traffic up to the root complex (P2P Request
// Redirect, P2P Completion Redirect): with either on, GPUDirect traffic between a GPU and a
// NIC below the bridge detours through the CPU.
constexpr uint16_t kAcsRequestRedirect = 1 << 2;
constexpr uint16_t kAcsCompletionRedirect = 1 << 3;

// A decimal integer with surrounding white space ("9000\n", "-1").
std::optional<int64_t> ParseInteger(const std::string& text);

// The RoCE MTU the kernel derives from a netdev MTU (iboe_get_mtu: 96 bytes of RoCE v2
// headers, then the largest IB MTU that fits, capped at 4096); 0 when none fits.
uint32_t RoceMtuForNetdevMtu(int64_t netdev_mtu);

// NCCL_IB_HCA: "mlx5_0:1,mlx5_1", "^mlx5_2" (exclude), "=mlx5_0" (exact). Returns the device
// names (ports dropped) and the mode.
struct HcaList {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> devices;
};
HcaList ParseHcaList(const std::string& text);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_AUDIT_PARSERS_H_
