#ifndef FABRICCTL_CONTROLLER_VERDICT_GIVE_BACK_H_
#define FABRICCTL_CONTROLLER_VERDICT_GIVE_BACK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "proto/config.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

// Drains given back, for sites whose own tooling acts on the drain list (undrain.enabled): each
// node of `drained` (an earlier verdict drained it) that `report`, a completed sweep, re-measured
// and passed — its pass earned (NodeHealth.pass: pair probes with enough peers on every rail,
// no finding concerning it), its agent's link watch run (and so quiet), its audits run and
// passed where the drain was for what an audit finds — at least `undrain.after` after that
// drain, and that this report does not drain again, joins the report's given_back list with a
// drain_given_back finding naming the sweep, the probes and each rail's peers. Nothing when
// undrain is off.
// A node an earlier verdict drained, as the store holds it.
struct Drain {
  std::string node;
  int64_t sweep_id = 0;  // the latest verdict that drained it
  absl::Time since;      // that sweep's end
  std::string kinds;     // what it was drained for, comma-separated
};

void GiveBack(const v1::Undrain& undrain, const std::vector<Drain>& drained, absl::Time now,
              v1::Report* report);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_GIVE_BACK_H_
