#ifndef FABRICCTL_PROBES_AUDIT_MODULE_EEPROM_H_
#define FABRICCTL_PROBES_AUDIT_MODULE_EEPROM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fabricctl::probes {

// The digital diagnostics of a pluggable module (QSFP, QSFP-DD, OSFP) from its EEPROM, as
// `ethtool -m IFACE raw on` and the ETHTOOL_GMODULEEEPROM ioctl give it: pages laid end to end,
// 128 bytes each, the lower page first.
//
// SFF-8636 (identifier 0x0C QSFP, 0x0D QSFP+, 0x11 QSFP28), ethtool's layout of 640 bytes:
//   0-127 lower page, 128-255 upper page 00h, 256-383 page 01h, 384-511 page 02h,
//   512-639 page 03h (the thresholds).
// A dump of 256 bytes (a flat-memory module, or a driver that gives page 0 only) has the
// monitors without thresholds.
//
// CMIS (identifier 0x18 QSFP-DD, 0x19 OSFP, 0x1B DSFP, 0x1E QSFP+ CMIS, 0x1F SFP-DD, 0x20 SFP+
// CMIS), the pages ethtool reads, in this order:
//   0-127 lower page, 128-255 page 00h, 256-383 page 01h (what the module advertises),
//   384-511 page 02h (thresholds), 512-639 bank 0 page 10h, 640-767 bank 0 page 11h (the lane
//   monitors).
// Shorter dumps are accepted and only what they hold is read, `missing` saying what was left
// out: drivers give 256 or 512 bytes through the ioctl, no page 11h and so no lane monitors.
// Only the media lanes the module's first application uses are read (lower page bytes 86-89);
// the others read 0 and would cross any low threshold.
//
// Units as the standards define them: temperature signed 1/256 degC, supply voltage 100 uV,
// optical power 0.1 uW, Tx bias 2 uA (in CMIS times the multiplier of page 01h byte 160).
struct Thresholds {
  double high_alarm = 0;
  double low_alarm = 0;
  double high_warning = 0;
  double low_warning = 0;
};

struct Monitor {
  std::string name;  // "temperature", "vcc", "rx_power", "tx_power", "tx_bias"
  int lane = 0;      // 0: the module as a whole; 1..8: a media lane
  double value = 0;
  std::string unit;  // "C", "V", "mW", "mA"
  // The module's own limits; nullopt where its dump has none or it leaves them all zero.
  std::optional<Thresholds> thresholds;
};

struct ModuleReading {
  std::string standard;     // "SFF-8636" or "CMIS"
  std::string form_factor;  // "QSFP28", "OSFP", ... (from the identifier byte)
  uint8_t identifier = 0;
  int lanes = 0;  // the media lanes read (SFF-8636: 4; CMIS: those its first application uses)
  std::vector<Monitor> monitors;
  // What the dump did not give, each with the reason ("page 03h (thresholds): the dump ends at
  // 256 bytes").
  std::vector<std::string> missing;
};

// Pure and fuzzed: any bytes give a reading or an error, never a read out of bounds. An
// identifier of another standard (SFP's SFF-8472, ...) is Unimplemented naming the byte; a dump
// shorter than the lower page and page 00h (256 bytes) is InvalidArgument.
absl::StatusOr<ModuleReading> ParseModuleEeprom(const std::string& bytes);

// A monitor against its module's thresholds. Alarms before warnings, strict comparisons (a
// value equal to a limit has not crossed it); kNone without thresholds.
struct Judgement {
  enum Level { kNone, kWarning, kAlarm };
  Level level = kNone;
  std::string limit;  // "high_alarm", "low_alarm", "high_warning", "low_warning"
  double threshold = 0;
};
Judgement Judge(const Monitor& monitor);

// The module EEPROM of `ifname` on this machine (live systems only; fixtures keep dumps as
// files): ETHTOOL_GMODULEINFO, then ETHTOOL_GMODULEEEPROM for its length (at most 1024 bytes).
// A paged CMIS module's pages 10h and 11h, which the ioctl does not reach, are read through
// ethtool netlink (ETHTOOL_MSG_MODULE_EEPROM_GET, Linux 5.13) where the kernel has it. NotFound
// when the netdev has no module or its driver no module access, PermissionDenied without
// CAP_NET_ADMIN.
absl::StatusOr<std::string> ReadModuleEeprom(const std::string& ifname);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_AUDIT_MODULE_EEPROM_H_
