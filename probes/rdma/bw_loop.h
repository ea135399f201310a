#ifndef FABRICCTL_PROBES_RDMA_BW_LOOP_H_
#define FABRICCTL_PROBES_RDMA_BW_LOOP_H_

// The bandwidth probes' loop, as perftest's run_iter_bw and run_iter_bi: one thread per side
// posting to every queue pair in turn (--qps), polling each one's send CQ, and with SEND both
// ways serving the peer's messages between posts. The probe family's own (rdma_probes.cc).
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "probes/common/params.h"
#include "probes/common/result.h"
#include "probes/rdma/endpoint.h"
#include "probes/rdma/rdma_probes.h"

namespace fabricctl::probes::rdma_internal {

// The receiving half of SEND on one queue pair for one size: receives posted before the sender
// starts, and reposted as they complete, for every message of the size (warm-up and
// iterations), or by duration until the sender says how many it sent (ReceiveAll). Receives are
// posted at the largest size, so that those a size leaves posted (by duration) serve the next.
class SendReceiver {
 public:
  SendReceiver(RdmaEndpoint& ep, const ProbeParams& params) : ep_(ep), params_(params) {}

  // Before the sender starts: the first receives.
  absl::Status Prepare();
  // Whatever has arrived, without waiting: counted, and its receives posted again.
  absl::Status PollOnce();
  // By duration: the sender's count, once it is told.
  void Expect(uint64_t messages) { expected_ = messages; }
  uint64_t received() const { return received_; }
  bool done() const { return received_ >= expected_; }

 private:
  absl::Status PostMore();

  RdmaEndpoint& ep_;
  const ProbeParams& params_;
  uint64_t expected_ = 0, received_ = 0, next_id_ = 0, outstanding_ = 0;
};

// Until every queue pair's receiver has every message of the size, served in turn by one
// thread; by duration, each queue pair's count is read from `control` first (the sender's
// TellSent).
absl::Status ReceiveAll(std::vector<SendReceiver>& receivers, int control,
                        const ProbeParams& params);

// One size of the bandwidth loop on this side: the sums over its queue pairs, each queue pair's
// own figure (more than one), and the messages each sent (warm-up included).
struct BwResult {
  BwPoint point;
  std::vector<double> per_qp_gbps;
  std::vector<uint64_t> sent;
};

// By duration the peer counts this side's SENDs until it has as many as this side says.
absl::Status TellSent(int control, const BwResult& result);

// One size from this side over `eps` (one per queue pair): warm-up, then the measured loop, with
// perftest's CQ moderation rule (100, and 1 above 8 KiB, never above the TX depth); by duration
// (perftest -D) as many messages as fit. `receivers` (SEND both ways, one a queue pair): the
// peer's messages are served between posts. Time runs from the first post to the last
// completion of any queue pair; the peak only for one queue pair by count.
absl::Status MeasureBw(const std::vector<RdmaEndpoint*>& eps, RdmaVerb verb, uint64_t size,
                       const ProbeParams& params, std::vector<SendReceiver>* receivers,
                       BwResult* out);

}  // namespace fabricctl::probes::rdma_internal

#endif  // FABRICCTL_PROBES_RDMA_BW_LOOP_H_
