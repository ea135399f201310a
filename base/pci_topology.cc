#include "base/pci_topology.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace fabricctl {
namespace {

// "0000:18:00.0": domain:bus:device.function.
bool IsPciFunction(absl::string_view c) {
  return c.size() == 12 && c[4] == ':' && c[7] == ':' && c[10] == '.';
}

}  // namespace

std::string PciPathOf(const std::string& link_target) {
  std::vector<absl::string_view> parts = absl::StrSplit(link_target, '/', absl::SkipEmpty());
  auto root = std::find_if(parts.begin(), parts.end(), [](absl::string_view c) {
    return c.substr(0, 3) == "pci" && c.size() > 3;
  });
  if (root == parts.end() || root == parts.begin() || *(root - 1) != "devices") return "";
  auto end = root + 1;
  while (end != parts.end() && IsPciFunction(*end)) ++end;
  if (end == root + 1) return "";
  return absl::StrJoin(root, end, "/");
}

int SharedPciDepth(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return 0;
  std::vector<absl::string_view> x = absl::StrSplit(a, '/'), y = absl::StrSplit(b, '/');
  int depth = 0;
  while (depth < static_cast<int>(std::min(x.size(), y.size())) && x[depth] == y[depth]) ++depth;
  return depth;
}

std::vector<uint32_t> NearestGpus(const std::vector<v1::Gpu>& gpus, const std::string& pci_path,
                                  int32_t numa) {
  int best = 0;
  for (const v1::Gpu& gpu : gpus) best = std::max(best, SharedPciDepth(pci_path, gpu.pci_path()));
  std::vector<uint32_t> out;
  for (const v1::Gpu& gpu : gpus) {
    const bool near = best > 0 ? SharedPciDepth(pci_path, gpu.pci_path()) == best
                               : numa >= 0 && gpu.numa_node() == numa;
    if (near) out.push_back(gpu.index());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace fabricctl
