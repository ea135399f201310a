#ifndef FABRICCTL_CONTROLLER_ACCEPTANCES_H_
#define FABRICCTL_CONTROLLER_ACCEPTANCES_H_

// RecordAcceptance's part: what a client may ask to record, and the controller's verdict on it
// over the reports its store holds (controller/verdict/acceptance.h judges).
#include "absl/status/status.h"
#include "controller/store/store.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

// Bounded, its names node names, its sweeps named once each, its times not negative.
absl::Status ValidateAcceptance(const v1::Acceptance& a);

// The new nodes (`asked.nodes[].node`) judged over the stored reports of `asked.sweep_ids`, in
// order, against `asked.reference_nodes`; whatever verdict `asked` carries is ignored. A sweep
// history no longer holds, or one that did not complete, makes the acceptance incomplete (no
// node accepted, exit 3): what is not held was not judged. Its sources, times and sweep ids are
// kept; a judged acceptance over kMaxJudgedBytes keeps its verdicts without their findings (the
// sweeps' reports hold them).
v1::Acceptance JudgeRecorded(const Store& store, const v1::Acceptance& asked);

// A check of the node failed (an acceptance cut short accepts nobody, but rejects only these).
bool Rejected(const v1::Acceptance::NodeVerdict& node);

inline constexpr size_t kMaxJudgedBytes = 3 << 20;

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_ACCEPTANCES_H_
