#ifndef FABRICCTL_CONTROLLER_METRICS_H_
#define FABRICCTL_CONTROLLER_METRICS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "base/mutex.h"
#include "controller/store/store.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

// The controller's /metrics: the registry's nodes by state; the latest sweep's verdict and
// findings; each node's verdict and each pair's figures as last measured, whichever sweep that
// was, with when (a node left out of the latest sweep keeps its series; pair figures come only
// from sweeps of up to report::kMaxPromPairNodes nodes); counters of the sweeps finished since
// start; the process's own metrics.
//
// Reports are read from the store once each: at construction (the controller's start) the
// newest kSeed finished sweeps, then at each scrape every sweep newer than the last read. A
// node removed from the registry (and absent from the latest sweep) leaves the exposition and
// the memory. Thread-safe.
class ControllerMetrics {
 public:
  static constexpr uint32_t kSeed = 64;

  ControllerMetrics(const Store* store, absl::Duration stale_after,
                    std::function<absl::Time()> now);
  std::string Render();

 private:
  struct Value {
    double value = 0;
    int64_t when = 0;  // Unix seconds: the end of the sweep that measured it
  };
  using PairKey =
      std::tuple<std::string, std::string, std::string, std::string>;  // node, peer, probe, rail

  // Takes in one finished sweep's report; `count` adds it to the counters.
  void Absorb(const v1::Report& report, bool count) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CatchUp() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops the last values of nodes (and pairs with an end) not in `keep`.
  void Forget(const std::set<std::string>& keep) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The per-node and per-pair series of the sweeps absorbed so far.
  void RenderNodesAndPairs(std::string* out) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Store* const store_;
  const absl::Duration stale_after_;
  const std::function<absl::Time()> now_;
  Mutex mu_;
  int64_t last_read_ ABSL_GUARDED_BY(mu_) = 0;
  bool seeded_ ABSL_GUARDED_BY(mu_) = false;
  std::string latest_ ABSL_GUARDED_BY(mu_);  // the latest sweep's own series (RenderProm)
  std::set<std::string> latest_nodes_ ABSL_GUARDED_BY(mu_);  // and its nodes
  std::map<std::string, Value> nodes_ ABSL_GUARDED_BY(mu_);
  std::map<PairKey, Value> bandwidth_ ABSL_GUARDED_BY(mu_), latency_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint64_t> sweeps_total_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, uint64_t> findings_total_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_METRICS_H_
