// optics: the pluggable modules (transceivers) of the node's NICs against their own alarm and
// warning thresholds, from each module's EEPROM (module_eeprom.h: SFF-8636 for QSFP28, CMIS for
// QSFP-DD and OSFP): temperature, supply voltage, and each lane's optical power and laser bias.
// A lane receiving too little light is a dirty connector, a bent fibre or a failing laser at the
// far end; it shows here before the link drops or its error counters climb.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "probes/audit/common.h"
#include "probes/audit/module_eeprom.h"
#include "probes/audit/registry.h"

namespace fabricctl::probes::audit_internal {
namespace {

// The module EEPROM of `netdev`: ctx.module_eeprom when set, else the kernel's when the root is
// "/", else the fixture file <root>/ethtool/module/<netdev>.
absl::StatusOr<std::string> ReadEeprom(const AuditContext& ctx, const std::string& netdev) {
  if (ctx.module_eeprom) return ctx.module_eeprom(netdev);
  if (ctx.root->root().empty()) return ReadModuleEeprom(netdev);
  auto bytes = ctx.root->Read("/ethtool/module/" + netdev);
  if (absl::IsNotFound(bytes.status())) {
    return absl::NotFoundError("no module EEPROM (no file under ethtool/module/)");
  }
  return bytes;
}

// The netdevs of physical NICs: those of /sys/class/net with a `device` link (lo, bridges,
// bonds, VLANs and veths have none), RoCE ports and management interfaces alike.
std::vector<std::string> PhysicalNetdevs(const SysfsRoot& root) {
  std::vector<std::string> out;
  for (const std::string& dev : root.List("/sys/class/net").value_or(std::vector<std::string>{})) {
    if (root.ReadLink("/sys/class/net/" + dev + "/device").ok()) out.push_back(dev);
  }
  return out;
}

// A value to the resolution its module reports it in: 0.1 uW, 100 uV, 2 uA, 1/256 C.
std::string Number(double value, const std::string& unit) {
  if (unit == "mW" || unit == "V") return absl::StrFormat("%.4f", value);
  if (unit == "mA") return absl::StrFormat("%.3f", value);
  return absl::StrFormat("%.2f", value);
}

std::string WithUnit(double value, const std::string& unit) {
  return Number(value, unit) + " " + unit;
}

// What the audit saw of one module: "<netdev>" the module, "<netdev> <monitor>" its values
// (lane by lane for the lane monitors).
void Observe(const std::string& dev, const ModuleReading& reading, v1::AuditResult* r) {
  auto& seen = *r->mutable_observed();
  std::string module =
      absl::StrCat(reading.form_factor, " (", reading.standard, "), ", reading.lanes, " lanes");
  if (!reading.missing.empty()) {
    absl::StrAppend(&module, "; missing ", absl::StrJoin(reading.missing, "; "));
  }
  seen[dev] = module;
  std::map<std::string, std::vector<std::string>> values;
  std::map<std::string, std::string> units;
  for (const Monitor& m : reading.monitors) {
    values[m.name].push_back(Number(m.value, m.unit));
    units[m.name] = m.unit;
  }
  for (const auto& [monitor, list] : values) {
    seen[absl::StrCat(dev, " ", monitor)] =
        absl::StrCat(absl::StrJoin(list, " "), " ", units[monitor]);
  }
}

// One finding per monitor beyond a threshold of its module: the alarm when both are crossed.
void JudgeModule(const AuditContext& ctx, const std::string& dev, const Port& subject,
                 const ModuleReading& reading, v1::AuditResult* r) {
  for (const Monitor& m : reading.monitors) {
    const Judgement j = Judge(m);
    if (j.level == Judgement::kNone) continue;
    const bool alarm = j.level == Judgement::kAlarm;
    const std::string lane = m.lane == 0 ? "" : absl::StrCat(" lane ", m.lane);
    const std::string label = subject.device == dev
                                  ? dev
                                  : absl::StrCat(dev, " (", subject.device, ":", subject.port, ")");
    v1::Finding f =
        MakeFinding(ctx, alarm ? report::kind::kOpticsAlarm : report::kind::kOpticsWarning,
                    subject.device, subject.port,
                    absl::StrCat(label, ": ", reading.form_factor, " ", m.name, lane, " ",
                                 WithUnit(m.value, m.unit), ", ",
                                 j.limit.rfind("high", 0) == 0 ? "above" : "below",
                                 " the module's ", absl::StrReplaceAll(j.limit, {{"_", " "}}),
                                 " threshold ", WithUnit(j.threshold, m.unit)));
    auto& evidence = *f.mutable_evidence();
    evidence["netdev"] = dev;
    evidence["monitor"] = m.name;
    evidence["lane"] = absl::StrCat(m.lane);
    evidence["value"] = Number(m.value, m.unit);
    evidence["threshold"] = Number(j.threshold, m.unit);
    evidence["limit"] = j.limit;
    *r->add_findings() = std::move(f);
  }
}

class Optics final : public Audit {
 public:
  const char* name() const override { return "optics"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    const std::vector<std::string> netdevs = PhysicalNetdevs(*ctx.root);
    if (netdevs.empty()) {
      return Skipped(name(), "no physical netdev (none in /sys/class/net has a device link)");
    }
    // A finding names the RDMA port behind the netdev where there is one, else the netdev.
    std::map<std::string, Port> ports;
    for (const Port& p : ListPorts(*ctx.root).value_or(std::vector<Port>{})) {
      if (!p.netdev.empty()) ports.emplace(p.netdev, p);
    }
    v1::AuditResult r = Ran(name());
    std::vector<std::pair<std::string, std::vector<std::string>>> unreadable;  // why, netdevs
    bool any = false;
    for (const std::string& dev : netdevs) {
      auto bytes = ReadEeprom(ctx, dev);
      absl::StatusOr<ModuleReading> reading =
          bytes.ok() ? ParseModuleEeprom(*bytes) : absl::StatusOr<ModuleReading>(bytes.status());
      if (!reading.ok()) {
        const std::string why(reading.status().message());
        (*r.mutable_observed())[dev] = why;
        auto same = std::find_if(unreadable.begin(), unreadable.end(),
                                 [&](const auto& u) { return u.first == why; });
        if (same == unreadable.end()) same = unreadable.insert(unreadable.end(), {why, {}});
        same->second.push_back(dev);
        continue;
      }
      any = true;
      Observe(dev, *reading, &r);
      // A port with no carrier (no fibre, admin down, an unused breakout) reads dark by nature:
      // its figures are shown, not judged.
      if (ctx.root->ReadTrimmed("/sys/class/net/" + dev + "/carrier").value_or("") == "0") {
        (*r.mutable_observed())[dev + " judged"] = "no: carrier down (an unused port reads dark)";
        continue;
      }
      auto port = ports.find(dev);
      Port subject = port != ports.end() ? port->second : Port{dev, 0, "", dev, false};
      JudgeModule(ctx, dev, subject, *reading, &r);
    }
    if (!any) {
      std::vector<std::string> reasons;
      for (const auto& [why, devs] : unreadable) {
        reasons.push_back(absl::StrCat(absl::StrJoin(devs, ", "), ": ", why));
      }
      return Skipped(name(), "no transceiver module readable: " + absl::StrJoin(reasons, "; "));
    }
    return r;
  }
};

}  // namespace

const Audit& OpticsAudit() {
  static const Optics audit;
  return audit;
}

}  // namespace fabricctl::probes::audit_internal
