#ifndef FABRICCTL_CONTROLLER_STORE_DRAINED_H_
#define FABRICCTL_CONTROLLER_STORE_DRAINED_H_

// The store's own: what a finished sweep's report says of the drains the controller may give
// back (undrain.enabled).
#include <cstdint>

#include "absl/status/status.h"
#include "controller/store/database.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

// Inside FinishSweep's transaction: each node the completed sweep `sweep_id` drained is
// remembered from `finished_us` with what it was drained for (a node drained already keeps its
// first drain); each node it gave back is forgotten.
absl::Status RecordDrains(Database& db, int64_t sweep_id, const v1::Report& report,
                          int64_t finished_us);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_STORE_DRAINED_H_
