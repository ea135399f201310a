#ifndef FABRICCTL_CONTROLLER_STORE_KNOWN_GOOD_H_
#define FABRICCTL_CONTROLLER_STORE_KNOWN_GOOD_H_

// The store's own: what a finished sweep's report says of each node's known-good state.
#include <cstdint>

#include "absl/status/status.h"
#include "controller/store/database.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

// Inside FinishSweep's transaction: each node the completed sweep `sweep_id` judged healthy is
// known-good from `finished_us` (its figures kept); each it flagged loses it, the kinds said.
absl::Status RecordVerdicts(Database& db, int64_t sweep_id, const v1::Report& report,
                            int64_t finished_us);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_STORE_KNOWN_GOOD_H_
