#ifndef FABRICCTL_REPORT_CHUNKS_H_
#define FABRICCTL_REPORT_CHUNKS_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/report.pb.h"

// A report of any size over a stream whose messages gRPC bounds (4 MiB by default on the
// receiving side): the head first (verdict, summary and drain list, sweep), then the findings,
// the nodes and the pairs in parts of about `max_part_bytes`, then an end with the counts.
// A reader that misses the end has no report, never half of one.
namespace fabricctl::report {

// What a part holds at most, so that any part fits a receiver's limit with room to spare.
inline constexpr size_t kReportPartBytes = 1 << 20;
// What a reader assembles at most: a report past this is refused (ResourceExhausted).
inline constexpr uint64_t kMaxAssembledBytes = 2ull << 30;

// Sends `report` through `write`, which returns false when the stream broke; returns false
// then, at once. An entry larger than `max_part_bytes` travels in a part of its own.
bool SendReportChunks(const v1::Report& report, size_t max_part_bytes,
                      const std::function<bool(v1::ReportChunk)>& write);

// Puts a report back together from its chunks, in the order they were sent.
class ReportAssembler {
 public:
  // Takes the next chunk. FailedPrecondition for one out of order (a part before the head,
  // anything after the end) or an end whose counts disagree with what came;
  // ResourceExhausted past kMaxAssembledBytes.
  absl::Status Add(v1::ReportChunk chunk);
  // Whether the end has come.
  bool complete() const { return complete_; }
  // The whole report; DataLoss when the end never came.
  absl::StatusOr<v1::Report> Take();

 private:
  v1::Report report_;
  bool head_ = false;
  bool complete_ = false;
  uint64_t bytes_ = 0;
};

}  // namespace fabricctl::report

#endif  // FABRICCTL_REPORT_CHUNKS_H_
