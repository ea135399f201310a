#ifndef FABRICCTL_PROBES_RDMA_VERBS_H_
#define FABRICCTL_PROBES_RDMA_VERBS_H_

#include <infiniband/verbs.h>

#include <memory>

namespace fabricctl::probes {

// Owners of verbs handles; each releases its handle with the matching ibv_ call. Declared in
// the order a probe creates them (PD, MR, CQ, QP): holding them as members in that order
// destroys them in reverse, the QP before its CQs, then the MR and the PD (the context,
// held before all of them, last).
struct PdDeleter {
  void operator()(ibv_pd* pd) const { ibv_dealloc_pd(pd); }
};
struct MrDeleter {
  void operator()(ibv_mr* mr) const { ibv_dereg_mr(mr); }
};
struct CqDeleter {
  void operator()(ibv_cq* cq) const { ibv_destroy_cq(cq); }
};
struct QpDeleter {
  void operator()(ibv_qp* qp) const { ibv_destroy_qp(qp); }
};
using PdPtr = std::unique_ptr<ibv_pd, PdDeleter>;
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;
using CqPtr = std::unique_ptr<ibv_cq, CqDeleter>;
using QpPtr = std::unique_ptr<ibv_qp, QpDeleter>;

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_RDMA_VERBS_H_
