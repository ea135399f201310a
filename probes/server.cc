#include "probes/server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "probes/common/secret.h"
#include "probes/table.h"

namespace fabricctl::probes {

absl::StatusOr<std::unique_ptr<ProbeServer>> ProbeServer::Listen(const std::string& host,
                                                                 uint16_t port,
                                                                 ServeContext context) {
  auto listener = net::ListenTcp(host, port);
  if (!listener.ok()) return listener.status();
  std::unique_ptr<ProbeServer> server(new ProbeServer(*std::move(listener), std::move(context)));
  if (!server->wake_.valid()) return absl::InternalError("eventfd failed");
  return server;
}

ProbeServer::ProbeServer(net::Listener listener, ServeContext context)
    : listener_(std::move(listener)),
      context_(std::move(context)),
      wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

ProbeServer::~ProbeServer() { Stop(); }

void ProbeServer::Stop() {
  stopping_ = true;
  sessions_.Cancel();
  uint64_t one = 1;
  if (wake_.valid()) (void)!::write(wake_.get(), &one, sizeof(one));
}

void ProbeServer::Unlist(uint64_t id) {
  MutexLock lock(&mu_);
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->first == id) {
      pending_.erase(it);
      return;
    }
  }
}

absl::Status ProbeServer::Handle(net::UniqueFd connection, uint64_t id, bool* bye, bool* stranger) {
  v1::ProbeHello hello;
  // A run's client says hello as soon as it connects; a connection that does not is a
  // stranger's and gets little time.
  const absl::Time deadline =
      absl::Now() + (context_.token.empty() ? absl::Seconds(10) : absl::Seconds(2));
  if (auto s = net::RecvFrame(connection.get(), &hello, deadline); !s.ok()) {
    *stranger = !context_.token.empty();
    return s;
  }
  if (!context_.token.empty() && !SameSecret(hello.token(), context_.token)) {
    *stranger = true;
    return absl::PermissionDeniedError("a hello without this run's secret");
  }
  Unlist(id);  // proven: no longer one that a newcomer may displace
  if (hello.bye()) {
    *bye = true;
    return absl::OkStatus();
  }
  v1::ProbeWelcome welcome;
  const Probe* probe = FindProbe(hello.spec().kind());
  ProbeParams params = FromSpec(hello.spec());
  absl::Status valid = ValidateParams(params, context_.limits);
  if (context_.expected_spec && !SameMeasurement(hello.spec(), *context_.expected_spec)) {
    welcome.set_error("the hello asks for another measurement than the run was started for");
  } else if (probe == nullptr) {
    welcome.set_error(
        absl::StrCat("this server has no probe of kind ", v1::ProbeKind_Name(hello.spec().kind())));
  } else if (!valid.ok()) {
    welcome.set_error(std::string(valid.message()));
  } else if (std::find(params.sizes_bytes.begin(), params.sizes_bytes.end(), hello.size_bytes()) ==
             params.sizes_bytes.end()) {
    welcome.set_error(absl::StrCat("size ", hello.size_bytes(), " is not in the request"));
  }
  if (!welcome.error().empty()) {
    (void)net::SendFrame(connection.get(), welcome, deadline);
    return absl::InvalidArgumentError(welcome.error());
  }
  ServeContext context = context_;
  context.cancel = &sessions_;
  return probe->Serve(std::move(connection), hello, context);
}

bool ProbeServer::MakeRoom(size_t sessions) {
  if (sessions < kMaxSessions) return true;
  // Full. A connection that has not yet proven itself (no hello with the run's secret) makes
  // room for the newcomer: strangers holding idle connections cannot lock the run's client
  // out. The displaced one ends at once; the threads stay below twice the cap.
  MutexLock lock(&mu_);
  if (context_.token.empty() || pending_.empty() || sessions >= 2 * kMaxSessions) return false;
  ::shutdown(pending_.front().second, SHUT_RDWR);
  pending_.pop_front();
  return true;
}

std::thread ProbeServer::StartSession(net::UniqueFd connection, bool one_off,
                                      std::atomic<bool>* session_over,
                                      std::shared_ptr<std::atomic<bool>> done) {
  const uint64_t id = ++next_id_;
  // A second descriptor of the connection, registered for Stop and listed as pending: shutting
  // it down ends the session whichever descriptor the probe holds, and it closes only after
  // it is unlisted and unregistered.
  auto dup = std::make_shared<net::UniqueFd>(::fcntl(connection.get(), F_DUPFD_CLOEXEC, 0));
  if (!dup->valid()) {
    *done = true;
    return std::thread();
  }
  {
    MutexLock lock(&mu_);
    pending_.emplace_back(id, dup->get());
  }
  return std::thread([this, fd = std::make_shared<net::UniqueFd>(std::move(connection)), dup, id,
                      one_off, session_over, done]() mutable {
    bool bye = false, stranger = false;
    absl::Status status;
    {
      const WatchedFd watched(&sessions_, dup->get());
      status = Handle(std::move(*fd), id, &bye, &stranger);
      Unlist(id);
    }
    dup.reset();
    if (!status.ok() && !stranger) {
      MutexLock lock(&mu_);
      if (first_error_.ok()) first_error_ = status;
    }
    if (bye && one_off) {
      *session_over = true;
      Stop();
    }
    *done = true;
  });
}

absl::Status ProbeServer::Serve(bool one_off, absl::Time deadline) {
  // A thread per connection, at most kMaxSessions at once (beyond them, see MakeRoom); those
  // that have finished are joined as the loop goes, so a long-running server holds no stacks
  // of sessions long over.
  struct Session {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Session> threads;
  auto reap = [&threads] {
    for (auto it = threads.begin(); it != threads.end();) {
      if (it->done->load()) {
        if (it->thread.joinable()) it->thread.join();
        it = threads.erase(it);
      } else {
        ++it;
      }
    }
  };
  std::atomic<bool> session_over{false};
  bool expired = false;
  while (!stopping_ && !session_over) {
    pollfd fds[2] = {{listener_.fd.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    int timeout_ms = -1;
    if (deadline != absl::InfiniteFuture()) {
      absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        expired = true;
        break;
      }
      timeout_ms =
          static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
    }
    int ready = ::poll(fds, 2, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents & POLLIN) break;
    auto connection = net::AcceptTcp(listener_, absl::ZeroDuration());
    if (!connection.ok()) continue;
    reap();
    if (!MakeRoom(threads.size())) continue;  // the connection closes as it goes out of scope
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread thread = StartSession(*std::move(connection), one_off, &session_over, done);
    threads.push_back(Session{std::move(thread), std::move(done)});
  }
  if (expired) Stop();  // ends the sessions still open
  for (auto& t : threads) {
    if (t.thread.joinable()) t.thread.join();
  }
  if (expired && !session_over) {
    return absl::DeadlineExceededError("probe server: the client did not finish in time");
  }
  MutexLock lock(&mu_);
  return one_off ? first_error_ : absl::OkStatus();
}

}  // namespace fabricctl::probes
