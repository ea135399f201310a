// affinity: each GPU's NIC. GPUs and NICs are matched nearest first (as NCCL gives each GPU its
// closest NIC); a GPU left with a NIC across the CPU interconnect, or on another NUMA node, is
// numa_misaffinity.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "probes/audit/common.h"
#include "probes/audit/registry.h"

namespace fabricctl::probes::audit_internal {
namespace {

// nvidia-smi topo's distance classes, nearest first.
enum class PathClass { kPix, kPxb, kPhb, kNode, kSys };

const char* PathClassName(PathClass c) {
  switch (c) {
    case PathClass::kPix:
      return "PIX";
    case PathClass::kPxb:
      return "PXB";
    case PathClass::kPhb:
      return "PHB";
    case PathClass::kNode:
      return "NODE";
    case PathClass::kSys:
      return "SYS";
  }
  return "?";
}

// Classifies the PCIe path between two devices by their deepest common ancestor: a shared PCIe
// switch (PIX), bridges below one root port (PXB), one host bridge (PHB), different host
// bridges of one NUMA node (NODE) or across the CPU interconnect (SYS).
PathClass ClassifyPath(const std::vector<std::string>& a, const std::vector<std::string>& b,
                       int numa_a, int numa_b) {
  size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  if (common == 0) return numa_a == numa_b && numa_a >= 0 ? PathClass::kNode : PathClass::kSys;
  if (common == 1) return PathClass::kPhb;
  // Below a root port: one switch between them when each is at most two hops (downstream
  // port, device) from the common upstream port.
  if (common >= 3 && a.size() - common <= 2 && b.size() - common <= 2) return PathClass::kPix;
  return PathClass::kPxb;
}

// Each GPU's NIC (index into `nics`, -1 for none) and the class of the path between them:
// nearest pairs first, each NIC serving at most ceil(GPUs / NICs) GPUs.
void AssignNics(const std::vector<PciDevice>& gpus, const std::vector<PciDevice>& nics,
                std::vector<int>* assigned, std::vector<PathClass>* cls) {
  struct Candidate {
    PathClass cls;
    size_t gpu, nic;
  };
  std::vector<Candidate> candidates;
  for (size_t g = 0; g < gpus.size(); ++g) {
    for (size_t n = 0; n < nics.size(); ++n) {
      candidates.push_back(
          {ClassifyPath(gpus[g].path, nics[n].path, gpus[g].numa, nics[n].numa), g, n});
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& x, const Candidate& y) { return x.cls < y.cls; });
  const size_t share = (gpus.size() + nics.size() - 1) / nics.size();
  assigned->assign(gpus.size(), -1);
  cls->assign(gpus.size(), PathClass::kSys);
  std::vector<size_t> load(nics.size(), 0);
  for (const Candidate& c : candidates) {
    if ((*assigned)[c.gpu] >= 0 || load[c.nic] >= share) continue;
    (*assigned)[c.gpu] = static_cast<int>(c.nic);
    (*cls)[c.gpu] = c.cls;
    ++load[c.nic];
  }
}

class Affinity final : public Audit {
 public:
  const char* name() const override { return "affinity"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    std::vector<PciDevice> gpus, nics;
    ListGpusAndNics(*ctx.root, &gpus, &nics);
    if (gpus.empty()) return Skipped(name(), "no NVIDIA GPU in /sys/bus/pci/devices");
    if (nics.empty()) return Skipped(name(), "no RDMA device");
    v1::AuditResult r = Ran(name());
    std::vector<int> assigned;
    std::vector<PathClass> cls;
    AssignNics(gpus, nics, &assigned, &cls);
    for (size_t g = 0; g < gpus.size(); ++g) {
      if (assigned[g] < 0) continue;
      const PciDevice& nic = nics[assigned[g]];
      (*r.mutable_observed())[gpus[g].name] = absl::StrCat(
          nic.name, " ", PathClassName(cls[g]), " (NUMA ", gpus[g].numa, "/", nic.numa, ")");
      if (cls[g] == PathClass::kSys ||
          (gpus[g].numa >= 0 && nic.numa >= 0 && gpus[g].numa != nic.numa)) {
        v1::Finding f = MakeFinding(
            ctx, report::kind::kNumaMisaffinity, nic.name, 0,
            absl::StrCat(gpus[g].name, " (NUMA node ", gpus[g].numa, ") is left with ", nic.name,
                         " (NUMA node ", nic.numa, "), path ", PathClassName(cls[g]),
                         "; expected a NIC on its own PCIe switch (PIX or PXB): NCCL will not use "
                         "GPUDirect RDMA across the CPU interconnect"));
        (*f.mutable_evidence())["path"] = PathClassName(cls[g]);
        (*f.mutable_evidence())["gpu"] = gpus[g].address;
        *r.add_findings() = std::move(f);
      }
    }
    return r;
  }
};

}  // namespace

const Audit& AffinityAudit() {
  static const Affinity audit;
  return audit;
}

}  // namespace fabricctl::probes::audit_internal
