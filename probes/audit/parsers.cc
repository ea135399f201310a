#include "probes/audit/parsers.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fabricctl::probes {

std::optional<NumberedState> ParseNumberedState(const std::string& text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  size_t colon = s.find(':');
  if (colon == absl::string_view::npos) return std::nullopt;
  int number;
  if (!absl::SimpleAtoi(s.substr(0, colon), &number)) return std::nullopt;
  NumberedState out;
  out.number = number;
  out.name = std::string(absl::StripAsciiWhitespace(s.substr(colon + 1)));
  if (out.name.empty()) return std::nullopt;
  return out;
}

std::optional<double> ParseRateGbps(const std::string& text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  size_t space = s.find(' ');
  if (space == absl::string_view::npos || s.substr(space + 1, 6) != "Gb/sec") return std::nullopt;
  double rate;
  if (!absl::SimpleAtod(s.substr(0, space), &rate) || rate < 0 || rate > 1e6) return std::nullopt;
  return rate;
}

std::optional<std::vector<uint8_t>> ParseGid(const std::string& text) {
  std::vector<std::string> groups = absl::StrSplit(absl::StripAsciiWhitespace(text), ':');
  if (groups.size() != 8) return std::nullopt;
  std::vector<uint8_t> out;
  for (const std::string& g : groups) {
    if (g.size() != 4) return std::nullopt;
    uint32_t value = 0;
    for (char c : g) {
      if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
      value = value * 16 + (absl::ascii_isdigit(static_cast<unsigned char>(c))
                                ? c - '0'
                                : absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a' + 10);
    }
    out.push_back(static_cast<uint8_t>(value >> 8));
    out.push_back(static_cast<uint8_t>(value & 0xff));
  }
  return out;
}

std::optional<uint64_t> ParseMemlockLimit(const std::string& limits_text) {
  for (absl::string_view line : absl::StrSplit(limits_text, '\n')) {
    if (!absl::ConsumePrefix(&line, "Max locked memory")) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.empty()) return std::nullopt;
    if (fields[0] == "unlimited") return std::numeric_limits<uint64_t>::max();
    uint64_t bytes;
    if (!absl::SimpleAtoi(fields[0], &bytes)) return std::nullopt;
    return bytes;
  }
  return std::nullopt;
}

std::optional<double> ParsePcieSpeedGts(const std::string& text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  size_t space = s.find(' ');
  if (space == absl::string_view::npos || s.substr(space + 1, 4) != "GT/s") return std::nullopt;
  double gts;
  if (!absl::SimpleAtod(s.substr(0, space), &gts) || gts <= 0 || gts > 1000) return std::nullopt;
  return gts;
}

std::optional<uint16_t> ParseAcsControl(const std::string& config) {
  constexpr size_t kExtendedStart = 0x100;
  constexpr uint16_t kAcsId = 0x000D;
  auto u32 = [&](size_t at) -> std::optional<uint32_t> {
    if (at + 4 > config.size()) return std::nullopt;
    const auto* b = reinterpret_cast<const unsigned char*>(config.data() + at);
    return b[0] | (b[1] << 8) | (b[2] << 16) |
           (static_cast<uint32_t>(b[3]) << 24);  // little-endian
  };
  size_t at = kExtendedStart;
  for (int hops = 0; hops < 96 && at >= kExtendedStart; ++hops) {  // bounded: no loops
    auto header = u32(at);
    if (!header || *header == 0 || *header == 0xffffffff) return std::nullopt;
    if ((*header & 0xffff) == kAcsId) {
      if (at + 8 > config.size()) return std::nullopt;
      const auto* b = reinterpret_cast<const unsigned char*>(config.data() + at + 6);
      return static_cast<uint16_t>(b[0] | (b[1] << 8));
    }
    at = (*header >> 20) & 0xffc;
    if (at == 0) return std::nullopt;
  }
  return std::nullopt;
}

std::optional<int64_t> ParseInteger(const std::string& text) {
  int64_t value;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &value)) return std::nullopt;
  return value;
}

uint32_t RoceMtuForNetdevMtu(int64_t netdev_mtu) {
  // GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 (include/rdma/ib_addr.h).
  const int64_t payload = netdev_mtu - 96;
  for (uint32_t mtu : {4096u, 2048u, 1024u, 512u, 256u}) {
    if (payload >= mtu) return mtu;
  }
  return 0;
}

HcaList ParseHcaList(const std::string& text) {
  HcaList out;
  absl::string_view s = absl::StripAsciiWhitespace(text);
  if (absl::ConsumePrefix(&s, "^")) out.exclude = true;
  if (absl::ConsumePrefix(&s, "=")) out.exact = true;
  for (absl::string_view item : absl::StrSplit(s, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    out.devices.emplace_back(item.substr(0, item.find(':')));
  }
  return out;
}

}  // namespace fabricctl::probes
