#include "probes/collective/allreduce.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "probes/common/stats.h"

namespace fabricctl::probes {

namespace {

// The RDMA ring's queue pairs connected to both neighbours, and ready on both sides: once both
// neighbours say so over the TCP links, their queue pairs take our SENDs.
absl::Status ConnectRdma(RdmaRing& rdma, const RingLinks& links, uint32_t rank,
                         const std::vector<v1::Endpoint>& endpoints, absl::Time deadline) {
  const uint32_t n = static_cast<uint32_t>(endpoints.size());
  RETURN_IF_ERROR(rdma.Connect(endpoints[(rank + n - 1) % n], endpoints[(rank + 1) % n]));
  const char ready = 'R';
  char heard[2];
  for (int fd : {links.left.get(), links.right.get()}) {
    RETURN_IF_ERROR(net::SendAll(fd, &ready, 1, deadline));
  }
  for (int i = 0; i < 2; ++i) {
    const int fd = i == 0 ? links.left.get() : links.right.get();
    RETURN_IF_ERROR(net::RecvAll(fd, &heard[i], 1, deadline));
  }
  return absl::OkStatus();
}

// Where this rank sits in the ring, and until when it may take.
struct RingSeat {
  RingTransport* ring;
  uint32_t rank, n;
  absl::Time deadline;
};

// One size: the data check, the warm-up, the timed all-reduces, and this rank's link alone.
absl::StatusOr<CollectivePoint> MeasureSize(const RingSeat& seat, uint64_t size,
                                            const ProbeParams& params) {
  RingTransport& ring = *seat.ring;
  const uint32_t rank = seat.rank, n = seat.n;
  const size_t count = std::max<size_t>(1, size / sizeof(float));
  std::vector<float> data(count);
  // The data check: element i of rank r is (r + 1) + (i % 97); the sum is
  // n(n+1)/2 + n (i % 97), exact in float for these magnitudes.
  for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>(rank + 1 + i % 97);
  RingStats ignored;
  RETURN_IF_ERROR(RingAllreduce(ring, rank, n, absl::MakeSpan(data), seat.deadline, &ignored));
  uint64_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    const double want = n * (n + 1) / 2.0 + static_cast<double>(n) * (i % 97);
    if (data[i] != want) ++wrong;
  }
  std::fill(data.begin(), data.end(), 0.0f);  // timed runs reduce zeros: nothing grows
  for (uint64_t i = 0; i < params.warmup_iterations; ++i) {
    RETURN_IF_ERROR(RingAllreduce(ring, rank, n, absl::MakeSpan(data), seat.deadline, &ignored));
  }
  RingStats stats;
  const uint64_t iterations = std::max<uint64_t>(1, params.iterations);
  const absl::Time t0 = absl::Now();
  for (uint64_t i = 0; i < iterations; ++i) {
    RETURN_IF_ERROR(RingAllreduce(ring, rank, n, absl::MakeSpan(data), seat.deadline, &stats));
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - t0) / static_cast<double>(iterations);
  CollectivePoint point;
  point.size_bytes = count * sizeof(float);
  point.time_us = seconds * 1e6;
  point.algbw_gbytes = AllreduceAlgBwGBytes(point.size_bytes, seconds);
  point.busbw_gbytes = AllreduceBusBwGBytes(point.size_bytes, seconds, n);
  point.wrong = wrong;
  // This rank's link on its own, with the ring quiet otherwise (see TimeRingLink).
  ASSIGN_OR_RETURN(
      const absl::Duration link,
      TimeRingLink(ring, std::min<size_t>(point.size_bytes, kLinkTimedBytes), seat.deadline));
  point.send_time_us = absl::ToDoubleMicroseconds(link);
  return point;
}

}  // namespace

ProbeRun RunRingAllreduce(const ProbeParams& params, uint32_t rank,
                          const std::vector<RankAddress>& ranks, const net::Listener& listener,
                          RdmaRing* rdma, const std::vector<v1::Endpoint>& endpoints) {
  ProbeRun run;
  run.kind = "allreduce";
  run.device = rdma != nullptr ? absl::StrCat("rdma ring ", rdma->label()) : "tcp ring";
  const absl::Time started = absl::Now();
  const uint32_t n = static_cast<uint32_t>(ranks.size());
  const absl::Duration bound =
      params.timeout > absl::ZeroDuration() ? params.timeout : absl::Minutes(5);
  const absl::Time deadline = started + bound;
  auto fail = [&](const absl::Status& s) {
    run.outcome = absl::IsDeadlineExceeded(s) ? Outcome::kTimeout : Outcome::kFailed;
    run.reason = absl::StrCat("rank ", rank, ": ", s.message());
    run.collective.clear();
    return run;
  };
  auto links = JoinRing(rank, ranks, listener, std::min(bound, absl::Seconds(30)));
  if (!links.ok()) return fail(links.status());
  TcpRing tcp(*links);
  RingTransport* ring = &tcp;
  if (rdma != nullptr) {
    if (endpoints.size() != n)
      return fail(absl::InvalidArgumentError("one endpoint per rank expected"));
    if (auto s = ConnectRdma(*rdma, *links, rank, endpoints, deadline); !s.ok()) return fail(s);
    ring = rdma;
  }
  for (uint64_t size : params.sizes_bytes) {
    auto point = MeasureSize(RingSeat{ring, rank, n, deadline}, size, params);
    if (!point.ok()) return fail(point.status());
    run.collective.push_back(*point);
  }
  run.outcome = Outcome::kOk;
  run.elapsed_s = absl::ToDoubleSeconds(absl::Now() - started);
  return run;
}

}  // namespace fabricctl::probes
