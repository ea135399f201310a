#include "probes/common/child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fabricctl::probes {
namespace {

// The child's answer on the pipe: one byte (0 ok, else the absl status code), then the
// payload (the result or the error message).
void Answer(int fd, const absl::StatusOr<std::string>& result) {
  const char code = static_cast<char>(result.ok() ? 0 : static_cast<int>(result.status().code()));
  const std::string payload = result.ok() ? *result : std::string(result.status().message());
  (void)!::write(fd, &code, 1);
  size_t done = 0;
  while (done < payload.size()) {
    ssize_t n = ::write(fd, payload.data() + done, payload.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

namespace {

// Closes every descriptor from 3 up but `a` and `b`.
void KeepOnly(int a, int b) {
  if (a > b) std::swap(a, b);
  auto close_between = [](int from, int to) {  // [from, to]
    if (from <= to) ::close_range(static_cast<unsigned>(from), static_cast<unsigned>(to), 0);
  };
  close_between(3, a - 1);
  close_between(a + 1, b - 1);
  close_between(b + 1, INT_MAX);
}

// Forks a child that runs `work`, writes its answer on a pipe and closes it; with `hold` it
// then waits until the parent closes *hold_fd (or kills it). Returns the child's pid.
absl::StatusOr<pid_t> Fork(const std::function<absl::StatusOr<std::string>()>& work, bool hold,
                           int* answer_fd, int* hold_fd) {
  int fds[2];
  int holds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  if (hold && ::pipe2(holds, O_CLOEXEC) != 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {fds[0], fds[1], holds[0], holds[1]}) {
      if (fd >= 0) ::close(fd);
    }
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (hold) ::close(holds[1]);
    // Only this child's own pipe ends stay open: a sibling forked at the same moment must not
    // keep our answer pipe open (its reader would wait for that sibling too), nor may we keep
    // the parent's sockets.
    KeepOnly(fds[1], hold ? holds[0] : fds[1]);
    // A child the parent waits for dies with the thread that waits (a held child outlives the
    // thread that started it, and is killed by its owner instead).
    if (!hold) ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // A crash must end the child plainly, whatever handlers the parent installed.
    for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) ::signal(sig, SIG_DFL);
    absl::StatusOr<std::string> result = work();
    Answer(fds[1], result);
    ::close(fds[1]);
    if (hold && result.ok()) {
      char byte;
      while (::read(holds[0], &byte, 1) < 0 && errno == EINTR) {
      }
    }
    ::_exit(0);  // no atexit handlers, no flushing of the parent's buffers
  }
  ::close(fds[1]);
  if (hold) ::close(holds[0]);
  *answer_fd = fds[0];
  *hold_fd = holds[1];
  return pid;
}

// Reads the child's answer until it closes the pipe or `timeout` passes (then kills it).
// Reaps the child unless `keep` and the answer came in time.
absl::StatusOr<std::string> Collect(pid_t pid, int fd, absl::Duration timeout, bool keep,
                                    bool* reaped, const Cancellation* cancel = nullptr) {
  const absl::Time deadline = absl::Now() + timeout;
  std::string bytes;
  bool timed_out = false, cancelled = false;
  for (;;) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      timed_out = true;
      break;
    }
    if (cancel != nullptr && cancel->cancelled()) {
      cancelled = true;
      break;
    }
    pollfd pfd{fd, POLLIN, 0};
    // A tenth of a second at most between looks at the cancellation.
    const int wait_ms = static_cast<int>(
        std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, cancel != nullptr ? 100 : 1 << 30));
    int ready = ::poll(&pfd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // re-check the deadline
    char chunk[4096];
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n <= 0) break;  // the child closed its end: done (or dead)
    bytes.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  *reaped = false;
  if (timed_out || cancelled || !keep || bytes.empty() || bytes[0] != 0) {
    if (timed_out || cancelled) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    *reaped = true;
    if (cancelled) return absl::CancelledError("cancelled: the child was stopped");
    if (timed_out) {
      return absl::DeadlineExceededError(
          absl::StrCat("killed by the watchdog after ", absl::FormatDuration(timeout)));
    }
    if (WIFSIGNALED(status)) {
      return absl::InternalError(absl::StrCat("the child died of signal ", WTERMSIG(status), " (",
                                              strsignal(WTERMSIG(status)), ")"));
    }
  }
  if (bytes.empty()) return absl::InternalError("the child exited without an answer");
  const int code = static_cast<unsigned char>(bytes[0]);
  if (code == 0) return bytes.substr(1);
  return absl::Status(static_cast<absl::StatusCode>(code), bytes.substr(1));
}

}  // namespace

absl::StatusOr<std::string> RunInChild(const std::function<absl::StatusOr<std::string>()>& work,
                                       absl::Duration timeout, const Cancellation* cancel) {
  int fd = -1, unused = -1;
  auto pid = Fork(work, /*hold=*/false, &fd, &unused);
  if (!pid.ok()) return pid.status();
  bool reaped = false;
  return Collect(*pid, fd, timeout, /*keep=*/false, &reaped, cancel);
}

bool HeldChild::Exited() {
  if (pid_ <= 0) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return true;
  }
  return false;
}

absl::StatusOr<HeldChild> HeldChild::Start(const std::function<absl::StatusOr<std::string>()>& work,
                                           absl::Duration timeout) {
  HeldChild child;
  int fd = -1;
  auto pid = Fork(work, /*hold=*/true, &fd, &child.hold_fd_);
  if (!pid.ok()) return pid.status();
  child.pid_ = *pid;
  bool reaped = false;
  auto answer = Collect(*pid, fd, timeout, /*keep=*/true, &reaped);
  if (reaped) child.pid_ = -1;
  if (!answer.ok()) return answer.status();  // the destructor reaps a child still running
  child.answer_ = *std::move(answer);
  return child;
}

HeldChild::HeldChild(HeldChild&& other) noexcept { *this = std::move(other); }

HeldChild& HeldChild::operator=(HeldChild&& other) noexcept {
  if (this != &other) {
    End();
    pid_ = std::exchange(other.pid_, -1);
    hold_fd_ = std::exchange(other.hold_fd_, -1);
    answer_ = std::move(other.answer_);
    exit_code_ = std::exchange(other.exit_code_, -1);
  }
  return *this;
}

HeldChild::~HeldChild() { End(); }

void HeldChild::End() {
  if (hold_fd_ >= 0) ::close(hold_fd_);
  hold_fd_ = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

}  // namespace fabricctl::probes
