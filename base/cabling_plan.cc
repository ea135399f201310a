#include "base/cabling_plan.h"

#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/hostlist.h"
#include "base/tls.h"

namespace fabricctl {
namespace {

// A node, switch or port as a plan may write it: printable, no blanks, no '#', 1-255 bytes.
bool PlanName(const std::string& name) {
  if (name.empty() || name.size() > 255) return false;
  for (unsigned char c : name) {
    if (c <= ' ' || c == 0x7f || c == '#') return false;
  }
  return true;
}

// An interface name as Linux allows it, as rails: netdev is checked.
bool NetdevName(const std::string& name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '-' && c != '.') return false;
  }
  return true;
}

// Where each interface and switch port is planned, to refuse a second plan for either.
class Seen {
 public:
  // Empty when `cable` is new; what it repeats otherwise.
  std::string Add(const v1::Cable& cable, const std::string& where) {
    auto [itf, fresh] = interfaces_.emplace(cable.node() + " " + cable.netdev(), where);
    if (!fresh) {
      return absl::StrCat(cable.node(), "'s ", cable.netdev(), " is planned already (", itf->second,
                          ")");
    }
    if (cable.port().empty()) return "";
    auto [port, free] = ports_.emplace(cable.switch_name() + " " + cable.port(), where);
    if (!free) {
      return absl::StrCat(cable.switch_name(), " port ", cable.port(), " is planned already (",
                          port->second, ")");
    }
    return "";
  }

 private:
  std::map<std::string, std::string> interfaces_, ports_;  // key -> where it was planned
};

// Empty when `cable` is well formed; what is wrong otherwise.
std::string Malformed(const v1::Cable& cable) {
  if (!PlanName(cable.node())) return absl::StrCat("'", cable.node(), "' is not a node name");
  if (!NetdevName(cable.netdev())) {
    return absl::StrCat("'", cable.netdev(), "' is not an interface name ([A-Za-z0-9._-], 1-15)");
  }
  if (!PlanName(cable.switch_name()))
    return absl::StrCat("'", cable.switch_name(), "' is not a switch name");
  if (!cable.port().empty() && !PlanName(cable.port()))
    return absl::StrCat("'", cable.port(), "' is not a port name");
  return "";
}

}  // namespace

absl::StatusOr<std::vector<v1::Cable>> ParseCablingPlan(const std::string& text,
                                                        const std::string& source,
                                                        size_t max_cables) {
  std::vector<v1::Cable> out;
  Seen seen;
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    auto fail = [&](const std::string& what) {
      return absl::InvalidArgumentError(absl::StrCat(source, ":", number, ": ", what));
    };
    const std::vector<std::string> fields =
        absl::StrSplit(raw.substr(0, raw.find('#')), absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (fields.empty()) continue;
    if (fields.size() < 3 || fields.size() > 4) {
      return fail(absl::StrCat("expected 'node netdev switch [port]', got ", fields.size(),
                               " field", fields.size() == 1 ? "" : "s"));
    }
    const bool ported = fields.size() == 4;
    std::vector<std::string> nodes{fields[0]};
    if (fields[0].find_first_of("[,") != std::string::npos) {
      if (ported) return fail("a hostlist of nodes with one port: give each node its own line");
      auto expanded = ExpandHostlist(fields[0], "node", max_cables - out.size() + 1);
      if (!expanded.ok()) return fail(std::string(expanded.status().message()));
      nodes = std::move(*expanded);
    }
    for (const std::string& node : nodes) {
      if (out.size() >= max_cables) return fail(absl::StrCat("more than ", max_cables, " cables"));
      v1::Cable cable;
      cable.set_node(node);
      cable.set_netdev(fields[1]);
      cable.set_switch_name(fields[2]);
      if (ported) cable.set_port(fields[3]);
      if (std::string bad = Malformed(cable); !bad.empty()) return fail(bad);
      if (std::string again = seen.Add(cable, absl::StrCat("line ", number)); !again.empty())
        return fail(again);
      out.push_back(std::move(cable));
    }
  }
  return out;
}

absl::Status LoadCablingPlan(v1::Topology* topology, const std::string& path) {
  std::vector<v1::Cable> file;
  if (!path.empty()) {
    auto text = ReadFileToString(path, "topology.cabling");
    if (!text.ok()) return text.status();
    auto parsed = ParseCablingPlan(*text, path);
    if (!parsed.ok()) return parsed.status();
    file = std::move(*parsed);
  }
  if (topology->cables_size() + file.size() > kMaxCables) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology.cables: more than ", kMaxCables, " cables"));
  }
  for (v1::Cable& cable : file) *topology->add_cables() = std::move(cable);
  Seen seen;
  for (int i = 0; i < topology->cables_size(); ++i) {
    const v1::Cable& cable = topology->cables(i);
    std::string bad = Malformed(cable);
    if (bad.empty()) bad = seen.Add(cable, absl::StrCat("cable ", i + 1));
    if (!bad.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("topology.cables[", i, "]: ", bad));
    }
  }
  return absl::OkStatus();
}

}  // namespace fabricctl
