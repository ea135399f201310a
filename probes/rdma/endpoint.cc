#include "probes/rdma/endpoint.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "probes/rdma/gid.h"

namespace fabricctl::probes {
namespace {

constexpr uint32_t kMaxRdAtomic = 16;

class HostMemory final : public ProbeMemory {
 public:
  HostMemory(char* data, size_t size) : data_(data), size_(size) {}
  ~HostMemory() override { std::free(data_); }
  char* data() override { return data_; }
  size_t size() const override { return size_; }

 private:
  char* data_;
  size_t size_;
};

absl::Status VerbsError(const std::string& what, int error) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(error)));
}

GidType TypeOf(const ibv_gid_entry& entry) {
  switch (entry.gid_type) {
    case IBV_GID_TYPE_ROCE_V1:
      return GidType::kRoceV1;
    case IBV_GID_TYPE_ROCE_V2:
      return GidType::kRoceV2;
    default:
      return GidType::kIb;
  }
}

}  // namespace

ibv_mtu MtuFromBytes(uint32_t bytes) {
  if (bytes >= 4096) return IBV_MTU_4096;
  if (bytes >= 2048) return IBV_MTU_2048;
  if (bytes >= 1024) return IBV_MTU_1024;
  if (bytes >= 512) return IBV_MTU_512;
  return IBV_MTU_256;
}

uint32_t MtuBytes(ibv_mtu mtu) { return 128u << static_cast<int>(mtu); }

absl::StatusOr<MrPtr> ProbeMemory::Register(ibv_pd* pd, int access) {
  MrPtr mr(ibv_reg_mr(pd, data(), size(), access));
  if (!mr) return VerbsError("ibv_reg_mr", errno);
  return mr;
}

absl::StatusOr<std::unique_ptr<ProbeMemory>> AllocateHostMemory(size_t bytes) {
  void* data = nullptr;
  if (posix_memalign(&data, 4096, bytes) != 0) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", bytes, " bytes"));
  }
  std::memset(data, 0, bytes);
  return std::unique_ptr<ProbeMemory>(new HostMemory(static_cast<char*>(data), bytes));
}

absl::StatusOr<std::unique_ptr<RdmaEndpoint>> RdmaEndpoint::Open(const EndpointOptions& options) {
  std::unique_ptr<RdmaEndpoint> ep(new RdmaEndpoint());
  ep->options_ = options;
  // Memlock first: registration would fail with a less helpful ENOMEM.
  ep->area_bytes_ = (std::max<uint64_t>(options.message_bytes, 4096) + 4095) & ~uint64_t{4095};
  const uint64_t needed = 2 * ep->area_bytes_ + (1 << 20);
  rlimit limit{};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      limit.rlim_cur < needed) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "memlock limit of ", limit.rlim_cur, " bytes is below the ", needed,
        " bytes this probe registers (raise it: ulimit -l, or LimitMEMLOCK= in the unit)"));
  }
  RETURN_IF_ERROR(ep->SelectPort(options.selection));
  RETURN_IF_ERROR(ep->SelectGid(options.selection));
  RETURN_IF_ERROR(ep->CreateBuffers(options));
  RETURN_IF_ERROR(ep->CreateQueuePair(options));
  std::random_device random;
  ep->psn_ = random() & 0xffffff;
  return ep;
}

