#include "controller/sweep/companions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "controller/verdict/robust_stats.h"

namespace fabricctl::controller::sweep {
namespace {

std::vector<float> Loads(const PairInput& p) {
  std::vector<float> out;
  for (const auto& d : p.Directions()) {
    if (!std::isnan(d.figures.bw_gbps) && d.figures.concurrency > 0)
      out.push_back(d.figures.concurrency);
  }
  if (!std::isnan(p.lat_us) && p.lat_concurrency > 0) out.push_back(p.lat_concurrency);
  return out;
}

}  // namespace

double FullRoundLoad(const AnalysisInput& in) {
  std::vector<float> loads;
  for (const PairInput& p : in.pairs) {
    if (p.status != PairStatus::kMeasured) continue;
    for (float c : Loads(p)) loads.push_back(c);
  }
  if (loads.empty()) return 0;
  const size_t q = loads.size() * 3 / 4;
  std::nth_element(loads.begin(), loads.begin() + q, loads.end());
  return loads[q];
}

bool TakenLight(const PairInput& p, double full) {
  if (p.status != PairStatus::kMeasured) return false;
  for (float c : Loads(p)) {
    if (c < kFullLoadShare * full) return true;
  }
  return false;
}

std::vector<Round> AddCompanions(const AnalysisInput& in, std::vector<Round>& rounds) {
  const double full = FullRoundLoad(in);
  std::vector<Round> companions(rounds.size());
  const long target = std::lround(full);  // pairs moving data at once in a full round
  if (target < 2) return companions;
  std::map<std::pair<uint32_t, uint32_t>, size_t> index;
  auto key = [](uint32_t a, uint32_t b) { return std::make_pair(std::min(a, b), std::max(a, b)); };
  for (size_t k = 0; k < in.pairs.size(); ++k)
    index[key(in.pairs[k].client, in.pairs[k].server)] = k;
  std::set<std::pair<uint32_t, uint32_t>> retested;
  for (const Round& round : rounds) {
    for (const Pair& p : round) retested.insert(key(p.first, p.second));
  }
  auto input = [&](const Pair& p) -> const PairInput* {
    auto it = index.find(key(p.first, p.second));
    return it == index.end() ? nullptr : &in.pairs[it->second];
  };
  std::vector<Round> out_rounds, out_companions, failed_rounds;
  for (Round& round : rounds) {
    const bool light = std::any_of(round.begin(), round.end(), [&](const Pair& p) {
      const PairInput* pi = input(p);
      return pi != nullptr && TakenLight(*pi, full);
    });
    if (!light) {
      out_rounds.push_back(std::move(round));
      out_companions.emplace_back();
      continue;
    }
    Round measured, failed;
    for (const Pair& p : round) {
      const PairInput* pi = input(p);
      (pi == nullptr || pi->status == PairStatus::kMeasured ? measured : failed).push_back(p);
    }
    std::set<uint32_t> used;
    for (const Pair& p : measured) used.insert({p.first, p.second});
    Round mates;
    for (const PairInput& p : in.pairs) {
      if (static_cast<long>(measured.size() + mates.size()) >= target) break;
      if (p.status != PairStatus::kMeasured || TakenLight(p, full) ||
          retested.count(key(p.client, p.server)) || used.count(p.client) || used.count(p.server)) {
        continue;
      }
      mates.push_back({p.client, p.server});
      used.insert({p.client, p.server});
    }
    out_rounds.push_back(std::move(measured));
    out_companions.push_back(std::move(mates));
    if (!failed.empty()) failed_rounds.push_back(std::move(failed));
  }
  for (Round& round : failed_rounds) {
    out_rounds.push_back(std::move(round));
    out_companions.emplace_back();
  }
  rounds = std::move(out_rounds);
  return out_companions;
}

}  // namespace fabricctl::controller::sweep
