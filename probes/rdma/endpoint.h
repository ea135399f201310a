#ifndef FABRICCTL_PROBES_RDMA_ENDPOINT_H_
#define FABRICCTL_PROBES_RDMA_ENDPOINT_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "probes/common/params.h"
#include "probes/common/result.h"
#include "probes/rdma/device.h"
#include "probes/rdma/verbs.h"
#include "proto/probe.pb.h"

namespace fabricctl::probes {

// Where probe buffers live: host memory, or GPU memory (probes/rdma/gpu_memory.h) registered
// for GPUDirect RDMA.
class ProbeMemory {
 public:
  virtual ~ProbeMemory() = default;
  // The buffer's address (a device address for GPU memory: not for the CPU to touch).
  virtual char* data() = 0;
  virtual size_t size() const = 0;
  // Registers the whole buffer with `pd` (ibv_reg_mr for host memory).
  virtual absl::StatusOr<MrPtr> Register(ibv_pd* pd, int access);
  // How the memory is reached, for the device label: "" for host memory, "gpu 0 (dma-buf)".
  virtual std::string label() const { return ""; }
  // Whether the CPU may read it: inline sends copy from the buffer with the CPU, so device
  // memory is never sent inline.
  virtual bool cpu_accessible() const { return true; }
};

// Page-aligned host memory, zeroed.
absl::StatusOr<std::unique_ptr<ProbeMemory>> AllocateHostMemory(size_t bytes);

struct EndpointOptions {
  RdmaParams selection;        // device, port, GID index, inline size
  uint64_t message_bytes = 0;  // largest message; each of the two areas holds one
  uint32_t send_depth = 128;   // max outstanding send work requests
  uint32_t recv_depth = 1;     // max posted receives
  // Allocates the buffer; unset: page-aligned host memory.
  std::function<absl::StatusOr<std::unique_ptr<ProbeMemory>>(size_t)> allocate;
};

// One RC queue pair on one port with its buffer, CQs and protection domain, all owned.
// The buffer has two areas of message_bytes: the receive area (the peer writes into it, and
// reads from it) and the send area (what this side sends or writes from).
//
// Not thread-safe: one probe thread drives it.
class RdmaEndpoint {
 public:
  // Opens the device and creates everything up to a QP in INIT. NotFound when there is no
  // RDMA device or no such device/port ("skipped" material); ResourceExhausted when the
  // memlock limit is below what must be registered.
  static absl::StatusOr<std::unique_ptr<RdmaEndpoint>> Open(const EndpointOptions& options);
  ~RdmaEndpoint();

  // This side's connection data for the peer (perftest's exchanged key message).
  v1::RdmaQpInfo LocalInfo() const;
  // Moves the QP through RTR to RTS towards `remote`.
  absl::Status Connect(const v1::RdmaQpInfo& remote);

  char* receive_area() { return memory_->data(); }
  char* send_area() { return memory_->data() + area_bytes_; }
  uint32_t max_inline() const { return max_inline_; }
  // "rxe0:1".
  std::string label() const;
  const std::string& device_name() const { return device_name_; }
  uint32_t port() const { return port_; }
  int gid_index() const { return gid_index_; }
  // Whether the GID in use is RoCE v2's (UDP/IP, port 4791).
  bool roce_v2() const { return roce_v2_; }
  // Where the buffers are: "host", or the GPU memory's label ("gpu 0 (dma-buf)").
  std::string memory_label() const;
  // perftest's header lines: link type, MTU, GID index, inline size.
  InfoLines Setup() const;

  // Posting; wr_id travels to the completion. Inline is used when size <= max_inline().
  // SEND and receives may start `offset` bytes into their area (several slots in one area).
  absl::Status PostWrite(uint64_t size, uint64_t wr_id, bool signaled);
  absl::Status PostRead(uint64_t size, uint64_t wr_id, bool signaled);
  absl::Status PostSend(uint64_t size, uint64_t wr_id, bool signaled, uint64_t offset = 0);
  absl::Status PostRecv(uint64_t size, uint64_t wr_id, uint64_t offset = 0);

  // Polls up to `max` completions; negative on a poll error.
  int PollSend(ibv_wc* wc, int max) { return ibv_poll_cq(send_cq_.get(), max, wc); }
  int PollRecv(ibv_wc* wc, int max) { return ibv_poll_cq(recv_cq_.get(), max, wc); }

 private:
  RdmaEndpoint() = default;
  // Open's steps: the device and the ACTIVE port `want` names (or the first); the GID (RoCE
  // needs one: picked as perftest does); the protection domain, the buffers and their memory
  // region, the completion queues; the queue pair, in INIT.
  absl::Status SelectPort(const RdmaParams& want);
  absl::Status SelectGid(const RdmaParams& want);
  absl::Status CreateBuffers(const EndpointOptions& options);
  absl::Status CreateQueuePair(const EndpointOptions& options);
  absl::Status Post(ibv_wr_opcode opcode, uint64_t size, uint64_t wr_id, bool signaled,
                    uint64_t offset = 0);

  EndpointOptions options_;
  std::string device_name_;
  uint32_t port_ = 1;
  int gid_index_ = -1;
  ibv_gid gid_{};
  bool roce_v2_ = false;
  ibv_port_attr port_attr_{};
  uint32_t max_rd_atomic_ = 1;
  uint32_t max_inline_ = 0;
  uint32_t psn_ = 0;
  // Each area is at least a page, as perftest's cycle buffer: the two never share a cache line
  // or a page however small the messages.
  uint64_t area_bytes_ = 0;
  // Remote area of the peer, known after Connect.
  uint64_t remote_addr_ = 0;
  uint32_t remote_rkey_ = 0;
  // Destruction order matters: members are destroyed bottom-up (QP first, context last).
  ContextPtr context_;
  PdPtr pd_;
  std::unique_ptr<ProbeMemory> memory_;
  MrPtr mr_;
  CqPtr send_cq_;
  CqPtr recv_cq_;
  QpPtr qp_;
};

// Bytes to the verbs MTU enum and back (256..4096).
ibv_mtu MtuFromBytes(uint32_t bytes);
uint32_t MtuBytes(ibv_mtu mtu);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_RDMA_ENDPOINT_H_
