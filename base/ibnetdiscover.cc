#include "base/ibnetdiscover.h"

#include <map>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fabricctl {
namespace {

// Switch  24 "S-005442ba00003080"         # "ISR9024 Voltaire" base port 0 lid 6 lmc 0
const std::regex& SwitchLine() {
  static const std::regex re(R"re(^Switch\s+\d+\s+"S-([0-9A-Fa-fx]+)"\s*(?:#\s*"([^"]*)")?)re");
  return re;
}
// Ca      2 "H-0008f10403960984"          # "MT23108 InfiniHost Mellanox Technologies"
const std::regex& CaLine() {
  static const std::regex re(R"re(^Ca\s+\d+\s+"H-([0-9A-Fa-fx]+)"\s*(?:#\s*"([^"]*)")?)re");
  return re;
}
// [1](8f10403960985)     "S-0008f10400410015"[6]         # lid 16 lmc 1 "SW-6IB4 Voltaire" lid 3
// 4xSDR
const std::regex& CaLinkLine() {
  static const std::regex re(
      R"re(^\[(\d+)\](?:\([0-9A-Fa-fx]+\))?\s+"([SH])-([0-9A-Fa-fx]+)"\[(\d+)\])re");
  return re;
}

constexpr size_t kMaxLine = 4096;

std::string Guid(const std::string& hex) {
  return hex.rfind("0x", 0) == 0 ? hex : absl::StrCat("0x", hex);
}

}  // namespace

absl::StatusOr<std::vector<IbHostPort>> ParseIbnetdiscover(const std::string& text,
                                                           const std::string& source,
                                                           size_t max_ports) {
  std::map<std::string, std::string> switch_names;  // guid -> NodeDescription
  std::vector<IbHostPort> ports;
  IbHostPort ca;  // the CA block being read; empty ca_guid outside one
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    const std::string line(absl::StripAsciiWhitespace(raw));
    auto fail = [&](const std::string& what) {
      return absl::InvalidArgumentError(absl::StrCat(source, ":", number, ": ", what));
    };
    // No line of the format comes near this; a longer one is not read (nor matched).
    if (line.size() > kMaxLine)
      return fail(absl::StrCat("a line longer than ", kMaxLine, " bytes"));
    std::smatch m;
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("vendid=", 0) == 0) {
      ca = IbHostPort();
    } else if (line.rfind("Switch", 0) == 0) {
      if (!std::regex_search(line, m, SwitchLine()))
        return fail("a Switch line without a \"S-<guid>\"");
      switch_names[Guid(m[1])] = m[2];
      ca = IbHostPort();
    } else if (line.rfind("Ca", 0) == 0) {
      if (!std::regex_search(line, m, CaLine())) return fail("a Ca line without a \"H-<guid>\"");
      ca = IbHostPort();
      ca.ca_guid = Guid(m[1]);
      ca.description = m[2];
      ca.host = ca.description.substr(0, ca.description.find(' '));
    } else if (line[0] == '[' && !ca.ca_guid.empty()) {
      if (!std::regex_search(line, m, CaLinkLine())) return fail("a CA port line without its peer");
      if (m[2] != "S") continue;  // cabled to another CA directly: no switch to place it under
      IbHostPort port = ca;
      if (!absl::SimpleAtoi(m[1].str(), &port.port) ||
          !absl::SimpleAtoi(m[4].str(), &port.switch_port)) {
        return fail("a port number out of range");
      }
      port.switch_guid = Guid(m[3]);
      ports.push_back(std::move(port));
      if (ports.size() > max_ports)
        return fail(absl::StrCat("more than ", max_ports, " host ports"));
    }
  }
  // A switch is named by its NodeDescription where that is its own (vendors' defaults repeat).
  std::map<std::string, int> uses;
  for (const auto& [guid, name] : switch_names) ++uses[name];
  for (IbHostPort& port : ports) {
    auto it = switch_names.find(port.switch_guid);
    const std::string guid_name = absl::StrCat("S-", port.switch_guid.substr(2));
    const bool own = it != switch_names.end() && !it->second.empty() && uses[it->second] == 1;
    port.switch_name = own ? it->second
                       : it != switch_names.end() && !it->second.empty()
                           ? absl::StrCat(it->second, " (", guid_name, ")")
                           : guid_name;
  }
  return ports;
}

}  // namespace fabricctl
