#ifndef FABRICCTL_PROBES_COLLECTIVE_RING_H_
#define FABRICCTL_PROBES_COLLECTIVE_RING_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "base/socket.h"

namespace fabricctl::probes {

// One rank's two connections in a ring: it receives from its left neighbour (rank - 1) and
// sends to its right neighbour (rank + 1).
struct RingLinks {
  net::UniqueFd left;
  net::UniqueFd right;
};

struct RankAddress {
  std::string host;
  uint16_t port = 0;
  // The secret its listener takes (Endpoint.token, made when the rank was started); empty: none.
  std::string token;
};

// Joins a ring of `ranks.size()` ranks over TCP: connects to the right neighbour's listener
// and accepts the left neighbour's connection on `listener`. The connecting side says the
// listener's secret (ranks[right].token) first, then its rank; a connection that lacks this
// rank's secret (ranks[rank].token), names another rank or says nothing within 2 s is dropped,
// and connections are heard side by side (up to 16 waiting; the oldest makes room), so a
// stranger can neither take the left neighbour's place nor keep it out with idle
// connections. Every rank calls this at about the same time.
absl::StatusOr<RingLinks> JoinRing(uint32_t rank, const std::vector<RankAddress>& ranks,
                                   const net::Listener& listener, absl::Duration timeout);

// How a rank moves bytes: to its right neighbour while receiving from its left.
class RingTransport {
 public:
  virtual ~RingTransport() = default;
  // Sends `out` to the right while receiving `in_len` bytes from the left into `in`; both are
  // done when it returns. Adds to *send_time how long the sending took.
  virtual absl::Status Exchange(const char* out, size_t out_len, char* in, size_t in_len,
                                absl::Time deadline, absl::Duration* send_time) = 0;
};

// The ring over TCP: the two connections of JoinRing, interleaved with poll(2).
class TcpRing final : public RingTransport {
 public:
  explicit TcpRing(RingLinks& links) : links_(links) {}
  absl::Status Exchange(const char* out, size_t out_len, char* in, size_t in_len,
                        absl::Time deadline, absl::Duration* send_time) override;

 private:
  RingLinks& links_;
};

// What one all-reduce cost this rank.
struct RingStats {
  // Time this rank's sends to its right neighbour took, from the start of each step until the
  // chunk was handed to the kernel: a slow link out of this rank fills the socket buffer and
  // shows here, while a slow link elsewhere only delays what this rank receives.
  absl::Duration send_time = absl::ZeroDuration();
  uint64_t bytes_sent = 0;
};

// Sums `data` (count floats, the same count on every rank) across the ring, in place: n-1
// reduce-scatter steps then n-1 all-gather steps, each sending one chunk to the right while
// receiving one from the left (interleaved, so both links stay busy). Chunks are count/n
// elements, the first count%n chunks one larger, so any count works. This is the
// bandwidth-optimal ring: each rank sends 2(n-1)/n of the data, which is nccl-tests' busbw
// factor.
absl::Status RingAllreduce(RingTransport& ring, uint32_t rank, uint32_t nranks,
                           absl::Span<float> data, absl::Time deadline, RingStats* stats);

// Times this rank's link to the right on its own: every rank sends `bytes` to the right and
// receives as many from the left in a single step, so no rank waits on another's earlier
// steps (in an all-reduce, a slow link stalls the ranks upstream of it, and their send
// times with it). Returns how long this rank's sending took.
absl::StatusOr<absl::Duration> TimeRingLink(RingTransport& ring, size_t bytes, absl::Time deadline);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COLLECTIVE_RING_H_
