#include "base/profiles.h"

#include <algorithm>
#include <memory>
#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "base/hostlist.h"
#include "base/mutex.h"

namespace fabricctl {
namespace {

// A profile's hostlist may name at most this many nodes.
constexpr size_t kMaxProfileNodes = 100000;

// A profile's hostlist, expanded once per distinct expression (a sweep asks for every node, at
// every analysis pass): a bounded cache, emptied when full. nullptr when it does not expand.
std::shared_ptr<const std::set<std::string>> Expanded(const std::string& expression) {
  static Mutex mu;
  static auto* cache ABSL_GUARDED_BY(mu) =
      new std::map<std::string, std::shared_ptr<const std::set<std::string>>>();
  {
    MutexLock lock(&mu);
    if (auto it = cache->find(expression); it != cache->end()) return it->second;
  }
  auto names = ExpandHostlist(expression, "nodes", kMaxProfileNodes);
  std::shared_ptr<const std::set<std::string>> set;
  if (names.ok()) set = std::make_shared<const std::set<std::string>>(names->begin(), names->end());
  MutexLock lock(&mu);
  if (cache->size() >= 64) cache->clear();
  (*cache)[expression] = set;
  return set;
}

bool Matches(const v1::Profile& profile, const std::string& node,
             const std::map<std::string, std::string>& labels) {
  if (!profile.nodes().empty()) {
    auto names = Expanded(profile.nodes());
    if (names == nullptr || names->count(node) == 0) return false;
  }
  for (const auto& [key, value] : profile.labels()) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return true;
}

}  // namespace

std::map<std::string, std::string> NodeLabelsFor(const v1::Config& config, const std::string& node,
                                                 const std::map<std::string, std::string>& labels) {
  std::map<std::string, std::string> all = labels;
  for (const auto& entry : config.nodes()) {
    if (entry.node() != node) continue;
    for (const auto& [key, value] : entry.labels()) all[key] = value;  // the administrator's win
  }
  return all;
}

const v1::Expectations& ExpectationsFor(const v1::Config& config, const std::string& node,
                                        const std::map<std::string, std::string>& labels,
                                        std::string* profile) {
  const std::map<std::string, std::string> all = NodeLabelsFor(config, node, labels);
  for (const auto& p : config.profiles()) {
    if (Matches(p, node, all)) {
      if (profile) *profile = p.name();
      return p.expect();
    }
  }
  if (profile) profile->clear();
  return config.expect();
}

absl::Status ValidateProfiles(const v1::Config& config) {
  for (int i = 0; i < config.profiles_size(); ++i) {
    const v1::Profile& p = config.profiles(i);
    const std::string where = absl::StrCat("profiles[", i, "]");
    if (p.name().empty()) return absl::InvalidArgumentError(absl::StrCat(where, ".name: missing"));
    if (p.nodes().empty() && p.labels().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " (", p.name(), "): give nodes, labels or both; it would match every node"));
    }
    if (!p.nodes().empty()) {
      auto names = ExpandHostlist(p.nodes(), "nodes", kMaxProfileNodes);
      if (!names.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ".nodes (", p.name(), "): ", names.status().message()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace fabricctl
