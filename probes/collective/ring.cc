#include "probes/collective/ring.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/types/span.h"
#include "probes/common/secret.h"

namespace fabricctl::probes {
namespace {

// [begin, end) of chunk `c` of `count` elements split in `n` chunks.
std::pair<size_t, size_t> Chunk(size_t count, uint32_t n, uint32_t c) {
  const size_t base = count / n, extra = count % n;
  const size_t begin = c * base + std::min<size_t>(c, extra);
  return {begin, begin + base + (c < extra ? 1 : 0)};
}

int MillisUntil(absl::Time deadline) {
  absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
}

// Sends `out` on `send_fd` while receiving `in` on `recv_fd`, interleaved by poll(2), until
// both are done. Adds to `send_time` how long the sending took.
absl::Status ExchangeFds(int send_fd, absl::Span<const char> out_span, int recv_fd,
                         absl::Span<char> in_span, absl::Time deadline, absl::Duration* send_time) {
  const char* out = out_span.data();
  char* in = in_span.data();
  const size_t out_len = out_span.size(), in_len = in_span.size();
  size_t sent = 0, got = 0;
  const absl::Time start = absl::Now();
  absl::Time send_done = out_len == 0 ? start : absl::InfinitePast();
  while (sent < out_len || got < in_len) {
    pollfd fds[2];
    int n = 0;
    int send_slot = -1, recv_slot = -1;
    if (sent < out_len) {
      fds[n] = {send_fd, POLLOUT, 0};
      send_slot = n++;
    }
    if (got < in_len) {
      fds[n] = {recv_fd, POLLIN, 0};
      recv_slot = n++;
    }
    int ready = ::poll(fds, static_cast<nfds_t>(n), MillisUntil(deadline));
    if (ready == 0) return absl::DeadlineExceededError("ring: a neighbour stopped answering");
    if (ready < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("ring: poll: ", std::strerror(errno)));
    }
    if (send_slot >= 0 && (fds[send_slot].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t k = ::send(send_fd, out + sent, out_len - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (k > 0) {
        sent += static_cast<size_t>(k);
        if (sent == out_len) send_done = absl::Now();
      } else if (k < 0 && errno != EAGAIN && errno != EINTR) {
        return absl::UnavailableError(
            absl::StrCat("ring: send to the right: ", std::strerror(errno)));
      }
    }
    if (recv_slot >= 0 && (fds[recv_slot].revents & (POLLIN | POLLERR | POLLHUP))) {
      ssize_t k = ::recv(recv_fd, in + got, in_len - got, MSG_DONTWAIT);
      if (k > 0) {
        got += static_cast<size_t>(k);
      } else if (k == 0) {
        return absl::UnavailableError("ring: the left neighbour closed the connection");
      } else if (errno != EAGAIN && errno != EINTR) {
        return absl::UnavailableError(
            absl::StrCat("ring: receive from the left: ", std::strerror(errno)));
      }
    }
  }
  if (send_time != nullptr && send_done != absl::InfinitePast()) *send_time += send_done - start;
  return absl::OkStatus();
}

}  // namespace

namespace {

// A small send buffer keeps a rank's send time tied to its outgoing link's rate, so that a slow
// link shows in the send time of the rank it leaves (with the default autotuned buffers of
// several MiB, a chunk vanishes into the buffer and the delay surfaces elsewhere in the ring).
constexpr int kRingSendBuffer = 256 << 10;

void LimitSendBuffer(int fd) {
  int bytes = kRingSendBuffer;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
}

}  // namespace

namespace {

constexpr size_t kMaxRingToken = 64;
// A connection to a rank's listener has this long to prove it is the left neighbour's.
constexpr absl::Duration kProveWithin = absl::Seconds(2);
// Connections waiting to prove themselves at once; a newcomer beyond makes the oldest go.
constexpr size_t kMaxPending = 16;

// A connection that has not yet said its hello, and what it has said so far.
struct Pending {
  net::UniqueFd fd;
  absl::Time by;
  std::string said;
};

// The bytes the hello still needs after `said`: the secret's length, the secret, the rank.
size_t HelloNeeds(const std::string& said) {
  if (said.empty()) return 1;
  return 1 + static_cast<unsigned char>(said[0]) + sizeof(uint32_t) - said.size();
}

enum class Proof { kMore, kProven, kStranger };

// What `said` proves so far: the secret comes first, so that a stranger is known (and dropped)
// by its first bytes; then the rank, which must be the left neighbour's.
Proof Judge(const std::string& said, const std::string& secret, uint32_t left) {
  if (said.empty()) return Proof::kMore;
  const size_t length = static_cast<unsigned char>(said[0]);
  if (length != secret.size() || length > kMaxRingToken) return Proof::kStranger;
  if (said.size() < 1 + length) return Proof::kMore;
  if (!SameSecret(said.substr(1, length), secret)) return Proof::kStranger;
  if (said.size() < 1 + length + sizeof(uint32_t)) return Proof::kMore;
  uint32_t who = 0;
  std::memcpy(&who, said.data() + 1 + length, sizeof(who));
  return ntohl(who) == left ? Proof::kProven : Proof::kStranger;
}

// Reads what `p` has sent, never past its hello (its data follows at once); false when it is
// a stranger, closed or failed.
bool Listen(Pending& p, const std::string& secret, uint32_t left, bool* proven) {
  char buffer[1 + kMaxRingToken + sizeof(uint32_t)];
  const size_t want = std::min(HelloNeeds(p.said), sizeof(buffer));
  const ssize_t k = ::recv(p.fd.get(), buffer, want, MSG_DONTWAIT);
  if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) return false;
  if (k > 0) p.said.append(buffer, static_cast<size_t>(k));
  const Proof proof = Judge(p.said, secret, left);
  *proven = proof == Proof::kProven;
  return proof != Proof::kStranger;
}

// The left neighbour's connection to `listener`: the first that proves itself (its hello, the
// listener's secret then its rank, within kProveWithin of connecting). Connections are heard
// side by side: one that says anything else goes at once, one that stays quiet goes at its
// time, and when kMaxPending wait, the oldest goes to make room, so a stranger's idle
// connections cannot keep the neighbour out.
absl::StatusOr<net::UniqueFd> AcceptLeft(const net::Listener& listener, const std::string& secret,
                                         uint32_t left, absl::Time deadline) {
  std::vector<Pending> pending;
  while (absl::Now() < deadline) {
    absl::Time wake = deadline;
    for (const Pending& p : pending) wake = std::min(wake, p.by);
    std::vector<pollfd> fds{{listener.fd.get(), POLLIN, 0}};
    for (const Pending& p : pending) fds.push_back({p.fd.get(), POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), MillisUntil(wake));
    if (ready < 0 && errno != EINTR)
      return absl::InternalError(absl::StrCat("ring: poll: ", std::strerror(errno)));
    std::vector<Pending> kept;
    for (size_t i = 0; i < pending.size(); ++i) {
      bool proven = false;
      const bool heard = ready > 0 && (fds[i + 1].revents & (POLLIN | POLLERR | POLLHUP));
      if (heard && !Listen(pending[i], secret, left, &proven)) continue;
      if (proven) return std::move(pending[i].fd);
      if (absl::Now() < pending[i].by) kept.push_back(std::move(pending[i]));
    }
    pending = std::move(kept);
    if (ready > 0 && (fds[0].revents & POLLIN)) {
      auto fd = net::AcceptTcp(listener, absl::ZeroDuration());
      if (fd.ok()) {
        if (pending.size() >= kMaxPending) pending.erase(pending.begin());
        pending.push_back({*std::move(fd), absl::Now() + kProveWithin, ""});
      }
    }
  }
  return absl::DeadlineExceededError("ring: the left neighbour never connected");
}

}  // namespace

absl::StatusOr<RingLinks> JoinRing(uint32_t rank, const std::vector<RankAddress>& ranks,
                                   const net::Listener& listener, absl::Duration timeout) {
  const uint32_t n = static_cast<uint32_t>(ranks.size());
  if (n < 2 || rank >= n)
    return absl::InvalidArgumentError("ring: need 2 or more ranks and rank < n");
  const absl::Time deadline = absl::Now() + timeout;
  RingLinks links;
  const RankAddress& right = ranks[(rank + 1) % n];
  // Connect to the right while accepting from the left: with two ranks they are one peer.
  absl::Status connect_status;
  std::thread connector([&] {
    auto fd = net::ConnectTcp(right.host, right.port, timeout);
    if (!fd.ok()) {
      connect_status = fd.status();
      return;
    }
    LimitSendBuffer(fd->get());
    // The right neighbour's listener's secret (its length first), then this rank.
    const std::string token = right.token.substr(0, kMaxRingToken);
    std::string hello(1, static_cast<char>(token.size()));
    hello += token;
    const uint32_t me = htonl(rank);
    hello.append(reinterpret_cast<const char*>(&me), sizeof(me));
    connect_status = net::SendAll(fd->get(), hello.data(), hello.size(), deadline);
    links.right = *std::move(fd);
  });
  auto left = AcceptLeft(listener, ranks[rank].token, (rank + n - 1) % n, deadline);
  connector.join();
  if (!connect_status.ok()) return connect_status;
  if (!left.ok()) return left.status();
  links.left = *std::move(left);
  return links;
}

absl::Status TcpRing::Exchange(const char* out, size_t out_len, char* in, size_t in_len,
                               absl::Time deadline, absl::Duration* send_time) {
  return ExchangeFds(links_.right.get(), absl::MakeConstSpan(out, out_len), links_.left.get(),
                     absl::MakeSpan(in, in_len), deadline, send_time);
}

absl::Status RingAllreduce(RingTransport& ring, uint32_t rank, uint32_t n, absl::Span<float> values,
                           absl::Time deadline, RingStats* stats) {
  float* data = values.data();
  const size_t count = values.size();
  if (n < 2) return absl::OkStatus();
  std::vector<float> incoming(count / n + 1);
  absl::Duration send_time = absl::ZeroDuration();
  uint64_t sent = 0;
  // Reduce-scatter: after step s, chunk (rank - s - 1) holds the sum of s + 2 ranks.
  for (uint32_t step = 0; step + 1 < n; ++step) {
    const auto [sb, se] = Chunk(count, n, (rank + n - step) % n);
    const auto [rb, re] = Chunk(count, n, (rank + n - step - 1) % n);
    if (auto s = ring.Exchange(reinterpret_cast<const char*>(data + sb), (se - sb) * sizeof(float),
                               reinterpret_cast<char*>(incoming.data()), (re - rb) * sizeof(float),
                               deadline, &send_time);
        !s.ok()) {
      return s;
    }
    for (size_t i = rb; i < re; ++i) data[i] += incoming[i - rb];
    sent += (se - sb) * sizeof(float);
  }
  // All-gather: the complete chunk (rank + 1) travels round the ring.
  for (uint32_t step = 0; step + 1 < n; ++step) {
    const auto [sb, se] = Chunk(count, n, (rank + 1 + n - step) % n);
    const auto [rb, re] = Chunk(count, n, (rank + n - step) % n);
    if (auto s = ring.Exchange(reinterpret_cast<const char*>(data + sb), (se - sb) * sizeof(float),
                               reinterpret_cast<char*>(data + rb), (re - rb) * sizeof(float),
                               deadline, &send_time);
        !s.ok()) {
      return s;
    }
    sent += (se - sb) * sizeof(float);
  }
  if (stats != nullptr) {
    stats->send_time += send_time;
    stats->bytes_sent += sent;
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::Duration> TimeRingLink(RingTransport& ring, size_t bytes,
                                            absl::Time deadline) {
  std::vector<char> out(bytes, 'r'), in(bytes);
  absl::Duration send_time = absl::ZeroDuration();
  if (auto s = ring.Exchange(out.data(), bytes, in.data(), bytes, deadline, &send_time); !s.ok()) {
    return s;
  }
  return send_time;
}

}  // namespace fabricctl::probes
