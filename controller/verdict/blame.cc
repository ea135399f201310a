#include "controller/verdict/blame.h"

#include <algorithm>

namespace fabricctl::controller {
namespace {

// The bad share of a node's second side that makes a one-sided blame a whole-node one.
constexpr double kSecondSide = 0.25;

struct Counts {
  uint32_t send = 0, send_bad = 0, receive = 0, receive_bad = 0;
};

bool Has(Side side, Side part) {
  return (static_cast<uint8_t>(side) & static_cast<uint8_t>(part)) != 0;
}

// Adds (or with delta -1 removes) an observation to the counts of `node`, one of its ends.
void Count(Counts& c, const Observation& o, uint32_t node, int delta) {
  const bool as_sender = !o.directed || o.a == node;
  const bool as_receiver = !o.directed || o.b == node;
  if (as_sender) {
    c.send += delta;
    if (o.bad) c.send_bad += delta;
  }
  if (as_receiver) {
    c.receive += delta;
    if (o.bad) c.receive_bad += delta;
  }
}

}  // namespace

bool Explains(const std::vector<Side>& blamed, const Observation& o) {
  if (!o.directed) return blamed[o.a] != Side::kNone || blamed[o.b] != Side::kNone;
  return Has(blamed[o.a], Side::kSend) || Has(blamed[o.b], Side::kReceive);
}

std::vector<Side> Blame(size_t nodes, const std::vector<Observation>& observations,
                        uint32_t min_peers, const std::vector<bool>& eligible) {
  std::vector<Counts> counts(nodes);
  std::vector<std::vector<uint32_t>> bad_of(nodes);  // bad observations by node
  for (uint32_t k = 0; k < observations.size(); ++k) {
    const Observation& o = observations[k];
    Count(counts[o.a], o, o.a, 1);
    Count(counts[o.b], o, o.b, 1);
    if (o.bad) {
      bad_of[o.a].push_back(k);
      bad_of[o.b].push_back(k);
    }
  }
  std::vector<Side> blamed(nodes, Side::kNone);
  std::vector<bool> explained(observations.size(), false);
  auto share = [min_peers](uint32_t bad, uint32_t all) {
    return all >= min_peers && all > 0 ? static_cast<double>(bad) / all : 0.0;
  };
  for (;;) {
    int best = -1;
    double best_share = 0;
    Side best_side = Side::kNone;
    for (size_t i = 0; i < nodes; ++i) {
      if (blamed[i] != Side::kNone || !eligible[i]) continue;
      const double send = share(counts[i].send_bad, counts[i].send);
      const double receive = share(counts[i].receive_bad, counts[i].receive);
      // Past half on one side blames the node there; its other side too when a good part of
      // that is bad as well (noise spreads a whole-node fault unevenly over the two sides,
      // while a one-sided fault leaves the other side clean).
      const bool send_side = send > 0.5 || (receive > 0.5 && send >= kSecondSide);
      const bool receive_side = receive > 0.5 || (send > 0.5 && receive >= kSecondSide);
      const Side side = static_cast<Side>((send_side ? 1 : 0) | (receive_side ? 2 : 0));
      const double worst = std::max(send, receive);
      if (side != Side::kNone && worst > best_share) {
        best = static_cast<int>(i);
        best_share = worst;
        best_side = side;
      }
    }
    if (best < 0) break;
    const uint32_t node = static_cast<uint32_t>(best);
    blamed[node] = best_side;
    for (uint32_t k : bad_of[node]) {
      const Observation& o = observations[k];
      if (explained[k] || !Explains(blamed, o)) continue;
      explained[k] = true;
      const uint32_t other = o.a == node ? o.b : o.a;
      if (blamed[other] == Side::kNone) Count(counts[other], o, other, -1);
    }
  }
  return blamed;
}

}  // namespace fabricctl::controller