absl::Status RdmaEndpoint::SelectPort(const RdmaParams& want) {
  DeviceList devices;
  if (devices.error() != 0 || devices.size() == 0) {
    return absl::NotFoundError(
        devices.error() != 0 ? absl::StrCat("no RDMA device (libibverbs cannot list devices: ",
                                            std::strerror(devices.error()), ")")
                             : "no RDMA device (libibverbs lists none)");
  }
  std::vector<std::string> names;
  for (int i = 0; i < devices.size() && !context_; ++i) {
    std::string name = ibv_get_device_name(devices[i]);
    names.push_back(name);
    if (!want.device.empty() && name != want.device) continue;
    ContextPtr context(ibv_open_device(devices[i]));
    if (!context) continue;
    ibv_device_attr attr{};
    if (ibv_query_device(context.get(), &attr) != 0) continue;
    for (uint32_t port = 1; port <= attr.phys_port_cnt; ++port) {
      if (want.port != 0 && port != want.port) continue;
      ibv_port_attr port_attr{};
      if (ibv_query_port(context.get(), static_cast<uint8_t>(port), &port_attr) != 0) continue;
      if (port_attr.state != IBV_PORT_ACTIVE) {
        if (want.port != 0 && !want.device.empty()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "port ", name, ":", port, " is ", PortStateName(port_attr.state), ", not ACTIVE"));
        }
        continue;
      }
      device_name_ = name;
      port_ = port;
      port_attr_ = port_attr;
      max_rd_atomic_ = std::max<uint32_t>(1, std::min<uint32_t>(kMaxRdAtomic, attr.max_qp_rd_atom));
      context_ = std::move(context);
      break;
    }
  }
  if (context_) return absl::OkStatus();
  if (!want.device.empty() && std::find(names.begin(), names.end(), want.device) == names.end()) {
    return absl::InvalidArgumentError(absl::StrCat("--device: unknown RDMA device '", want.device,
                                                   "' (present: ", absl::StrJoin(names, ", "),
                                                   ")"));
  }
  return absl::NotFoundError(absl::StrCat(
      "no ACTIVE port on ", want.device.empty() ? absl::StrJoin(names, ", ") : want.device));
}

absl::Status RdmaEndpoint::SelectGid(const RdmaParams& want) {
  // GID: needed on RoCE (Ethernet link layer), optional on InfiniBand.
  const bool ethernet = port_attr_.link_layer == IBV_LINK_LAYER_ETHERNET;
  if (want.gid_index >= 0) {
    gid_index_ = want.gid_index;
  } else if (ethernet) {
    std::vector<GidEntry> table;
    for (int i = 0; i < port_attr_.gid_tbl_len; ++i) {
      ibv_gid_entry entry{};
      if (ibv_query_gid_ex(context_.get(), port_, i, &entry, 0) != 0) continue;
      GidEntry e;
      e.index = static_cast<uint32_t>(i);
      std::memcpy(e.gid.data(), entry.gid.raw, 16);
      e.type = TypeOf(entry);
      table.push_back(e);
    }
    auto best = PickGidIndex(table, /*prefer_ipv6=*/false);
    if (!best) {
      return absl::FailedPreconditionError(
          absl::StrCat(label(), " has no usable GID (is an address configured on its netdev?)"));
    }
    gid_index_ = static_cast<int>(*best);
  }
  if (gid_index_ >= 0 &&
      ibv_query_gid(context_.get(), static_cast<uint8_t>(port_), gid_index_, &gid_) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--gid-index: ", gid_index_, " is not readable on ", label()));
  }
  ibv_gid_entry entry{};
  roce_v2_ =
      ethernet && gid_index_ >= 0 &&
      ibv_query_gid_ex(context_.get(), port_, static_cast<uint32_t>(gid_index_), &entry, 0) == 0 &&
      TypeOf(entry) == GidType::kRoceV2;
  return absl::OkStatus();
}

