#ifndef FABRICCTL_CONTROLLER_SWEEP_FAKE_AGENT_H_
#define FABRICCTL_CONTROLLER_SWEEP_FAKE_AGENT_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "controller/sweep/agent_client.h"

namespace fabricctl::controller::sweep {

// A re-test budget (a share of the measuring rounds' time) that no sweep of fake agents
// reaches: they answer at once, so a budget in time would leave their re-tests to chance.
constexpr double kUnboundedRetests = 1e6;

// A fleet of agents in memory, for the stages' tests: each node answers at "<name>:7401" and
// measures what it is told, in 5 ms unless told otherwise (SetDelay). A pair's bandwidth is
// the slower end's speed times the link's factor; latency is 10 us divided by the same.
// Thread-safe.
class FakeAgents : public AgentClient {
 public:
  static std::string AddressOf(const std::string& name) { return name + ":7401"; }

  // A node that answers, with `speed_gbps` of bandwidth to offer.
  void Add(const std::string& name, double speed_gbps = 10);
  // The link a-b (either direction) carries `factor` of what its ends offer; with `netdev`,
  // only on that rail's interface.
  void SetLink(const std::string& a, const std::string& b, double factor,
               const std::string& netdev = "");
  // The link a-b flaps: its bandwidth probes run at `factor` of what its ends offer in the
  // first measurement of the pair (both directions), at full rate in the next, and so on.
  void FlapLink(const std::string& a, const std::string& b, double factor);
  // The link a-b retransmits `rate` of the TCP segments its bandwidth probes send, in the next
  // `measurements` of them (either direction; -1: all); every other one retransmits none.
  void LoseOnLink(const std::string& a, const std::string& b, double rate, int measurements = -1);
  // From now on the node answers nothing (every call UNAVAILABLE).
  void Kill(const std::string& name);
  // The next `times` client halves run by `client` against `server` fail with `status`.
  void FailNext(const std::string& client, const std::string& server, absl::Status status,
                int times = 1);
  // After this many client halves in total, `name` dies (0: never).
  void KillAfter(const std::string& name, int client_calls);
  // `name`'s GPU memory cannot be registered for RDMA: probes asking for GPU memory on its side
  // fail as the real ones do (cause CAUSE_GPUDIRECT_UNAVAILABLE and the half; the server half
  // says so again when it is stopped).
  void BreakGpudirect(const std::string& name);
  // `name` has no RDMA device: its inventory lists none and RDMA probes with it are skipped.
  void RemoveRdma(const std::string& name);
  // `name` has `count` GPUs for gpu_copy (25 GB/s each way); without, gpu_copy is skipped there.
  void SetGpus(const std::string& name, int count);
  // What `name` sends leaves at most at `gbps` (a slow transmit lane, a shaped egress queue).
  void SetEgress(const std::string& name, double gbps);
  // The next `calls` client halves with `name` at either end run at most at `gbps` (a burst of
  // other traffic that passes: the node looks slow in the first rounds, not in its re-tests).
  void SlowFirst(const std::string& name, double gbps, int calls);
  // Probes between a and b fail in the data path (connect timed out); the agents answer.
  void DropLink(const std::string& a, const std::string& b);
  // The next `times` server halves asked of `name` find it busy (RESOURCE_EXHAUSTED).
  void Busy(const std::string& name, int times);
  // The host ring's all-reduce (the allreduce probe over TCP or RDMA): every rank moves its
  // share of each size, 2(n-1)/n of the buffer, at its node's speed, and times its link to the
  // right on its own at the same speed. `name` reports `send_time_us` for that link instead (a
  // rank that lies).
  void LieAboutRingLink(const std::string& name, double send_time_us);
  // The server halves `name` starts answer `address` as their endpoint (a lying agent that
  // points its peers' probes at another host).
  void AnswerServerAs(const std::string& name, const std::string& address);
  // While held, every client half waits (after its delay) until Release or a cancel: a test
  // that needs sweeps to stay in flight while it checks something holds them.
  void Hold();
  void Release();
  // Client halves run by `name` take this long (unless cancelled).
  void SetDelay(const std::string& name, absl::Duration delay);
  // `name` has interface `netdev` (up, with an IPv4 address) offering `gbps`: probes placed on
  // that netdev (a rail's) run at the slower end's figure for it; a probe on a netdev an end
  // lacks fails at the agent, as the real one does.
  void AddNic(const std::string& name, const std::string& netdev, double gbps);
  // The agents' link watch (RunAudits asking for "link_watch") answers that it ran, quiet; but
  // for `name`, while flapping, that its `netdev` went down twice (link_flapping). An empty
  // netdev makes it quiet again.
  void FlapWatch(const std::string& name, const std::string& netdev);
  // How many link watch answers were asked for.
  int WatchAsked() const;
  // Client halves in progress now, and the most at once so far (those with a delay).
  int Running() const;
  int PeakRunning() const;
  // Calls made to agents after they died.
  int CallsToDead() const;

