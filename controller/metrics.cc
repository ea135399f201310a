#include "controller/metrics.h"

#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/process_metrics.h"
#include "base/version.h"
#include "controller/service.h"
#include "report/builder.h"
#include "report/findings.h"
#include "report/render.h"

namespace fabricctl::controller {
namespace {

const char* const kResults[] = {"ok", "warning", "critical"};

std::string Severity(v1::Severity s) {
  return absl::AsciiStrToLower(v1::Severity_Name(s).substr(std::string("SEVERITY_").size()));
}

void Header(std::string* out, const std::string& name, const char* type, const std::string& help) {
  absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

}  // namespace

ControllerMetrics::ControllerMetrics(const Store* store, absl::Duration stale_after,
                                     std::function<absl::Time()> now)
    : store_(store), stale_after_(stale_after), now_(std::move(now)) {
  for (const char* r : kResults) sweeps_total_[r] = 0;
  for (const report::FindingKind& k : report::Catalogue()) {
    findings_total_[{k.name, Severity(k.severity)}] = 0;
    if (k.alternate_severity != v1::SEVERITY_UNSPECIFIED) {
      findings_total_[{k.name, Severity(k.alternate_severity)}] = 0;
    }
  }
  // The history so far gives the last values; only sweeps finishing from now on are counted.
  MutexLock lock(&mu_);
  CatchUp();
}

void ControllerMetrics::Absorb(const v1::Report& report, bool count) {
  // Reports come oldest first: the last one absorbed is the latest sweep.
  latest_ = report::RenderProm(report, /*per_node=*/false);
  latest_nodes_.clear();
  for (const auto& n : report.health().nodes()) latest_nodes_.insert(n.node());
  const int64_t when = report.sweep().finished().seconds();
  for (const auto& n : report.health().nodes()) {
    nodes_[n.node()] = {static_cast<double>(report::PromStatusValue(n.status())), when};
  }
  // Per-pair series of a fleet would be the unbounded kind: only sweeps of a lab's size or a
  // rack's (report::kMaxPromPairNodes) give them; the leaf x leaf series cover the rest.
  if (report.health().nodes_size() <= report::kMaxPromPairNodes) {
    for (const auto& x : report::PromPairSamples(report)) {
      (x.latency ? latency_ : bandwidth_)[PairKey{x.node, x.peer, x.probe, x.rail}] = {x.value,
                                                                                       when};
    }
  }
  if (!count) return;
  ++sweeps_total_[kResults[static_cast<int>(report::ExitCodeFor(report)) % 3]];
  for (const auto& f : report.findings()) ++findings_total_[{f.kind(), Severity(f.severity())}];
}

void ControllerMetrics::CatchUp() {
  // At the start the newest kSeed sweeps give the last values; from then on every sweep is
  // read, oldest first, a page at a time, however many finished between two scrapes.
  while (true) {
    auto ids = store_->FinishedSweepIdsAfter(last_read_, kSeed,
                                             seeded_ ? Store::Take::kOldest : Store::Take::kNewest);
    if (!ids.ok()) return;  // the next scrape tries again from the same place
    for (int64_t id : *ids) {
      auto report = store_->GetReport(id);
      if (report.ok()) Absorb(*report, /*count=*/seeded_);
      last_read_ = id;
    }
    const bool was_seed = !seeded_;
    seeded_ = true;
    if (was_seed || ids->size() < kSeed) return;
  }
}

void ControllerMetrics::Forget(const std::set<std::string>& keep) {
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    it = keep.count(it->first) ? std::next(it) : nodes_.erase(it);
  }
  for (auto* pairs : {&bandwidth_, &latency_}) {
    for (auto it = pairs->begin(); it != pairs->end();) {
      const auto& [node, peer, probe, rail] = it->first;
      it = keep.count(node) && keep.count(peer) ? std::next(it) : pairs->erase(it);
    }
  }
}

void ControllerMetrics::RenderNodesAndPairs(std::string* out) const {
  Header(
      out, "fabricctl_node_status", "gauge",
      "Node verdict in the last sweep that included it: 0 ok, 1 warning, 2 critical, 3 unknown.");
  for (const auto& [node, v] : nodes_) {
    absl::StrAppendFormat(out, "fabricctl_node_status{node=\"%s\"} %d\n", report::PromEscape(node),
                          static_cast<int>(v.value));
  }
  Header(out, "fabricctl_node_last_sweep_timestamp_seconds", "gauge",
         "When the last sweep that included the node finished (Unix time).");
  for (const auto& [node, v] : nodes_) {
    if (v.when > 0) {
      absl::StrAppendFormat(out, "fabricctl_node_last_sweep_timestamp_seconds{node=\"%s\"} %d\n",
                            report::PromEscape(node), v.when);
    }
  }
  auto pairs = [&](const std::map<PairKey, Value>& values, const std::string& name,
                   bool timestamps) {
    for (const auto& [key, v] : values) {
      const auto& [node, peer, probe, rail] = key;
      if (timestamps && v.when <= 0) continue;
      absl::StrAppendFormat(out, "%s{%s} %.6g\n", name,
                            report::PromPairLabels(node, peer, probe, rail),
                            timestamps ? static_cast<double>(v.when) : v.value);
    }
  };
  Header(out, "fabricctl_pair_bandwidth_bytes_per_second", "gauge",
         "Average bandwidth of a pair at the largest message size, as last measured.");
  pairs(bandwidth_, "fabricctl_pair_bandwidth_bytes_per_second", false);
  Header(out, "fabricctl_pair_latency_seconds", "gauge",
         "Typical one-way latency of a pair at the smallest message size, as last measured.");
  pairs(latency_, "fabricctl_pair_latency_seconds", false);
  // A probe measures bandwidth or latency, never both: the two maps' keys are disjoint.
  Header(out, "fabricctl_pair_last_measured_timestamp_seconds", "gauge",
         "When the pair's figure under this probe was last measured (Unix time).");
  pairs(bandwidth_, "fabricctl_pair_last_measured_timestamp_seconds", true);
  pairs(latency_, "fabricctl_pair_last_measured_timestamp_seconds", true);
}

std::string ControllerMetrics::Render() {
  std::string out;
  const absl::Time now = now_();
  int online = 0, stale = 0;
  std::set<std::string> registered;
  auto nodes = store_->ListNodes({});
  if (nodes.ok()) {
    for (const auto& node : *nodes) {
      registered.insert(node.inventory.node_name());
      (NodeStateAt(node, now, stale_after_) == v1::NODE_STALE ? stale : online) += 1;
    }
  }
  Header(&out, "fabricctl_nodes", "gauge", "Registered nodes by state.");
  absl::StrAppend(&out, "fabricctl_nodes{state=\"online\"} ", online,
                  "\nfabricctl_nodes{state=\"stale\"} ", stale, "\n");
  // Registered nodes a completed sweep passed and nothing has changed since (a prolog with
  // --max-age re-measures the others); a store that cannot be read leaves the series out.
  if (auto known = store_->ListKnownGood({}); known.ok() && nodes.ok()) {
    int good = 0;
    for (const auto& k : *known) good += k.Good() && registered.count(k.node) > 0;
    Header(&out, "fabricctl_nodes_known_good", "gauge",
           "Registered nodes that passed a sweep with nothing changed on them since.");
    absl::StrAppend(&out, "fabricctl_nodes_known_good ", good, "\n");
    // One series a registered known-good node, as fabricctl_node_status has: the age its
    // pass has for --max-age (a node that lost it, or never passed, has none).
    Header(&out, "fabricctl_node_pass_age_seconds", "gauge",
           "Seconds since the sweep that passed each registered known-good node ended.");
    for (const auto& k : *known) {
      if (!k.Good() || registered.count(k.node) == 0) continue;
      absl::StrAppend(&out, "fabricctl_node_pass_age_seconds{node=\"", report::PromEscape(k.node),
                      "\"} ", absl::ToInt64Seconds(std::max(now - k.passed, absl::ZeroDuration())),
                      "\n");
    }
  }
  MutexLock lock(&mu_);
  CatchUp();
  // Nodes gone from the registry (and from the latest sweep) leave the exposition and memory;
  // a registry that cannot be read removes nothing.
  if (nodes.ok()) {
    registered.insert(latest_nodes_.begin(), latest_nodes_.end());
    Forget(registered);
  }
  if (!latest_.empty()) {
    out += latest_;
  } else {
    // No sweep yet: the version still says which build is scraped.
    Header(&out, "fabricctl_build_info", "gauge",
           "The fabricctl version that wrote these series (always 1).");
    absl::StrAppend(&out, "fabricctl_build_info{source=\"sweep\",version=\"", kVersion, "\"} 1\n");
  }
  RenderNodesAndPairs(&out);
  Header(&out, "fabricctl_sweeps_total", "counter",
         "Sweeps finished since the controller started, by verdict.");
  for (const auto& [result, n] : sweeps_total_) {
    absl::StrAppend(&out, "fabricctl_sweeps_total{result=\"", result, "\"} ", n, "\n");
  }
  Header(&out, "fabricctl_findings_total", "counter",
         "Findings of the sweeps finished since the controller started, by kind and severity.");
  for (const auto& [key, n] : findings_total_) {
    absl::StrAppend(&out, "fabricctl_findings_total{kind=\"", report::PromEscape(key.first),
                    "\",severity=\"", key.second, "\"} ", n, "\n");
  }
  out += RenderProcessMetrics();
  return out;
}

}  // namespace fabricctl::controller
