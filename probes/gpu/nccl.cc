#include "probes/gpu/nccl.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "probes/common/stats.h"
#include "probes/gpu/cuda.h"
#include "probes/gpu/runtime_library.h"
#include "proto/probe.pb.h"
#include "report/findings.h"

namespace fabricctl::probes {
namespace {

// Frees what it owns on every path out of a rank.
struct RankResources {
  const CudaDriver* cuda = nullptr;
  const NcclLibrary* nccl = nullptr;
  CudaDriver::DevicePtr send = 0, recv = 0;
  CudaDriver::Stream stream = nullptr;
  NcclLibrary::Comm comm = nullptr;
  bool comm_ok = true;  // false after a failed call: abort instead of destroy
  ~RankResources() {
    if (comm != nullptr) comm_ok ? nccl->CommDestroy(comm) : nccl->CommAbort(comm);
    if (stream != nullptr) cuda->StreamDestroy(stream);
    if (send != 0) cuda->MemFree(send);
    if (recv != 0) cuda->MemFree(recv);
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<NcclLibrary>> NcclLibrary::Load() {
  std::string path;
  auto opened = OpenRuntimeLibrary("FABRIC_NCCL_LIBRARY", "libnccl.so.2", "no NCCL", &path);
  if (!opened.ok()) return opened.status();
  void* library = *opened;
  std::unique_ptr<NcclLibrary> nccl(new NcclLibrary());
  nccl->library_ = library;
  const bool ok = Resolve(library, "ncclGetVersion", &nccl->GetVersion) &&
                  Resolve(library, "ncclGetUniqueId", &nccl->GetUniqueId) &&
                  Resolve(library, "ncclCommInitRank", &nccl->CommInitRank) &&
                  Resolve(library, "ncclAllReduce", &nccl->AllReduce) &&
                  Resolve(library, "ncclCommDestroy", &nccl->CommDestroy) &&
                  Resolve(library, "ncclCommAbort", &nccl->CommAbort) &&
                  Resolve(library, "ncclGetErrorString", &nccl->GetErrorString);
  if (!ok) return absl::NotFoundError(absl::StrCat(path, " lacks an NCCL call fabricctl needs"));
  return nccl;
}

NcclLibrary::~NcclLibrary() {
  if (library_ != nullptr) ::dlclose(library_);
}

absl::Status NcclLibrary::Check(Result result, const char* call) const {
  if (result == 0) return absl::OkStatus();
  const char* what = GetErrorString != nullptr ? GetErrorString(result) : nullptr;
  return absl::InternalError(absl::StrCat(call, ": ", what ? what : "error", " (", result, ")"));
}

std::string NcclLibrary::Version() const {
  int code = 0;
  if (GetVersion(&code) != 0) return "?";
  return NcclVersionString(code);
}

std::string NcclVersionString(int code) {
  if (code >= 10000) return absl::StrCat(code / 10000, ".", code % 10000 / 100, ".", code % 100);
  return absl::StrCat(code / 1000, ".", code % 1000 / 100, ".", code % 100);
}

absl::StatusOr<std::string> FindNccl(absl::Duration timeout) {
  return RunInChild(
      []() -> absl::StatusOr<std::string> {
        auto nccl = NcclLibrary::Load();
        if (!nccl.ok()) return nccl.status();
        return (*nccl)->Version();
      },
      timeout);
}

absl::StatusOr<NcclRendezvous> NcclRendezvous::Create(absl::Duration timeout) {
  auto holder = HeldChild::Start(
      []() -> absl::StatusOr<std::string> {
        auto nccl = NcclLibrary::Load();
        if (!nccl.ok()) return nccl.status();
        NcclLibrary::UniqueId id;
        RETURN_IF_ERROR((*nccl)->Check((*nccl)->GetUniqueId(&id), "ncclGetUniqueId"));
        // The library stays loaded: its bootstrap root thread serves the ranks from here.
        (void)nccl->release();
        return std::string(id.internal, sizeof(id.internal));
      },
      timeout);
  if (!holder.ok()) return holder.status();
  if (holder->answer().size() != sizeof(NcclLibrary::UniqueId::internal)) {
    return absl::InternalError("ncclGetUniqueId gave an id of the wrong size");
  }
  NcclRendezvous rendezvous;
  rendezvous.holder_ = *std::move(holder);
  return rendezvous;
}

namespace {

// The rank's buffers, stream and communicator, for messages up to `count` floats.
absl::Status SetUpRank(const CudaDriver& cu, const NcclLibrary& nc, const NcclRank& rank,
                       size_t count, RankResources& res) {
  res.cuda = &cu;
  res.nccl = &nc;
  RETURN_IF_ERROR(cu.Check(cu.MemAlloc(&res.send, count * sizeof(float)), "cuMemAlloc"));
  RETURN_IF_ERROR(cu.Check(cu.MemAlloc(&res.recv, count * sizeof(float)), "cuMemAlloc"));
  RETURN_IF_ERROR(cu.Check(cu.StreamCreate(&res.stream, 0), "cuStreamCreate"));
  NcclLibrary::UniqueId id;
  std::memcpy(id.internal, rank.unique_id.data(), sizeof(id.internal));
  absl::Status s = nc.Check(
      nc.CommInitRank(&res.comm, static_cast<int>(rank.nranks), id, static_cast<int>(rank.rank)),
      "ncclCommInitRank");
  if (!s.ok()) res.comm = nullptr;
  return s;
}

// A rank's libraries, resources and host buffer while it measures.
struct RankRun {
  const CudaDriver& cu;
  const NcclLibrary& nc;
  RankResources& res;
  const NcclRank& rank;
  std::vector<float>& host;  // as large as the largest size
};

// One size, as nccl-tests measures it: a checked all-reduce (element i of rank r is
// (r + 1) + (i % 97)), the warm-up, then the timed iterations.
absl::Status MeasureSize(const RankRun& run, const ProbeParams& params, uint64_t size,
                         v1::CollectivePoint* point) {
  const CudaDriver& cu = run.cu;
  const NcclLibrary& nc = run.nc;
  RankResources& res = run.res;
  const NcclRank& rank = run.rank;
  std::vector<float>& host = run.host;
  auto allreduce = [&](size_t n) -> absl::Status {
    absl::Status s = nc.Check(
        nc.AllReduce(reinterpret_cast<const void*>(res.send), reinterpret_cast<void*>(res.recv), n,
                     NcclLibrary::kFloat32, NcclLibrary::kSum, res.comm, res.stream),
        "ncclAllReduce");
    if (!s.ok()) res.comm_ok = false;
    return s;
  };
  auto sync = [&]() -> absl::Status {
    absl::Status s = cu.Check(cu.StreamSynchronize(res.stream), "cuStreamSynchronize");
    if (!s.ok()) res.comm_ok = false;
    return s;
  };
  const uint32_t n = rank.nranks;
  const size_t elements = std::max<size_t>(1, size / sizeof(float));
  for (size_t i = 0; i < elements; ++i) host[i] = static_cast<float>(rank.rank + 1 + i % 97);
  RETURN_IF_ERROR(
      cu.Check(cu.MemcpyHtoD(res.send, host.data(), elements * sizeof(float)), "cuMemcpyHtoD"));
  RETURN_IF_ERROR(allreduce(elements));
  RETURN_IF_ERROR(sync());
  RETURN_IF_ERROR(
      cu.Check(cu.MemcpyDtoH(host.data(), res.recv, elements * sizeof(float)), "cuMemcpyDtoH"));
  uint64_t wrong = 0;
  for (size_t i = 0; i < elements; ++i) {
    const double want = n * (n + 1) / 2.0 + static_cast<double>(n) * (i % 97);
    if (host[i] != want) ++wrong;
  }
  for (uint64_t w = 0; w < params.warmup_iterations; ++w) RETURN_IF_ERROR(allreduce(elements));
  RETURN_IF_ERROR(sync());
  const uint64_t iterations = std::max<uint64_t>(1, params.iterations);
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t k = 0; k < iterations; ++k) RETURN_IF_ERROR(allreduce(elements));
  RETURN_IF_ERROR(sync());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
      static_cast<double>(iterations);
  point->set_size_bytes(elements * sizeof(float));
  point->set_time_us(seconds * 1e6);
  point->set_algbw_gbytes(AllreduceAlgBwGBytes(point->size_bytes(), seconds));
  point->set_busbw_gbytes(AllreduceBusBwGBytes(point->size_bytes(), seconds, n));
  point->set_wrong(wrong);
  return absl::OkStatus();
}

// The rank's whole run, in the child: the serialised result with a point per size.
absl::StatusOr<std::string> RankInChild(const ProbeParams& params, const NcclRank& rank) {
  if (rank.unique_id.size() != sizeof(NcclLibrary::UniqueId::internal)) {
    return absl::InvalidArgumentError("the NCCL unique id is not 128 bytes");
  }
  // Before NCCL first logs (it reads these once): INFO to this rank's own file.
  ::setenv("NCCL_DEBUG", "INFO", 1);
  ::setenv("NCCL_DEBUG_FILE", rank.log_path.c_str(), 1);
  ASSIGN_OR_RETURN(std::unique_ptr<CudaDriver> cuda, CudaDriver::Load());
  ASSIGN_OR_RETURN(std::unique_ptr<NcclLibrary> nccl, NcclLibrary::Load());
  const CudaDriver& cu = *cuda;
  const NcclLibrary& nc = *nccl;
  int count = 0;
  RETURN_IF_ERROR(cu.Check(cu.DeviceGetCount(&count), "cuDeviceGetCount"));
  if (rank.gpu >= static_cast<uint32_t>(count)) {
    return absl::NotFoundError(absl::StrCat("no GPU ", rank.gpu, " (the driver sees ", count, ")"));
  }
  CudaDriver::Device device;
  RETURN_IF_ERROR(cu.Check(cu.DeviceGet(&device, static_cast<int>(rank.gpu)), "cuDeviceGet"));
  ScopedContext context(cu, device);
  RETURN_IF_ERROR(context.Enter());
  const uint64_t largest = *std::max_element(params.sizes_bytes.begin(), params.sizes_bytes.end());
  const size_t largest_count = std::max<size_t>(1, largest / sizeof(float));
  RankResources res;
  RETURN_IF_ERROR(SetUpRank(cu, nc, rank, largest_count, res));
  v1::ProbeResult out;
  std::vector<float> host(largest_count);
  const RankRun run{cu, nc, res, rank, host};
  for (uint64_t size : params.sizes_bytes) {
    RETURN_IF_ERROR(MeasureSize(run, params, size, out.add_collective()));
  }
  out.set_device(absl::StrCat("nccl ", nc.Version(), ", gpu ", rank.gpu));
  return out.SerializeAsString();
}

}  // namespace

ProbeRun RunNcclRank(const ProbeParams& params, const NcclRank& rank) {
  ProbeRun run;
  run.kind = "allreduce";
  run.device = absl::StrCat("nccl, gpu ", rank.gpu);
  const auto started = std::chrono::steady_clock::now();
  const absl::Duration timeout =
      params.timeout > absl::ZeroDuration() ? params.timeout : absl::Minutes(5);
  auto bytes = RunInChild([&] { return RankInChild(params, rank); }, timeout);
  run.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!bytes.ok()) {
    run.reason = absl::StrCat("rank ", rank.rank, ": ", bytes.status().message());
    run.outcome = absl::IsNotFound(bytes.status())           ? Outcome::kSkipped
                  : absl::IsDeadlineExceeded(bytes.status()) ? Outcome::kTimeout
                                                             : Outcome::kFailed;
    return run;
  }
  v1::ProbeResult measured;
  if (!measured.ParseFromString(*bytes)) {
    run.outcome = Outcome::kFailed;
    run.reason = "the NCCL rank's result does not parse";
    return run;
  }
  run.device = measured.device();
  for (const auto& p : measured.collective()) {
    CollectivePoint point;
    point.size_bytes = p.size_bytes();
    point.time_us = p.time_us();
    point.algbw_gbytes = p.algbw_gbytes();
    point.busbw_gbytes = p.busbw_gbytes();
    point.wrong = p.wrong();
    run.collective.push_back(point);
  }
  run.outcome = Outcome::kOk;
  return run;
}

NcclNodeRun RunNcclNode(const ProbeParams& params, const std::string& unique_id, uint32_t first,
                        uint32_t world, uint32_t gpus, const std::string& log_prefix) {
  NcclNodeRun node;
  std::vector<ProbeRun> runs(gpus);
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < gpus; ++i) {
    node.logs.push_back(absl::StrCat(log_prefix, ".rank", first + i, ".log"));
    NcclRank rank{first + i, world, i, unique_id, node.logs.back()};
    threads.emplace_back([&runs, &params, rank, i] { runs[i] = RunNcclRank(params, rank); });
  }
  for (auto& t : threads) t.join();
  ProbeRun& merged = node.run;
  merged = runs.empty() ? ProbeRun::Skipped("allreduce", "no GPU") : runs[0];
  for (int pass = 0; pass < 2 && merged.outcome == Outcome::kOk; ++pass) {
    for (const auto& run : runs) {
      if (run.outcome != Outcome::kOk && (run.outcome == Outcome::kTimeout) == (pass == 1)) {
        merged = run;
        merged.collective.clear();
        if (merged.outcome == Outcome::kSkipped) merged.outcome = Outcome::kFailed;
        break;
      }
    }
  }
  if (merged.outcome != Outcome::kOk) return node;
  for (size_t k = 0; k < merged.collective.size(); ++k) {
    double time_us = 0;
    uint64_t wrong = 0;
    for (const auto& run : runs) {
      if (k >= run.collective.size()) {
        merged = ProbeRun::Skipped("allreduce", "NCCL ranks measured different sizes");
        merged.outcome = Outcome::kFailed;
        return node;
      }
      time_us += run.collective[k].time_us;
      wrong += run.collective[k].wrong;
    }
    CollectivePoint& p = merged.collective[k];
    p.time_us = time_us / gpus;
    p.algbw_gbytes = AllreduceAlgBwGBytes(p.size_bytes, p.time_us * 1e-6);
    p.busbw_gbytes = AllreduceBusBwGBytes(p.size_bytes, p.time_us * 1e-6, world);
    p.wrong = wrong;
  }
  merged.device = absl::StrCat(runs[0].device.substr(0, runs[0].device.find(", gpu")), ", ", gpus,
                               gpus == 1 ? " GPU" : " GPUs");
  return node;
}

NcclVerdict JudgeNcclLogs(const std::string& node, const std::vector<std::string>& log_paths,
                          const NcclExpectation& expect) {
  NcclVerdict verdict;
  bool any_net = false, all_gdr = true;
  for (const std::string& path : log_paths) {
    auto text = ReadBoundedFile(path, "NCCL log", kMaxNcclLogBytes);
    if (!text.ok()) continue;  // a rank that died before NCCL logged: its failure says why
    NcclLog log = ParseNcclLog(*text);
    if (!node.empty()) log.host = node;  // the node as sweeps name it, not the kernel's hostname
    v1::NcclTransport t = NcclTransportOf(log);
    if (verdict.transport.net().empty() || t.net() == "Socket") verdict.transport.set_net(t.net());
    if (log.net_channels > 0) {
      any_net = true;
      all_gdr = all_gdr && t.gpudirect_rdma();
    }
    for (const auto& [pair, transport] : t.peer_transports()) {
      (*verdict.transport.mutable_peer_transports())[pair] = transport;
    }
    for (const auto& line : t.evidence()) {
      if (verdict.transport.evidence_size() < 16) verdict.transport.add_evidence(line);
    }
    for (auto& f : NcclLogFindings(log, path, expect)) {
      // One finding of each kind per node: the first rank's, with the count of the others.
      auto same = std::find_if(verdict.findings.begin(), verdict.findings.end(),
                               [&](const v1::Finding& g) { return g.kind() == f.kind(); });
      if (same == verdict.findings.end()) {
        verdict.findings.push_back(std::move(f));
      } else {
        auto& ranks = (*same->mutable_evidence())["rank_logs"];
        ranks = std::to_string(ranks.empty() ? 2 : std::stoi(ranks) + 1);
      }
    }
  }
  verdict.transport.set_gpudirect_rdma(any_net && all_gdr);
  return verdict;
}

std::vector<v1::Finding> JudgeNcclData(const std::string& node, const ProbeRun& run) {
  std::vector<v1::Finding> out;
  for (const auto& p : run.collective) {
    if (p.wrong == 0) continue;
    out.push_back(report::Make(report::kind::kProbeFailed, node,
                               absl::StrCat("NCCL all-reduce data check: ", p.wrong,
                                            " wrong elements at ", p.size_bytes, " bytes"),
                               report::Level::kAlternate));
  }
  return out;
}

}  // namespace fabricctl::probes
