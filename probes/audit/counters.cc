// counters: error counters that must not rise on a healthy link
// (Documentation/ABI/stable/sysfs-class-infiniband: ports/N/counters), read twice a window apart.
// link_downed rising is critical (the catalogue's alternate level); the others are warnings.
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "probes/audit/common.h"
#include "probes/audit/parsers.h"
#include "probes/audit/registry.h"

namespace fabricctl::probes::audit_internal {
namespace {

constexpr const char* kCounters[] = {"counters/symbol_error",
                                     "counters/link_downed",
                                     "counters/link_error_recovery",
                                     "counters/port_rcv_errors",
                                     "counters/port_xmit_discards",
                                     "counters/local_link_integrity_errors",
                                     "counters/excessive_buffer_overrun_errors",
                                     "hw_counters/out_of_sequence",
                                     "hw_counters/packet_seq_err",
                                     "hw_counters/local_ack_timeout_err",
                                     "hw_counters/implied_nak_seq_err",
                                     "hw_counters/np_cnp_sent",
                                     "hw_counters/rp_cnp_handled"};

// Every readable counter of every port, by (port index, counter).
std::map<std::pair<size_t, std::string>, uint64_t> ReadCounters(const SysfsRoot& root,
                                                                const std::vector<Port>& ports) {
  std::map<std::pair<size_t, std::string>, uint64_t> values;
  for (size_t i = 0; i < ports.size(); ++i) {
    for (const char* counter : kCounters) {
      auto v =
          ParseInteger(root.ReadTrimmed(absl::StrCat(ports[i].dir, "/", counter)).value_or(""));
      if (v && *v >= 0) values[{i, counter}] = static_cast<uint64_t>(*v);
    }
  }
  return values;
}

class Counters final : public Audit {
 public:
  const char* name() const override { return "counters"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    if (ctx.counter_window <= absl::ZeroDuration()) {
      return Skipped(name(), "no counter window (--window S)");
    }
    auto ports = ListPorts(*ctx.root);
    if (!ports.ok()) return Skipped(name(), std::string(ports.status().message()));
    const auto before = ReadCounters(*ctx.root, *ports);
    ctx.wait(ctx.counter_window);
    const auto after = ReadCounters(*ctx.root, *ports);
    v1::AuditResult r = Ran(name());
    for (const auto& [key, start] : before) {
      auto it = after.find(key);
      if (it == after.end()) continue;
      const Port& p = (*ports)[key.first];
      const std::string label = absl::StrCat(p.device, ":", p.port);
      // PMA counters saturate rather than wrap: a smaller reading is a reset, not an increase.
      const uint64_t increase = it->second > start ? it->second - start : 0;
      const std::string counter = key.second.substr(key.second.find('/') + 1);
      (*r.mutable_observed())[absl::StrCat(label, " ", counter)] = absl::StrCat("+", increase);
      if (increase <= ctx.max_counter_increase) continue;
      v1::Finding f = MakeFinding(
          ctx, report::kind::kCounterErrors, p.device, p.port,
          absl::StrCat(label, " ", counter, " rose by ", increase, " in ",
                       absl::FormatDuration(ctx.counter_window), ", expected at most ",
                       ctx.max_counter_increase),
          counter == "link_downed" ? report::Level::kAlternate : report::Level::kDefault);
      (*f.mutable_evidence())["counter"] = counter;
      (*f.mutable_evidence())["increase"] = absl::StrCat(increase);
      *r.add_findings() = std::move(f);
    }
    return r;
  }
};

}  // namespace

const Audit& CountersAudit() {
  static const Counters audit;
  return audit;
}

}  // namespace fabricctl::probes::audit_internal
