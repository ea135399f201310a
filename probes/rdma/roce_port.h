#ifndef FABRICCTL_PROBES_RDMA_ROCE_PORT_H_
#define FABRICCTL_PROBES_RDMA_ROCE_PORT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "probes/sysfs/sysfs_root.h"

namespace fabricctl::probes {

// How a driver picks the UDP source port of an RC queue pair's RoCE v2 packets (equal-cost
// routing hashes it; docs/probes.md "Flows"):
//  - kQpnHash: soft-RoCE (rxe, drivers/infiniband/sw/rxe/rxe_qp.c): 0xC000 + hash_32(QPN, 14),
//    fixed when the queue pair is created;
//  - kFlowLabel: the kernel's rdma_get_udp_sport (mlx5's mlx5_set_path_udp_sport, irdma, hns,
//    mana, ionic; their PCI functions' drivers mlx5_core, ice, hns3, mana, ionic): the flow label,
//    or where it is 0 (as here) rdma_calc_flow_label of the two queue pair numbers, folded into
//    0xC000..0xFFFF by rdma_flow_label_to_udp_sport;
//  - kUnknown: any other driver; its flows are not traced.
enum class SourcePortRule { kUnknown, kQpnHash, kFlowLabel };

// An RDMA device's driver, from sysfs: "rxe" for a device with a "parent" attribute and no PCI
// device; else the driver of the PCI function it hangs from ("mlx5_core", ...); "" unknown.
std::string DriverOf(const SysfsRoot& sys, const std::string& device);
// The rule of a driver DriverOf named.
SourcePortRule RuleOfDriver(const std::string& driver);

// The kernel's helpers, as include/rdma/ib_verbs.h and include/linux/hash.h define them.
uint32_t CalcFlowLabel(uint32_t local_qpn, uint32_t remote_qpn);
uint16_t FlowLabelToUdpSourcePort(uint32_t flow_label);
uint16_t QpnHashSourcePort(uint32_t qpn);

// The source port of a queue pair's packets to `remote_qpn`, where the rule is known.
std::optional<uint16_t> RoceSourcePort(SourcePortRule rule, uint32_t local_qpn,
                                       uint32_t remote_qpn);

// The netdev a port's GID is on (sysfs gid_attrs/ndevs), where there is one: the interface its
// RoCE packets leave by.
std::string GidNetdev(const SysfsRoot& sys, const std::string& device, uint32_t port,
                      int gid_index);

// The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d, 16 bytes), where it is one.
std::optional<std::string> Ipv4OfGid(const std::string& gid);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_RDMA_ROCE_PORT_H_
