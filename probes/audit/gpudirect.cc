// gpudirect: GPUDirect RDMA needs the peer-memory module (nvidia_peermem, or MOFED's
// nv_peer_mem) or the dma-buf path (open GPU kernel modules; confirmed only through the CUDA
// driver).
#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "probes/audit/common.h"
#include "probes/audit/registry.h"

namespace fabricctl::probes::audit_internal {
namespace {

// The dma-buf path: every GPU's driver says CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED and the
// kernel has RDMA dma-buf registration (ibv_reg_dmabuf_mr, Linux 5.12). Sets *usable and
// returns what was seen.
std::string DmaBufState(const AuditContext& ctx, bool* usable) {
  *usable = false;
  if (!ctx.driver_gpus.has_value()) return "not asked of the CUDA driver";
  const auto& driver = *ctx.driver_gpus;
  const size_t supported = std::count_if(driver.begin(), driver.end(),
                                         [](const v1::Gpu& g) { return g.dma_buf_supported(); });
  const std::string kernel = ctx.root->ReadTrimmed("/proc/sys/kernel/osrelease").value_or("");
  int major = 0, minor = 0;
  const bool kernel_ok = std::sscanf(kernel.c_str(), "%d.%d", &major, &minor) == 2 &&
                         (major > 5 || (major == 5 && minor >= 12));
  *usable = !driver.empty() && supported == driver.size() && kernel_ok;
  if (driver.empty()) {
    return ctx.driver_gpus_reason.empty() ? std::string("the CUDA driver lists no GPU")
                                          : ctx.driver_gpus_reason;
  }
  return absl::StrCat(supported, " of ", driver.size(), " GPUs support it, kernel ",
                      kernel.empty() ? "unknown" : kernel,
                      kernel_ok ? "" : " (needs 5.12 or later)");
}

class GpuDirect final : public Audit {
 public:
  const char* name() const override { return "gpudirect"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    std::vector<PciDevice> gpus, nics;
    ListGpusAndNics(*ctx.root, &gpus, &nics);
    if (gpus.empty()) return Skipped(name(), "no NVIDIA GPU in /sys/bus/pci/devices");
    v1::AuditResult r = Ran(name());
    const bool peermem = ctx.root->Exists("/sys/module/nvidia_peermem") ||
                         ctx.root->Exists("/sys/kernel/mm/memory_peers/nv_mem/version");
    (*r.mutable_observed())["peer_memory"] = peermem ? "loaded" : "absent";
    bool dmabuf = false;
    const std::string dmabuf_state = DmaBufState(ctx, &dmabuf);
    (*r.mutable_observed())["dma_buf"] = dmabuf_state;
    (*r.mutable_observed())["path"] = peermem ? "peer memory" : dmabuf ? "dma-buf" : "none";
    if (!peermem && !dmabuf && ctx.expect.gpudirect()) {
      *r.add_findings() =
          MakeFinding(ctx, report::kind::kGpudirectUnavailable, "", 0,
                      absl::StrCat(gpus.size(),
                                   " GPUs, no peer-memory module (/sys/module/nvidia_peermem "
                                   "absent) and no dma-buf path (",
                                   dmabuf_state,
                                   "): GPUDirect RDMA is off; expected on (expect.gpudirect; "
                                   "modprobe nvidia-peermem, or the open GPU kernel modules)"));
    }
    return r;
  }
};

}  // namespace

const Audit& GpuDirectAudit() {
  static const GpuDirect audit;
  return audit;
}

}  // namespace fabricctl::probes::audit_internal
