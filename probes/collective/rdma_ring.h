#ifndef FABRICCTL_PROBES_COLLECTIVE_RDMA_RING_H_
#define FABRICCTL_PROBES_COLLECTIVE_RDMA_RING_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "probes/collective/ring.h"
#include "probes/common/params.h"
#include "probes/rdma/endpoint.h"
#include "proto/probe.pb.h"

namespace fabricctl::probes {

// The ring over RDMA: two RC queue pairs per rank, one receiving from the left neighbour and
// one sending to the right, carrying SENDs of at most slot_bytes() from registered host
// memory. Two receives are always posted (double buffering, so a neighbour a step ahead
// rarely meets an empty queue; when it does, the RNR retry makes it wait) and two sends may
// be in flight. Data is copied into the send slots and out of the receive slots.
//
// Not thread-safe: one rank's thread drives it.
class RdmaRing final : public RingTransport {
 public:
  // Opens the device of `selection` (the first with an active port when empty) with slots of
  // `slot_bytes` (4 KiB to 4 MiB) and posts the receives. NotFound without an RDMA device.
  static absl::StatusOr<std::unique_ptr<RdmaRing>> Open(const RdmaParams& selection,
                                                        size_t slot_bytes);

  // This rank's connection data: qps[0] receives from the left, qps[1] sends to the right.
  void Describe(v1::Endpoint* endpoint) const;
  // Connects the receiving QP to the left neighbour's sending one and the sending QP to the
  // right neighbour's receiving one (their Describe()).
  absl::Status Connect(const v1::Endpoint& left, const v1::Endpoint& right);

  absl::Status Exchange(const char* out, size_t out_len, char* in, size_t in_len,
                        absl::Time deadline, absl::Duration* send_time) override;

  size_t slot_bytes() const { return slot_; }
  // "rxe0:1".
  std::string label() const { return to_right_->label(); }

 private:
  RdmaRing() = default;

  size_t slot_ = 0;
  std::unique_ptr<RdmaEndpoint> from_left_;
  std::unique_ptr<RdmaEndpoint> to_right_;
  uint64_t sends_ = 0;     // SENDs posted so far: slot sends_ % 2 is next
  uint64_t receives_ = 0;  // receives completed so far: slot receives_ % 2 completes next
};

// Slot size for an all-reduce of `largest_bytes` over `nranks`: one chunk, within 4 KiB..4 MiB.
size_t RdmaRingSlotBytes(uint64_t largest_bytes, uint32_t nranks);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COLLECTIVE_RDMA_RING_H_