absl::Status RdmaEndpoint::CreateBuffers(const EndpointOptions& options) {
  pd_.reset(ibv_alloc_pd(context_.get()));
  if (!pd_) return VerbsError("ibv_alloc_pd", errno);
  ASSIGN_OR_RETURN(memory_, options.allocate ? options.allocate(2 * area_bytes_)
                                             : AllocateHostMemory(2 * area_bytes_));
  ASSIGN_OR_RETURN(mr_,
                   memory_->Register(pd_.get(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                                    IBV_ACCESS_REMOTE_READ));
  send_cq_.reset(
      ibv_create_cq(context_.get(), static_cast<int>(options.send_depth) + 1, nullptr, nullptr, 0));
  recv_cq_.reset(
      ibv_create_cq(context_.get(), static_cast<int>(options.recv_depth) + 1, nullptr, nullptr, 0));
  if (!send_cq_ || !recv_cq_) return VerbsError("ibv_create_cq", errno);
  return absl::OkStatus();
}

absl::Status RdmaEndpoint::CreateQueuePair(const EndpointOptions& options) {
  // perftest's inline default for WRITE, 220 bytes, for every verb (perftest gives SEND 236;
  // 220 keeps one default for the probes that share an endpoint); the device may offer less.
  const RdmaParams& want = options.selection;
  uint32_t inline_wanted = want.inline_bytes >= 0 ? static_cast<uint32_t>(want.inline_bytes) : 220;
  if (!memory_->cpu_accessible()) inline_wanted = 0;  // as perftest does with --use_cuda
  for (uint32_t inline_try : {inline_wanted, 64u, 0u}) {
    ibv_qp_init_attr init{};
    init.send_cq = send_cq_.get();
    init.recv_cq = recv_cq_.get();
    init.qp_type = IBV_QPT_RC;
    init.sq_sig_all = 0;
    init.cap.max_send_wr = options.send_depth;
    init.cap.max_recv_wr = options.recv_depth;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.cap.max_inline_data = inline_try;
    qp_.reset(ibv_create_qp(pd_.get(), &init));
    if (qp_) {
      max_inline_ = memory_->cpu_accessible() ? init.cap.max_inline_data : 0;
      break;
    }
  }
  if (!qp_) return VerbsError("ibv_create_qp", errno);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = static_cast<uint8_t>(port_);
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (int rc = ibv_modify_qp(qp_.get(), &attr,
                             IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
      rc != 0) {
    return VerbsError("ibv_modify_qp(INIT)", rc);
  }
  return absl::OkStatus();
}

RdmaEndpoint::~RdmaEndpoint() = default;

std::string RdmaEndpoint::memory_label() const {
  const std::string memory = memory_ != nullptr ? memory_->label() : "";
  return memory.empty() ? "host" : memory;
}

std::string RdmaEndpoint::label() const {
  const std::string memory = memory_ != nullptr ? memory_->label() : "";
  return absl::StrCat(device_name_, ":", port_, memory.empty() ? "" : ", ", memory);
}

InfoLines RdmaEndpoint::Setup() const {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  uint32_t mtu = MtuBytes(port_attr_.active_mtu);
  if (ibv_query_qp(qp_.get(), &attr, IBV_QP_PATH_MTU, &init) == 0 && attr.qp_state >= IBV_QPS_RTR) {
    mtu = MtuBytes(attr.path_mtu);
  }
  return {
      {"Link type", port_attr_.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand"},
      {"Mtu", absl::StrCat(mtu, "[B]")},
      {"GID index", gid_index_ >= 0 ? absl::StrCat(gid_index_) : "none"},
      {"TX depth", absl::StrCat(options_.send_depth)},
      {"Max inline data", absl::StrCat(max_inline_, "[B]")}};
}

v1::RdmaQpInfo RdmaEndpoint::LocalInfo() const {
  v1::RdmaQpInfo info;
  info.set_lid(port_attr_.lid);
  info.set_qpn(qp_->qp_num);
  info.set_psn(psn_);
  info.set_rkey(mr_->rkey);
  info.set_vaddr(reinterpret_cast<uint64_t>(memory_->data()));  // the receive area
  info.set_gid(std::string(reinterpret_cast<const char*>(gid_.raw), 16));
  info.set_mtu(MtuBytes(port_attr_.active_mtu));
  return info;
}

absl::Status RdmaEndpoint::Connect(const v1::RdmaQpInfo& remote) {
  if (remote.gid().size() != 16) {
    return absl::InvalidArgumentError("peer's queue-pair data has no 16-byte GID");
  }
  remote_addr_ = remote.vaddr();
  remote_rkey_ = remote.rkey();
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = MtuFromBytes(std::min(MtuBytes(port_attr_.active_mtu), remote.mtu()));
  attr.dest_qp_num = remote.qpn();
  attr.rq_psn = remote.psn();
  attr.max_dest_rd_atomic = static_cast<uint8_t>(max_rd_atomic_);
  attr.min_rnr_timer = 12;  // perftest's MIN_RNR_TIMER
  attr.ah_attr.dlid = static_cast<uint16_t>(remote.lid());
  attr.ah_attr.sl = 0;
  attr.ah_attr.port_num = static_cast<uint8_t>(port_);
  if (gid_index_ >= 0) {
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, remote.gid().data(), 16);
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_index_);
    attr.ah_attr.grh.hop_limit = 0xff;
  }
  if (int rc = ibv_modify_qp(qp_.get(), &attr,
                             IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
      rc != 0) {
    return VerbsError("ibv_modify_qp(RTR)", rc);
  }
  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.sq_psn = psn_;
  attr.timeout = 14;  // 4.096 us x 2^14, about 67 ms (perftest -u default)
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;
  attr.max_rd_atomic = static_cast<uint8_t>(max_rd_atomic_);
  if (int rc = ibv_modify_qp(qp_.get(), &attr,
                             IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
      rc != 0) {
    return VerbsError("ibv_modify_qp(RTS)", rc);
  }
  return absl::OkStatus();
}

absl::Status RdmaEndpoint::Post(ibv_wr_opcode opcode, uint64_t size, uint64_t wr_id, bool signaled,
                                uint64_t offset) {
  if (offset + size > area_bytes_) return absl::InvalidArgumentError("post beyond the buffer area");
  ibv_sge sge{};
  // READ lands in the receive area; WRITE and SEND go out of the send area.
  sge.addr = reinterpret_cast<uint64_t>(
      (opcode == IBV_WR_RDMA_READ ? receive_area() : send_area()) + offset);
  sge.length = static_cast<uint32_t>(size);
  sge.lkey = mr_->lkey;
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = size > 0 ? 1 : 0;  // a zero-length SEND carries no gather entry
  wr.opcode = opcode;
  wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
  if (opcode != IBV_WR_RDMA_READ && size <= max_inline_) wr.send_flags |= IBV_SEND_INLINE;
  if (opcode != IBV_WR_SEND) {
    // WRITE targets the peer's receive area; READ reads the peer's receive area.
    wr.wr.rdma.remote_addr = remote_addr_;
    wr.wr.rdma.rkey = remote_rkey_;
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp_.get(), &wr, &bad); rc != 0) return VerbsError("ibv_post_send", rc);
  return absl::OkStatus();
}

absl::Status RdmaEndpoint::PostWrite(uint64_t size, uint64_t wr_id, bool signaled) {
  return Post(IBV_WR_RDMA_WRITE, size, wr_id, signaled);
}
absl::Status RdmaEndpoint::PostRead(uint64_t size, uint64_t wr_id, bool signaled) {
  return Post(IBV_WR_RDMA_READ, size, wr_id, signaled);
}
absl::Status RdmaEndpoint::PostSend(uint64_t size, uint64_t wr_id, bool signaled, uint64_t offset) {
  return Post(IBV_WR_SEND, size, wr_id, signaled, offset);
}

absl::Status RdmaEndpoint::PostRecv(uint64_t size, uint64_t wr_id, uint64_t offset) {
  if (offset + size > area_bytes_)
    return absl::InvalidArgumentError("receive beyond the buffer area");
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uint64_t>(receive_area() + offset);
  sge.length = static_cast<uint32_t>(size);
  sge.lkey = mr_->lkey;
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qp_.get(), &wr, &bad); rc != 0) return VerbsError("ibv_post_recv", rc);
  return absl::OkStatus();
}

}  // namespace fabricctl::probes
