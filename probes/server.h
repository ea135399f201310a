#ifndef FABRICCTL_PROBES_SERVER_H_
#define FABRICCTL_PROBES_SERVER_H_

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "base/socket.h"
#include "probes/common/params.h"
#include "probes/probe.h"

namespace fabricctl::probes {

// The server half of every pair probe behind one TCP port (like ib_write_bw without a host
// argument, or iperf3 -s). Each connection starts with a ProbeHello; the server validates it
// against its caps, answers a ProbeWelcome, and hands the connection to the probe named in the
// hello, on a thread of its own. Every thread is joined before Serve returns.
//
// A server started for one run (ServeContext.token set) takes only hellos that carry the run's
// secret: any other connection (a stranger on the data network, a stale client) is closed
// without effect on the run: it neither ends a one-off session nor counts as its error, and
// the server goes on listening. When all kMaxSessions are taken, the oldest connection that has
// not yet proven itself makes room for a newcomer, so idle strangers cannot lock the run's
// client out. What a stranger can still do is flood the port (connections faster than the
// client can say hello): load, never a figure or an ended session.
class ProbeServer {
 public:
  // Sessions served at once; a connection beyond them is closed unanswered.
  static constexpr size_t kMaxSessions = 64;

  // Binds host:port (port 0: any free port).
  static absl::StatusOr<std::unique_ptr<ProbeServer>> Listen(const std::string& host, uint16_t port,
                                                             ServeContext context);
  ~ProbeServer();

  uint16_t port() const { return listener_.port; }

  // Serves until Stop(), or with `one_off` until a client ends its session (ProbeHello.bye),
  // or until `deadline` (DeadlineExceeded: no client came, or it never finished). Returns the
  // first error of a probe connection only in one-off mode (a standalone server reports what
  // went wrong); a long-running server goes on.
  absl::Status Serve(bool one_off, absl::Time deadline = absl::InfiniteFuture());

  // Makes Serve return, ending the sessions in progress; callable from any thread.
  void Stop();

 private:
  explicit ProbeServer(net::Listener listener, ServeContext context);
  // Reads the hello and either refuses it or runs the probe's server half. `stranger` is set
  // when the connection did not prove it belongs to the run (no hello, or a wrong secret).
  absl::Status Handle(net::UniqueFd connection, uint64_t id, bool* bye, bool* stranger);
  // Takes connection `id` off the pending list (it proved itself, or it is over).
  void Unlist(uint64_t id);
  // Whether a connection may start a session beside `sessions` others (displacing the oldest
  // unproven one when all are taken).
  bool MakeRoom(size_t sessions);
  // The connection's session on a thread of its own; `done` is set when it ends.
  std::thread StartSession(net::UniqueFd connection, bool one_off, std::atomic<bool>* session_over,
                           std::shared_ptr<std::atomic<bool>> done);

  net::Listener listener_;
  ServeContext context_;
  net::UniqueFd wake_;  // eventfd that interrupts the accept loop
  std::atomic<bool> stopping_{false};
  // Shuts down the sessions' connections when the server stops (by Stop or its deadline), so
  // that no session outlives the server.
  Cancellation sessions_;
  Mutex mu_;
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
  // Connections that have not yet said a hello with the run's secret, oldest first: (id, a
  // descriptor of theirs to shut down when a newcomer needs the room).
  std::deque<std::pair<uint64_t, int>> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ = 0;  // the accept loop's only
};

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_SERVER_H_
