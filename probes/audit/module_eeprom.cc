#include "probes/audit/module_eeprom.h"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "probes/audit/ethtool_netlink.h"

namespace fabricctl::probes {
namespace {

constexpr size_t kPage = 128;
constexpr size_t kMinDump = 2 * kPage;  // the lower page and page 00h: every driver gives them
constexpr size_t kMaxRead = 1024;

// What a raw 16-bit monitor word counts.
enum class Kind { kTemperature, kVcc, kPower, kBias };

struct Field {
  const char* name;
  const char* unit;
  Kind kind;
};
constexpr Field kTemperature = {"temperature", "C", Kind::kTemperature};
constexpr Field kVcc = {"vcc", "V", Kind::kVcc};
constexpr Field kRxPower = {"rx_power", "mW", Kind::kPower};
constexpr Field kTxPower = {"tx_power", "mW", Kind::kPower};
constexpr Field kTxBias = {"tx_bias", "mA", Kind::kBias};

// The dump with reads that cannot leave it: every offset is checked against the size first,
// and a read past the end gives 0 rather than touching memory.
class Dump {
 public:
  explicit Dump(const std::string& bytes) : b_(bytes) {}
  size_t size() const { return b_.size(); }
  bool Has(size_t at, size_t n) const { return at <= b_.size() && n <= b_.size() - at; }
  uint8_t U8(size_t at) const { return at < b_.size() ? static_cast<uint8_t>(b_[at]) : 0; }
  // Multi-byte fields are big-endian (MSB at the lower address) in both standards.
  uint16_t U16(size_t at) const { return static_cast<uint16_t>(U8(at) << 8 | U8(at + 1)); }

