#include "probes/collective/rdma_ring.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"

namespace fabricctl::probes {
namespace {

constexpr size_t kMinSlot = 4 << 10;
constexpr size_t kMaxSlot = 4 << 20;
constexpr int kSlots = 2;

absl::Status CompletionError(const ibv_wc& wc, const char* what) {
  return absl::UnavailableError(absl::StrCat("ring: ", what, " completed with ",
                                             ibv_wc_status_str(wc.status), " (", wc.status,
                                             "): a neighbour's queue pair is gone"));
}

// Messages one exchange of `bytes` takes: at least one (an empty chunk still takes its step).
size_t Pieces(size_t bytes, size_t slot) { return std::max<size_t>(1, (bytes + slot - 1) / slot); }

}  // namespace

size_t RdmaRingSlotBytes(uint64_t largest_bytes, uint32_t nranks) {
  const uint64_t chunk = largest_bytes / std::max<uint32_t>(1, nranks) + sizeof(float);
  return std::clamp<size_t>((chunk + 4095) & ~uint64_t{4095}, kMinSlot, kMaxSlot);
}

absl::StatusOr<std::unique_ptr<RdmaRing>> RdmaRing::Open(const RdmaParams& selection,
                                                         size_t slot_bytes) {
  if (slot_bytes < kMinSlot || slot_bytes > kMaxSlot) {
    return absl::InvalidArgumentError("ring: slot size outside 4 KiB..4 MiB");
  }
  std::unique_ptr<RdmaRing> ring(new RdmaRing());
  ring->slot_ = slot_bytes;
  EndpointOptions options;
  options.selection = selection;
  options.message_bytes = kSlots * slot_bytes;
  options.send_depth = kSlots;
  options.recv_depth = kSlots;
  auto left = RdmaEndpoint::Open(options);
  if (!left.ok()) return left.status();
  auto right = RdmaEndpoint::Open(options);
  if (!right.ok()) return right.status();
  ring->from_left_ = *std::move(left);
  ring->to_right_ = *std::move(right);
  // Receives may be posted from INIT on: whatever arrives after Connect finds them.
  for (int s = 0; s < kSlots; ++s) {
    RETURN_IF_ERROR(ring->from_left_->PostRecv(slot_bytes, s, s * slot_bytes));
  }
  return ring;
}

void RdmaRing::Describe(v1::Endpoint* endpoint) const {
  endpoint->clear_qps();
  *endpoint->add_qps() = from_left_->LocalInfo();
  *endpoint->add_qps() = to_right_->LocalInfo();
}

absl::Status RdmaRing::Connect(const v1::Endpoint& left, const v1::Endpoint& right) {
  if (left.qps_size() != 2 || right.qps_size() != 2) {
    return absl::InvalidArgumentError("ring: a neighbour's endpoint lacks its two queue pairs");
  }
  RETURN_IF_ERROR(from_left_->Connect(left.qps(1)));
  return to_right_->Connect(right.qps(0));
}

absl::Status RdmaRing::Exchange(const char* out, size_t out_len, char* in, size_t in_len,
                                absl::Time deadline, absl::Duration* send_time) {
  const size_t send_pieces = Pieces(out_len, slot_), recv_pieces = Pieces(in_len, slot_);
  size_t posted = 0, sent = 0, received = 0, got = 0;
  const absl::Time start = absl::Now();
  absl::Time send_done = start;
  uint64_t idle = 0;
  while (sent < send_pieces || received < recv_pieces) {
    // Keep up to two SENDs in flight, each from its own slot.
    while (posted < send_pieces && posted - sent < kSlots) {
      const size_t offset = posted * slot_;
      const size_t length = offset < out_len ? std::min(slot_, out_len - offset) : 0;
      const uint64_t slot_offset = (sends_ % kSlots) * slot_;
      if (length > 0) std::memcpy(to_right_->send_area() + slot_offset, out + offset, length);
      if (auto s = to_right_->PostSend(length, sends_, /*signaled=*/true, slot_offset); !s.ok()) {
        return s;
      }
      ++sends_;
      ++posted;
    }
    bool progress = false;
    ibv_wc wc[4];
    int n = to_right_->PollSend(wc, 4);
    if (n < 0) return absl::InternalError("ring: ibv_poll_cq (send) failed");
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) return CompletionError(wc[i], "a send to the right");
      if (++sent == send_pieces) send_done = absl::Now();
      progress = true;
    }
    // Only this step's messages: the left neighbour may already be sending its next step's.
    n = received < recv_pieces
            ? from_left_->PollRecv(wc,
                                   static_cast<int>(std::min<size_t>(4, recv_pieces - received)))
            : 0;
    if (n < 0) return absl::InternalError("ring: ibv_poll_cq (receive) failed");
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) return CompletionError(wc[i], "a receive from the left");
      // Receives complete in the order they were posted: slots alternate.
      const uint64_t slot_offset = (receives_ % kSlots) * slot_;
      const size_t length = wc[i].byte_len;
      if (received >= recv_pieces || length > in_len - got) {
        return absl::DataLossError("ring: the left neighbour sent more than its chunk");
      }
      if (length > 0) std::memcpy(in + got, from_left_->receive_area() + slot_offset, length);
      got += length;
      ++received;
      ++receives_;
      RETURN_IF_ERROR(from_left_->PostRecv(slot_, receives_, slot_offset));
      progress = true;
    }
    if (!progress && (++idle & 1023) == 0 && absl::Now() > deadline) {
      return absl::DeadlineExceededError("ring: a neighbour stopped answering");
    }
  }
  if (got != in_len) {
    return absl::DataLossError(
        absl::StrCat("ring: received ", got, " bytes of a ", in_len, "-byte chunk"));
  }
  if (send_time != nullptr) *send_time += send_done - start;
  return absl::OkStatus();
}

}  // namespace fabricctl::probes
