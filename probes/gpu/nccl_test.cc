// The NCCL and CUDA paths. Where libnccl.so.2 and a GPU are (a GPU machine) the first case
// measures for real; everywhere else it skips with the reason. The other cases load the test
// stand-ins of tests/fake_gpu (no GPU, no network: they reduce through files) to run the same
// code end to end: the unique id, ranks in child processes, the data check, the INFO logs and
// their verdict, the watchdog.
#include "probes/gpu/nccl.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "probes/gpu/cuda.h"
#include "tests/skip.h"
#include "tests/testing/testing.h"

namespace fabricctl::probes {
namespace {

std::string Absolute(const std::string& path) {
  char buffer[PATH_MAX];
  REQUIRE(::realpath(path.c_str(), buffer) != nullptr);
  return buffer;
}

// Loads the stand-ins for the rest of the test binary's life (the variables are read at each
// load, in each child).
void UseStandIns() {
  ::setenv("FABRIC_CUDA_LIBRARY", Absolute("tests/fake_gpu/libfake_cuda.so").c_str(), 1);
  ::setenv("FABRIC_NCCL_LIBRARY", Absolute("tests/fake_gpu/libfake_nccl.so").c_str(), 1);
}

ProbeParams AllreduceParams() {
  ProbeParams params;
  params.kind = v1::ALLREDUCE;
  params.sizes_bytes = {4096, 65536 + 12};  // the second not a multiple of the rank count
  params.iterations = 3;
  params.warmup_iterations = 1;
  params.timeout = absl::Seconds(60);
  return params;
}

// A rank's run as a line-based record, for the trip from its process to the test's.
std::string Record(const ProbeRun& run) {
  std::string out = absl::StrCat(static_cast<int>(run.outcome), "\n",
                                 absl::StrReplaceAll(run.reason, {{"\n", " "}}), "\n",
                                 absl::StrReplaceAll(run.device, {{"\n", " "}}), "\n");
  for (const CollectivePoint& p : run.collective) {
    absl::StrAppendFormat(&out, "%d %d %.17g %.17g %.17g\n", p.size_bytes, p.wrong, p.time_us,
                          p.algbw_gbytes, p.busbw_gbytes);
  }
  return out;
}

ProbeRun FromRecord(const std::string& path) {
  std::ifstream in(path);
  ProbeRun run;
  std::string outcome;
  if (!std::getline(in, outcome) || !std::getline(in, run.reason) ||
      !std::getline(in, run.device)) {
    run.outcome = Outcome::kFailed;
    run.reason = "the rank's process left no record in " + path;
    return run;
  }
  run.outcome = static_cast<Outcome>(std::stoi(outcome));
  CollectivePoint p;
  while (in >> p.size_bytes >> p.wrong >> p.time_us >> p.algbw_gbytes >> p.busbw_gbytes) {
    run.collective.push_back(p);
  }
  return run;
}

// Runs `nranks` ranks at once, as the agents of a sweep do, each logging to its own file. Each
// rank runs in a process of its own forked from this single-threaded test, not in a thread:
// the sanitizers' allocator (GCC's libasan) holds none of its locks across fork(), so a rank's
// child forked while a sibling thread was inside malloc would wait on that lock for ever.
// glibc's malloc, which the agent runs on, takes its locks around fork(); the agent's own
// forks from its threads are not exposed to this.
std::vector<ProbeRun> RunRanks(const ProbeParams& params, uint32_t nranks, const std::string& id,
                               const std::string& tag, std::vector<std::string>* logs,
                               bool gpu_per_rank = false) {
  logs->clear();
  std::vector<pid_t> pids;
  std::vector<std::string> records;
  for (uint32_t r = 0; r < nranks; ++r) {
    logs->push_back(testing::TestPath(absl::StrCat(tag, ".rank", r, ".log")));
    records.push_back(testing::TestPath(absl::StrCat(tag, ".rank", r, ".record")));
    ::unlink(records.back().c_str());
    const NcclRank rank{r, nranks, gpu_per_rank ? r : 0, id, logs->back()};
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      std::ofstream(records.back()) << Record(RunNcclRank(params, rank));
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  std::vector<ProbeRun> runs;
  for (const std::string& record : records) runs.push_back(FromRecord(record));
  return runs;
}

}  // namespace

TEST_CASE("NCCL on this machine: an all-reduce over every GPU, or skipped with the reason") {
  auto version = FindNccl(absl::Seconds(30));
  if (!version.ok()) {
    CHECK(absl::IsNotFound(version.status()));
    FABRIC_SKIP("NCCL: " << version.status().message());
  }
  auto gpus = ListGpus(absl::Seconds(30));
  if (!gpus.ok()) FABRIC_SKIP("NCCL " << *version << " but no GPU: " << gpus.status().message());
  auto rendezvous = NcclRendezvous::Create(absl::Seconds(30));
  REQUIRE(rendezvous.ok());
  ProbeParams params = AllreduceParams();
  params.sizes_bytes = {1 << 20, 64 << 20};
  std::vector<std::string> logs;
  const std::vector<ProbeRun> runs =
      RunRanks(params, static_cast<uint32_t>(gpus->size()), rendezvous->unique_id(), "real", &logs,
               /*gpu_per_rank=*/true);
  for (const auto& run : runs) {
    INFO(run.reason);
    REQUIRE(run.outcome == Outcome::kOk);
    for (const auto& p : run.collective) {
      CHECK(p.wrong == 0);
      CHECK(p.algbw_gbytes > 0);
      // nccl-tests' bus bandwidth is algbw x 2(n-1)/n: 0 by definition with one rank.
      if (gpus->size() == 1) {
        CHECK(p.busbw_gbytes == 0);
      } else {
        CHECK(p.busbw_gbytes > 0);
      }
    }
  }
}

TEST_CASE(
    "NCCL ranks in child processes: a unique id, correct sums, per-size figures, clean logs") {
  UseStandIns();
  auto version = FindNccl(absl::Seconds(30));
  REQUIRE(version.ok());
  CHECK(*version == "2.21.5");
  auto rendezvous = NcclRendezvous::Create(absl::Seconds(30));
  REQUIRE(rendezvous.ok());
  CHECK(rendezvous->unique_id().size() == 128);
  const ProbeParams params = AllreduceParams();
  std::vector<std::string> logs;
  for (uint32_t nranks : {2u, 3u}) {
    auto fresh = NcclRendezvous::Create(absl::Seconds(30));
    REQUIRE(fresh.ok());
    std::vector<ProbeRun> runs =
        RunRanks(params, nranks, fresh->unique_id(), absl::StrCat("clean", nranks), &logs);
    for (const auto& run : runs) {
      INFO(run.reason);
      REQUIRE(run.outcome == Outcome::kOk);
      REQUIRE(run.collective.size() == 2);
      CHECK(run.collective[0].size_bytes == 4096);
      CHECK(run.collective[1].size_bytes == 65536 + 12);
      for (const auto& p : run.collective) {
        CHECK(p.wrong == 0);
        CHECK(p.time_us > 0);
        CHECK(p.busbw_gbytes == Approx(p.algbw_gbytes * 2.0 * (nranks - 1) / nranks));
      }
      CHECK(absl::StrContains(run.device, "nccl 2.21.5"));
    }
    NcclVerdict verdict = JudgeNcclLogs("node-1", logs);
    CHECK(verdict.transport.net() == "IB");
    CHECK(verdict.transport.gpudirect_rdma());
    CHECK(verdict.findings.empty());
  }
}

TEST_CASE("NCCL over sockets becomes one tcp_fallback naming the node and the evidence line") {
  UseStandIns();
  ::setenv("NCCL_IB_DISABLE", "1", 1);
  auto rendezvous = NcclRendezvous::Create(absl::Seconds(30));
  REQUIRE(rendezvous.ok());
  std::vector<std::string> logs;
  std::vector<ProbeRun> runs =
      RunRanks(AllreduceParams(), 2, rendezvous->unique_id(), "socket", &logs);
  ::unsetenv("NCCL_IB_DISABLE");
  for (const auto& run : runs) REQUIRE(run.outcome == Outcome::kOk);
  NcclVerdict verdict = JudgeNcclLogs("node-7", logs);
  CHECK(verdict.transport.net() == "Socket");
  CHECK_FALSE(verdict.transport.gpudirect_rdma());
  REQUIRE(verdict.findings.size() == 1);  // one per node, however many of its ranks saw it
  const v1::Finding& f = verdict.findings[0];
  CHECK(f.kind() == "tcp_fallback");
  CHECK(f.node() == "node-7");
  CHECK(absl::StrContains(f.evidence().at("line"), "via NET/Socket/0"));
  CHECK(f.evidence().at("rank_logs") == "2");

  ::setenv("NCCL_NET_GDR_LEVEL", "LOC", 1);
  auto again = NcclRendezvous::Create(absl::Seconds(30));
  REQUIRE(again.ok());
  runs = RunRanks(AllreduceParams(), 2, again->unique_id(), "nogdr", &logs);
  ::unsetenv("NCCL_NET_GDR_LEVEL");
  for (const auto& run : runs) REQUIRE(run.outcome == Outcome::kOk);
  verdict = JudgeNcclLogs("node-8", logs);
  REQUIRE(verdict.findings.size() == 1);
  CHECK(verdict.findings[0].kind() == "gpudirect_unavailable");
  CHECK(absl::StrContains(verdict.findings[0].evidence().at("line"), "via NET/IB/0"));
}

TEST_CASE("A hung NCCL rank is killed by the watchdog; a missing peer times out; bad ids fail") {
  UseStandIns();
  // A short watchdog only where one must fire; the runs that must fail or skip on their own
  // keep the long one, so that a slow machine cannot turn their answer into a timeout.
  const ProbeParams params = AllreduceParams();
  ProbeParams short_watchdog = params;
  short_watchdog.timeout = absl::Seconds(2);
  auto rendezvous = NcclRendezvous::Create(absl::Seconds(30));
  REQUIRE(rendezvous.ok());
  const std::string log = testing::TestPath("lonely.log");
  // Rank 0 of 2, whose peer never comes.
  ProbeRun lonely = RunNcclRank(short_watchdog, {0, 2, 0, rendezvous->unique_id(), log});
  CHECK(lonely.outcome == Outcome::kTimeout);
  CHECK(absl::StrContains(lonely.reason, "watchdog after 2s"));
  CHECK(lonely.collective.empty());

  ::setenv("FABRIC_FAKE_NCCL_HANG", "1", 1);
  ProbeRun hung = RunNcclRank(short_watchdog, {0, 1, 0, rendezvous->unique_id(), log});
  ::unsetenv("FABRIC_FAKE_NCCL_HANG");
  CHECK(hung.outcome == Outcome::kTimeout);

  // The rendezvous must outlive the ranks' joining: NCCL's bootstrap root is in its child.
  std::string orphaned_id;
  {
    auto gone = NcclRendezvous::Create(absl::Seconds(30));
    REQUIRE(gone.ok());
    orphaned_id = gone->unique_id();
  }
  ProbeRun orphaned = RunNcclRank(params, {0, 1, 0, orphaned_id, log});
  CHECK(orphaned.outcome == Outcome::kFailed);
  CHECK(absl::StrContains(orphaned.reason, "ncclCommInitRank: remote process exited"));

  ProbeRun bad = RunNcclRank(params, {0, 1, 0, "short", log});
  CHECK(bad.outcome == Outcome::kFailed);
  CHECK(absl::StrContains(bad.reason, "128 bytes"));

  ::setenv("FABRIC_FAKE_GPUS", "1", 1);
  ProbeRun no_gpu = RunNcclRank(params, {0, 1, 3, rendezvous->unique_id(), log});
  ::unsetenv("FABRIC_FAKE_GPUS");
  CHECK(no_gpu.outcome == Outcome::kSkipped);
  CHECK(absl::StrContains(no_gpu.reason, "no GPU 3"));
}

TEST_CASE("GPU inventory and gpu_copy run end to end against the driver stand-in") {
  UseStandIns();
  ::setenv("FABRIC_FAKE_GPUS", "2", 1);
  auto gpus = ListGpus(absl::Seconds(30));
  REQUIRE(gpus.ok());
  REQUIRE(gpus->size() == 2);
  CHECK(absl::StrContains((*gpus)[1].name(), "stand-in"));
  CHECK((*gpus)[1].pci_bus_id() == "0000:f1:00.0");
  CHECK((*gpus)[0].dma_buf_supported());
  ProbeParams params;
  params.kind = v1::GPU_COPY;
  params.sizes_bytes = {1 << 16, 1 << 20};
  params.iterations = 3;
  ProbeRun run = RunGpuCopy(params, absl::Seconds(30));
  ::setenv("FABRIC_FAKE_GPUS", "0", 1);
  ProbeRun none = RunGpuCopy(params, absl::Seconds(30));
  ::unsetenv("FABRIC_FAKE_GPUS");
  INFO(run.reason);
  REQUIRE(run.outcome == Outcome::kOk);
  CHECK(run.copy.size() == 4);  // 2 GPUs x 2 sizes
  CHECK(none.outcome == Outcome::kSkipped);
  CHECK(absl::StrContains(none.reason, "CUDA_ERROR_NO_DEVICE"));
}

}  // namespace fabricctl::probes
