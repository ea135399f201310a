#include "probes/rdma/bw_loop.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/socket.h"
#include "base/status_macros.h"
#include "probes/common/stats.h"
#include "probes/rdma/session.h"

namespace fabricctl::probes::rdma_internal {

absl::Status SendReceiver::Prepare() {
  expected_ = params_.duration > absl::ZeroDuration()
                  ? std::numeric_limits<uint64_t>::max()
                  : params_.warmup_iterations + params_.iterations;
  received_ = 0;
  return PostMore();
}

absl::Status SendReceiver::PostMore() {
  const uint64_t length = MaxSize(params_);
  while (outstanding_ < kRxDepthSend && received_ + outstanding_ < expected_) {
    RETURN_IF_ERROR(ep_.PostRecv(length, next_id_++));
    ++outstanding_;
  }
  return absl::OkStatus();
}

absl::Status SendReceiver::PollOnce() {
  ibv_wc wc[16];
  const int n = ep_.PollRecv(wc, 16);
  if (n < 0) return absl::InternalError("ibv_poll_cq failed");
  for (int i = 0; i < n; ++i) {
    if (wc[i].status != IBV_WC_SUCCESS) return CompletionError(wc[i]);
    ++received_;
    --outstanding_;
  }
  return n > 0 ? PostMore() : absl::OkStatus();
}

namespace {

// The sender's counts, one a queue pair (a single queue pair's may come as `messages` alone).
absl::Status ReadCounts(std::vector<SendReceiver>& receivers, int control) {
  v1::ProbeHello told;
  RETURN_IF_ERROR(net::RecvFrame(control, &told, absl::Now() + kControlTimeout));
  if (told.messages_per_qp_size() == static_cast<int>(receivers.size())) {
    for (size_t q = 0; q < receivers.size(); ++q) receivers[q].Expect(told.messages_per_qp(q));
  } else if (receivers.size() == 1 && told.messages_per_qp_size() == 0) {
    receivers[0].Expect(told.messages());
  } else {
    return absl::InvalidArgumentError(absl::StrCat("the sender told ", told.messages_per_qp_size(),
                                                   " counts for ", receivers.size(),
                                                   " queue pairs"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReceiveAll(std::vector<SendReceiver>& receivers, int control,
                        const ProbeParams& params) {
  bool told = params.duration <= absl::ZeroDuration();  // by count each knows its count
  int64_t deadline = NowNs() + absl::ToInt64Nanoseconds(size_timeout + params.duration);
  uint32_t idle = 0;
  for (;;) {
    bool progress = false, done = told;
    for (auto& r : receivers) {
      const uint64_t before = r.received();
      RETURN_IF_ERROR(r.PollOnce());
      progress = progress || r.received() != before;
      done = done && r.done();
    }
    if (done) return absl::OkStatus();
    if (progress) {
      deadline = NowNs() + absl::ToInt64Nanoseconds(size_timeout);
      continue;
    }
    if ((++idle & 1023) != 0) continue;
    if (!told && net::Readable(control)) {
      RETURN_IF_ERROR(ReadCounts(receivers, control));
      told = true;
    }
    if (current_cancel != nullptr && current_cancel->cancelled()) {
      return absl::CancelledError("probe cancelled");
    }
    if (NowNs() > deadline) return absl::DeadlineExceededError("receive: no message");
  }
}

absl::Status TellSent(int control, const BwResult& result) {
  v1::ProbeHello done;
  uint64_t total = 0;
  for (uint64_t n : result.sent) {
    done.add_messages_per_qp(n);
    total += n;
  }
  done.set_messages(total);
  return net::SendFrame(control, done, absl::Now() + kControlTimeout);
}

namespace {

// One run of the loop: the verb, the message size, how many may be in flight on each queue pair
// and how often one is signaled; with `stop_ns` (perftest -D), posting stops at that time.
// Posts and completions are recorded where asked (one queue pair: the peak's windows).
struct BwLoop {
  RdmaVerb verb;
  uint64_t size = 0;
  uint32_t tx_depth = 1;
  uint32_t cq_mod = 1;
  int64_t stop_ns = 0;
  std::vector<int64_t>* posted_ns = nullptr;
  std::vector<Completion>* completions = nullptr;
  std::vector<SendReceiver>* receivers = nullptr;
};

// Posts to queue pair `q` while it has room; by duration the post at the stop is its last.
absl::Status PostSome(RdmaEndpoint& ep, const BwLoop& loop, uint64_t& posted, uint64_t completed,
                      uint64_t& messages) {
  while (posted < messages && posted - completed < loop.tx_depth) {
    if (loop.stop_ns != 0 && NowNs() >= loop.stop_ns) messages = posted + 1;  // the last one
    const bool signaled = (posted + 1) % loop.cq_mod == 0 || posted + 1 == messages;
    if (loop.posted_ns) loop.posted_ns->push_back(NowNs());
    RETURN_IF_ERROR(loop.verb == RdmaVerb::kWrite  ? ep.PostWrite(loop.size, posted, signaled)
                    : loop.verb == RdmaVerb::kRead ? ep.PostRead(loop.size, posted, signaled)
                                                   : ep.PostSend(loop.size, posted, signaled));
    ++posted;
  }
  return absl::OkStatus();
}

// perftest's run_iter_bw over every queue pair in turn: `messages` each (by duration only a
// bound); `sent[q]` says how many each posted.
absl::Status RunBwLoop(const std::vector<RdmaEndpoint*>& eps, const BwLoop& loop, uint64_t messages,
                       std::vector<uint64_t>* sent) {
  const size_t n_qps = eps.size();
  std::vector<uint64_t> posted(n_qps, 0), completed(n_qps, 0), bound(n_qps, messages);
  auto slack = [&] {
    return absl::ToInt64Nanoseconds(size_timeout) + std::max<int64_t>(0, loop.stop_ns - NowNs());
  };
  int64_t deadline = NowNs() + slack();
  uint32_t idle_polls = 0;
  ibv_wc wc[16];
  for (;;) {
    bool pending = false;
    for (size_t q = 0; q < n_qps; ++q) pending = pending || completed[q] < bound[q];
    if (!pending) break;
    if (current_cancel != nullptr && current_cancel->cancelled()) {
      return absl::CancelledError("probe cancelled");
    }
    bool progress = false;
    for (size_t q = 0; q < n_qps; ++q) {
      RETURN_IF_ERROR(PostSome(*eps[q], loop, posted[q], completed[q], bound[q]));
      const int n = eps[q]->PollSend(wc, 16);
      if (n < 0) return absl::InternalError("ibv_poll_cq failed");
      const int64_t now = n > 0 ? NowNs() : 0;
      for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS) return CompletionError(wc[i]);
        completed[q] = wc[i].wr_id + 1;  // unsignaled predecessors completed with it
        if (loop.completions) loop.completions->push_back({wc[i].wr_id, now});
      }
      progress = progress || n > 0;
    }
    if (loop.receivers != nullptr) {
      for (auto& r : *loop.receivers) RETURN_IF_ERROR(r.PollOnce());
    }
    if (progress) {
      deadline = NowNs() + slack();
    } else if ((++idle_polls & 4095) == 0 && NowNs() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "no completion within ", absl::FormatDuration(size_timeout), " (peer gone?)"));
    }
  }
  if (sent) *sent = posted;
  return absl::OkStatus();
}

uint64_t Sum(const std::vector<uint64_t>& v) {
  uint64_t s = 0;
  for (uint64_t x : v) s += x;
  return s;
}

}  // namespace

absl::Status MeasureBw(const std::vector<RdmaEndpoint*>& eps, RdmaVerb verb, uint64_t size,
                       const ProbeParams& params, std::vector<SendReceiver>* receivers,
                       BwResult* out) {
  const bool by_time = params.duration > absl::ZeroDuration();
  uint64_t tx_depth = params.rdma.tx_depth ? params.rdma.tx_depth : kDefaultTxDepthBw;
  if (!by_time) tx_depth = std::min<uint64_t>(tx_depth, params.iterations);
  uint32_t cq_mod = params.rdma.cq_moderation;
  if (cq_mod == 0) cq_mod = size > kCqModerationSizeLimit ? 1 : kDefaultCqModeration;
  cq_mod = std::max<uint32_t>(1, std::min<uint32_t>(cq_mod, static_cast<uint32_t>(tx_depth)));
  std::vector<uint64_t> warm(eps.size(), 0), measured(eps.size(), 0);
  if (params.warmup_iterations > 0) {
    BwLoop warmup{verb, size, static_cast<uint32_t>(tx_depth), cq_mod};
    warmup.receivers = receivers;
    RETURN_IF_ERROR(RunBwLoop(eps, warmup, params.warmup_iterations, &warm));
  }
  const bool one = eps.size() == 1;
  std::vector<int64_t> posted_ns;
  std::vector<Completion> completions;
  // perftest -D: as many messages as fit in the duration; the bound only guards the loop.
  const uint64_t bound = by_time ? std::numeric_limits<uint64_t>::max() : params.iterations;
  if (one && !by_time) posted_ns.reserve(params.iterations);
  const int64_t started = NowNs();
  const int64_t stop_ns = by_time ? started + absl::ToInt64Nanoseconds(params.duration) : 0;
  BwLoop loop{verb,        size,    static_cast<uint32_t>(tx_depth),
              cq_mod,      stop_ns, one && !by_time ? &posted_ns : nullptr,
              &completions};
  loop.receivers = receivers;
  RETURN_IF_ERROR(RunBwLoop(eps, loop, bound, &measured));
  out->sent.assign(eps.size(), 0);
  for (size_t q = 0; q < eps.size(); ++q) out->sent[q] = warm[q] + measured[q];
  int64_t last = started;
  for (const Completion& c : completions) last = std::max(last, c.time_ns);
  // By duration, from the start of the loop (what perftest -D divides by); by count, from the
  // first post.
  const int64_t first = one && !by_time ? posted_ns.front() : started;
  out->point = AverageBandwidth(size, Sum(measured), last - first);
  if (one && !by_time && params.iterations <= kMaxItersForPeak) {
    out->point.bw_peak_gbps = PeakBandwidthGbps(size, posted_ns, completions);
  }
  out->per_qp_gbps.clear();
  if (!one) {
    for (uint64_t m : measured)
      out->per_qp_gbps.push_back(AverageBandwidth(size, m, last - first).bw_avg_gbps);
  }
  return absl::OkStatus();
}

}  // namespace fabricctl::probes::rdma_internal