 private:
  const std::string& b_;
};

// A monitor word in the unit of Monitor::unit. Tx bias counts 2 uA steps; CMIS scales them by
// the multiplier of page 01h byte 160 for lasers driven beyond 131 mA.
double Scale(Kind kind, uint16_t raw, int bias_multiplier) {
  switch (kind) {
    case Kind::kTemperature:
      return static_cast<int16_t>(raw) / 256.0;  // signed, 1/256 degC
    case Kind::kVcc:
      return raw / 10000.0;  // 100 uV
    case Kind::kPower:
      return raw / 10000.0;  // 0.1 uW -> mW
    case Kind::kBias:
      return raw * 2.0 * bias_multiplier / 1000.0;  // 2 uA -> mA
  }
  return 0;
}

// Four limits in the standards' order (high alarm, low alarm, high warning, low warning), 2
// bytes each from `at`. A module that does not implement thresholds leaves them all zero.
std::optional<Thresholds> ReadThresholds(const Dump& d, size_t at, Kind kind,
                                         int bias_multiplier = 1) {
  if (!d.Has(at, 8)) return std::nullopt;
  uint16_t raw[4];
  for (int i = 0; i < 4; ++i) raw[i] = d.U16(at + 2 * i);
  if (raw[0] == 0 && raw[1] == 0 && raw[2] == 0 && raw[3] == 0) return std::nullopt;
  return Thresholds{Scale(kind, raw[0], bias_multiplier), Scale(kind, raw[1], bias_multiplier),
                    Scale(kind, raw[2], bias_multiplier), Scale(kind, raw[3], bias_multiplier)};
}

Monitor Make(const Field& field, int lane, double value, std::optional<Thresholds> limits) {
  return Monitor{field.name, lane, value, field.unit, std::move(limits)};
}

// The form factor an identifier byte (SFF-8024 table 4-1) names, and its standard.
struct Identity {
  uint8_t id;
  const char* form_factor;
  bool cmis;
  int host_lanes;  // the electrical lanes of the form factor (CMIS lane count arithmetic)
};
constexpr Identity kIdentities[] = {
    {0x0C, "QSFP", false, 4},        {0x0D, "QSFP+", false, 4}, {0x11, "QSFP28", false, 4},
    {0x18, "QSFP-DD", true, 8},      {0x19, "OSFP", true, 8},   {0x1B, "DSFP", true, 2},
    {0x1E, "QSFP+ (CMIS)", true, 4}, {0x1F, "SFP-DD", true, 2}, {0x20, "SFP+ (CMIS)", true, 1},
};

std::string EndsAt(size_t size) { return absl::StrCat("the dump ends at ", size, " bytes"); }

// SFF-8636: monitors in the lower page, thresholds in page 03h at 512 + (byte - 128).
void ParseSff8636(const Dump& d, ModuleReading* r) {
  r->standard = "SFF-8636";
  r->lanes = 4;
  // Byte 2 bit 2 (Flat_mem): the module has the lower page and page 00h only.
  const bool flat = d.U8(2) & 0x04;
  const bool page3 = !flat && d.Has(4 * kPage, kPage);
  if (flat) {
    r->missing.push_back("page 03h (thresholds): flat memory, the module has no upper pages");
  } else if (!page3) {
    r->missing.push_back("page 03h (thresholds): " + EndsAt(d.size()));
  }
  auto limits = [&](int byte, Kind kind) {
    return page3 ? ReadThresholds(d, 3 * kPage + byte, kind) : std::nullopt;
  };
  // The standard has no bit for "diagnostics implemented"; like ethtool, a temperature of
  // exactly 0x0000 or 0xFFFF marks a module without them (passive copper).
  const uint16_t temperature = d.U16(22);
  if (temperature == 0x0000 || temperature == 0xFFFF) {
    r->lanes = 0;
    r->missing.push_back(absl::StrFormat(
        "monitors: temperature reads 0x%04X, a module without diagnostics", temperature));
    return;
  }
  r->monitors.push_back(Make(kTemperature, 0, Scale(Kind::kTemperature, temperature, 1),
                             limits(128, Kind::kTemperature)));
  r->monitors.push_back(Make(kVcc, 0, Scale(Kind::kVcc, d.U16(26), 1), limits(144, Kind::kVcc)));
  for (int lane = 1; lane <= 4; ++lane) {
    r->monitors.push_back(Make(kRxPower, lane, Scale(Kind::kPower, d.U16(34 + 2 * (lane - 1)), 1),
                               limits(176, Kind::kPower)));
  }
  // Page 00h byte 220 bit 2: Tx output power is measured (many short-reach modules do not).
  if (d.U8(220) & 0x04) {
    for (int lane = 1; lane <= 4; ++lane) {
      r->monitors.push_back(Make(kTxPower, lane, Scale(Kind::kPower, d.U16(50 + 2 * (lane - 1)), 1),
                                 limits(192, Kind::kPower)));
    }
  } else {
    r->missing.push_back("tx_power: not measured by this module (page 00h byte 220)");
  }
  for (int lane = 1; lane <= 4; ++lane) {
    r->monitors.push_back(Make(kTxBias, lane, Scale(Kind::kBias, d.U16(42 + 2 * (lane - 1)), 1),
                               limits(184, Kind::kBias)));
  }
}

// The media lanes a CMIS module uses: those of its first application descriptor (lower page
// bytes 86-89: host interface, media interface, host lanes << 4 | media lanes), times the
// instances of it the form factor's host lanes hold (two 400G ports on an 800G OSFP). Page 11h
// has 8 lanes either way; the lanes past these read 0 and would fail any low threshold.
int CmisMediaLanes(const Dump& d, int form_factor_host_lanes) {
  const uint8_t host_interface = d.U8(86);
  const int host_lanes = d.U8(88) >> 4;
  const int media_lanes = d.U8(88) & 0x0F;
  if (host_interface == 0x00 || host_interface == 0xFF || host_lanes == 0 || media_lanes == 0 ||
      host_lanes > form_factor_host_lanes) {
    return 8;
  }
  return std::min(8, form_factor_host_lanes / host_lanes * media_lanes);
}

// CMIS: module monitors in the lower page, thresholds in page 02h, lane monitors in page 11h.
// Byte B (128..255) of an upper page lies at k * 128 + B, k = 0..4 for 00h, 01h, 02h, 10h, 11h.
void ParseCmis(const Dump& d, int host_lanes, ModuleReading* r) {
  r->standard = "CMIS";
  // Byte 2 bit 7 (MemoryModel): flat, no pages beyond 00h; no diagnostics (ethtool shows none).
  if (d.U8(2) & 0x80) {
    r->missing.push_back("monitors: flat memory, a module without diagnostics (passive copper)");
    return;
  }
  constexpr size_t kPage01 = 1 * kPage, kPage02 = 2 * kPage, kPage11 = 4 * kPage;
  const bool page01 = d.Has(kPage01 + kPage, kPage);
  const bool page02 = d.Has(kPage02 + kPage, kPage);
  const bool page11 = d.Has(kPage11 + kPage, kPage);
  // Page 01h byte 160: bits 0-2 Tx bias, Tx power, Rx power monitored; bits 3-4 the Tx bias
  // multiplier (x1, x2, x4; 3 is reserved and read as x1).
  const uint8_t advertised = page01 ? d.U8(kPage01 + 160) : 0;
  const int code = (advertised >> 3) & 0x03;
  const int bias_multiplier = code == 3 ? 1 : 1 << code;
  if (!page01) r->missing.push_back("page 01h (advertisement): " + EndsAt(d.size()));
  if (!page02) r->missing.push_back("page 02h (thresholds): " + EndsAt(d.size()));
  auto limits = [&](int byte, Kind kind) {
    return page02 ? ReadThresholds(d, kPage02 + byte, kind, bias_multiplier) : std::nullopt;
  };
  r->monitors.push_back(Make(kTemperature, 0, Scale(Kind::kTemperature, d.U16(14), 1),
                             limits(128, Kind::kTemperature)));
  r->monitors.push_back(Make(kVcc, 0, Scale(Kind::kVcc, d.U16(16), 1), limits(136, Kind::kVcc)));
  if (!page11) {
    r->missing.push_back("page 11h (lane monitors): " + EndsAt(d.size()));
    return;
  }
  r->lanes = CmisMediaLanes(d, host_lanes);
  struct Lanes {
    const Field& field;
    uint8_t bit;
    int monitor_byte;    // lane 1's word in page 11h
    int threshold_byte;  // in page 02h
  };
  const Lanes kinds[] = {
      {kRxPower, 0x04, 186, 192}, {kTxPower, 0x02, 154, 176}, {kTxBias, 0x01, 170, 184}};
  for (const Lanes& k : kinds) {
    if (!(advertised & k.bit)) {
      r->missing.push_back(
          absl::StrCat(k.field.name, ": not monitored by this module (page 01h byte 160)"));
      continue;
    }
    for (int lane = 1; lane <= r->lanes; ++lane) {
      const uint16_t raw = d.U16(kPage11 + k.monitor_byte + 2 * (lane - 1));
      r->monitors.push_back(Make(k.field, lane, Scale(k.field.kind, raw, bias_multiplier),
                                 limits(k.threshold_byte, k.field.kind)));
    }
  }
}

}  // namespace

absl::StatusOr<ModuleReading> ParseModuleEeprom(const std::string& bytes) {
  if (bytes.empty()) return absl::InvalidArgumentError("module EEPROM: empty");
  const Dump d(bytes);
  const uint8_t id = d.U8(0);
  const Identity* identity = nullptr;
  for (const Identity& i : kIdentities) {
    if (i.id == id) identity = &i;
  }
  if (identity == nullptr) {
    return absl::UnimplementedError(absl::StrFormat(
        "module identifier 0x%02X%s: neither SFF-8636 (QSFP, QSFP+, QSFP28) nor CMIS (QSFP-DD, "
        "OSFP, ...)",
        id, id == 0x03 ? " (SFP, SFF-8472)" : ""));
  }
  if (bytes.size() < kMinDump) {
    return absl::InvalidArgumentError(absl::StrCat("module EEPROM: ", bytes.size(),
                                                   " bytes, expected at least ", kMinDump,
                                                   " (the lower page and page 00h)"));
  }
  ModuleReading r;
  r.identifier = id;
  r.form_factor = identity->form_factor;
  if (identity->cmis) {
    ParseCmis(d, identity->host_lanes, &r);
  } else {
    ParseSff8636(d, &r);
  }
  return r;
}

Judgement Judge(const Monitor& m) {
  if (!m.thresholds) return {};
  const Thresholds& t = *m.thresholds;
  if (m.value > t.high_alarm) return {Judgement::kAlarm, "high_alarm", t.high_alarm};
  if (m.value < t.low_alarm) return {Judgement::kAlarm, "low_alarm", t.low_alarm};
  if (m.value > t.high_warning) return {Judgement::kWarning, "high_warning", t.high_warning};
  if (m.value < t.low_warning) return {Judgement::kWarning, "low_warning", t.low_warning};
  return {};
}

namespace {

// SIOCETHTOOL on an AF_INET datagram socket, as ethtool(8) asks; 0 or the errno.
int EthtoolIoctl(int fd, const std::string& ifname, void* command) {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = static_cast<char*>(command);
  return ::ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? errno : 0;
}

absl::Status IoctlError(int error) {
  const std::string why = std::strerror(error);
  switch (error) {
    case EOPNOTSUPP:
    case 524:  // ENOTSUPP, the kernel's own, which some drivers let through
      return absl::NotFoundError("no module EEPROM (the driver has no module EEPROM access)");
    case EIO:
    case ENXIO:
      return absl::NotFoundError(absl::StrCat(
          "no module EEPROM (an empty cage, or a module that does not answer: ", why, ")"));
    case ENODEV:
      return absl::NotFoundError("no such netdev");
    case EPERM:
    case EACCES:
      return absl::PermissionDeniedError(
          absl::StrCat("module EEPROM: ", why, " (reading it needs CAP_NET_ADMIN)"));
    default:
      return absl::UnavailableError(absl::StrCat("module EEPROM: ", why));
  }
}

// The upper half (bytes 128-255) of bank 0's `page` through ETHTOOL_MSG_MODULE_EEPROM_GET.
absl::StatusOr<std::string> ReadPage(const GenlSocket& netlink, uint16_t family,
                                     const std::string& ifname, uint8_t page) {
  std::string header;
  PutAttribute(&header, ETHTOOL_A_HEADER_DEV_NAME, ifname.c_str(), ifname.size() + 1);
  std::string attributes;
  PutAttribute(&attributes, ETHTOOL_A_MODULE_EEPROM_HEADER | NLA_F_NESTED, header.data(),
               header.size());
  const uint32_t offset = kPage, length = kPage;
  const uint8_t bank = 0, i2c_address = 0x50;
  PutAttribute(&attributes, ETHTOOL_A_MODULE_EEPROM_OFFSET, &offset, sizeof(offset));
  PutAttribute(&attributes, ETHTOOL_A_MODULE_EEPROM_LENGTH, &length, sizeof(length));
  PutAttribute(&attributes, ETHTOOL_A_MODULE_EEPROM_PAGE, &page, sizeof(page));
  PutAttribute(&attributes, ETHTOOL_A_MODULE_EEPROM_BANK, &bank, sizeof(bank));
  PutAttribute(&attributes, ETHTOOL_A_MODULE_EEPROM_I2C_ADDRESS, &i2c_address, sizeof(i2c_address));
  auto reply = netlink.Ask(
      GenlRequest(family, ETHTOOL_MSG_MODULE_EEPROM_GET, ETHTOOL_GENL_VERSION, attributes), family);
  if (!reply.ok()) return reply.status();
  return FindAttribute(*reply, ETHTOOL_A_MODULE_EEPROM_DATA);
}

// The ioctl reaches a CMIS module's pages 00h to 02h at most (drivers give 256 or 512 bytes);
// the pages after them in the layout, up to page 11h and its lane monitors, come through ethtool
// netlink where the kernel has it. Any failure keeps the dump as it is: the parser then says
// what is missing.
void AppendCmisPages(const std::string& ifname, std::string* bytes) {
  const Dump d(*bytes);
  const auto cmis = std::find_if(std::begin(kIdentities), std::end(kIdentities),
                                 [&](const Identity& i) { return i.id == d.U8(0) && i.cmis; });
  if (cmis == std::end(kIdentities) || d.size() < kMinDump || (d.U8(2) & 0x80)) return;
  const GenlSocket netlink;
  const absl::StatusOr<uint16_t> family = netlink.EthtoolFamily();
  if (!family.ok()) return;
  constexpr uint8_t kPages[] = {0x01, 0x02, 0x10, 0x11};  // at 256, 384, 512, 640
  for (size_t i = 0; i < std::size(kPages); ++i) {
    const size_t start = (i + 2) * kPage;
    if (bytes->size() > start) continue;  // the ioctl gave it
    if (bytes->size() < start) break;
    auto page = ReadPage(netlink, *family, ifname, kPages[i]);
    if (!page.ok() || page->size() != kPage) break;
    *bytes += *page;
  }
}

}  // namespace

absl::StatusOr<std::string> ReadModuleEeprom(const std::string& ifname) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ) {
    return absl::InvalidArgumentError("module EEPROM: not a netdev name: '" + ifname + "'");
  }
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  ethtool_modinfo info{};
  info.cmd = ETHTOOL_GMODULEINFO;
  if (const int error = EthtoolIoctl(fd, ifname, &info); error != 0) {
    ::close(fd);
    return IoctlError(error);
  }
  const size_t length = std::min<size_t>(info.eeprom_len, kMaxRead);
  if (length == 0) {
    ::close(fd);
    return absl::NotFoundError("no module EEPROM (the driver reports a length of 0)");
  }
  // struct ethtool_eeprom ends in the data; 32-bit words keep the header aligned.
  std::vector<uint32_t> buffer((sizeof(ethtool_eeprom) + length + 3) / 4, 0);
  auto* request = reinterpret_cast<ethtool_eeprom*>(buffer.data());
  request->cmd = ETHTOOL_GMODULEEEPROM;
  request->offset = 0;
  request->len = static_cast<uint32_t>(length);
  const int error = EthtoolIoctl(fd, ifname, request);
  ::close(fd);
  if (error != 0) return IoctlError(error);
  std::string bytes(reinterpret_cast<const char*>(request->data),
                    std::min<size_t>(request->len, length));
  AppendCmisPages(ifname, &bytes);
  return bytes;
}

}  // namespace fabricctl::probes
