#ifndef FABRICCTL_BASE_PCI_TOPOLOGY_H_
#define FABRICCTL_BASE_PCI_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/inventory.pb.h"

namespace fabricctl {

// The PCI path of a sysfs link's target: the components from the root complex ("pci0000:17")
// down to the last PCI function ("0000:18:00.0") of a target such as
// "../../devices/pci0000:17/0000:17:00.0/0000:18:00.0/net/eth1"; empty when the target is not
// under /sys/devices/pci* (a virtual device).
std::string PciPathOf(const std::string& link_target);

// How many leading components two PCI paths share: 0 on different root complexes (or an
// empty path), 1 on the same root complex, more under the same bridges or switch.
int SharedPciDepth(const std::string& a, const std::string& b);

// The GPUs nearest a device at `pci_path` on NUMA node `numa` (-1 unknown), as NCCL ranks them:
// those sharing the deepest part of its PCI path (one switch before one root complex); where
// none shares its root complex, those on its NUMA node; else none. CUDA ordinals, ascending.
std::vector<uint32_t> NearestGpus(const std::vector<v1::Gpu>& gpus, const std::string& pci_path,
                                  int32_t numa);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_PCI_TOPOLOGY_H_