  // How many client halves ran on the pair (either direction).
  int Measurements(const std::string& a, const std::string& b) const;
  // Server halves started and not stopped.
  int OpenServers() const;

  absl::StatusOr<v1::NodeInventory> GetInventory(const std::string& address,
                                                 absl::Duration deadline) override;
  absl::StatusOr<v1::RunAuditsResponse> RunAudits(const std::string& address,
                                                  const v1::RunAuditsRequest& request,
                                                  absl::Duration deadline) override;
  absl::StatusOr<v1::StartProbeServerResponse> StartProbeServer(
      const std::string& address, const v1::StartProbeServerRequest& request,
      absl::Duration deadline) override;
  absl::StatusOr<v1::RunProbeClientResponse> RunProbeClient(
      const std::string& address, const v1::RunProbeClientRequest& request,
      absl::Duration deadline) override;
  absl::StatusOr<v1::StopProbeServerResponse> StopProbeServer(
      const std::string& address, const v1::StopProbeServerRequest& request,
      absl::Duration deadline) override;
  absl::StatusOr<v1::RunLocalProbeResponse> RunLocalProbe(const std::string& address,
                                                          const v1::RunLocalProbeRequest& request,
                                                          absl::Duration deadline) override;
  void CancelAll() override;
  void Resume() override;

 private:
  struct Agent {
    double speed_gbps = 10;
    double egress_gbps = 0;  // 0: no limit of its own
    double slow_gbps = 0;    // SlowFirst
    int slow_calls = 0;
    bool gpudirect_broken = false;
    bool no_rdma = false;
    int gpus = 0;
    double ring_link_us = -1;    // LieAboutRingLink; -1: the truth
    std::string server_address;  // AnswerServerAs; empty: its own
    bool dead = false;
    int busy = 0;
    // A client half takes its time, as a real one does: a round's pairs overlap, and the
    // concurrency each result records is what its round held, not the scheduler's chance.
    absl::Duration delay = absl::Milliseconds(5);
    std::map<std::string, double> nics;  // netdev -> Gb/s
    std::string watch_flapping;          // FlapWatch: the netdev its link watch saw fall
  };
  // One rank's all-reduce result (LieAboutRingLink).
  v1::ProbeResult RingRank(const std::string& name, const v1::RunLocalProbeRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The agent at `address`, or UNAVAILABLE.
  absl::StatusOr<std::string> Alive(const std::string& address) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  std::map<std::string, Agent> agents_ ABSL_GUARDED_BY(mu_);  // by name
  int watch_asked_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::pair<std::string, std::string>, double> links_
      ABSL_GUARDED_BY(mu_);  // by sorted names
  struct Flap {
    double factor = 1;
    int calls = 0;  // bandwidth client halves so far
  };
  std::map<std::pair<std::string, std::string>, Flap> flaps_ ABSL_GUARDED_BY(mu_);
  struct Loss {
    double rate = 0;
    int measurements = -1;  // left to lose in (-1: all)
  };
  std::map<std::pair<std::string, std::string>, Loss> losses_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::pair<std::string, std::string>>, double> rail_links_
      ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, bool> dropped_
      ABSL_GUARDED_BY(mu_);  // by sorted names
  std::map<std::pair<std::string, std::string>, std::vector<absl::Status>> failures_
      ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, int> measured_
      ABSL_GUARDED_BY(mu_);                                          // by sorted names
  std::map<std::string, std::string> servers_ ABSL_GUARDED_BY(mu_);  // run id -> server node
  // run id -> its server half's failure
  std::map<std::string, v1::FailureCause> server_failures_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> kill_after_ ABSL_GUARDED_BY(mu_);
  int client_calls_ ABSL_GUARDED_BY(mu_) = 0;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  int peak_running_ ABSL_GUARDED_BY(mu_) = 0;
  mutable int calls_to_dead_ ABSL_GUARDED_BY(mu_) = 0;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool held_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_FAKE_AGENT_H_
