#include "probes/common/child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

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

absl::StatusOr<std::string> RunInChild(const std::function<absl::StatusOr<std::string>()>& work,
                                       absl::Duration timeout) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    // A crash must end the child plainly, whatever handlers the parent installed.
    for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) ::signal(sig, SIG_DFL);
    Answer(fds[1], work());
    ::_exit(0);  // no atexit handlers, no flushing of the parent's buffers
  }
  ::close(fds[1]);
  const absl::Time deadline = absl::Now() + timeout;
  std::string bytes;
  bool timed_out = false;
  for (;;) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // re-check the deadline
    char chunk[4096];
    ssize_t n = ::read(fds[0], chunk, sizeof(chunk));
    if (n <= 0) break;  // the child closed its end: done (or dead)
    bytes.append(chunk, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat("killed by the watchdog after ", absl::FormatDuration(timeout)));
  }
  if (WIFSIGNALED(status)) {
    return absl::InternalError(absl::StrCat("the child died of signal ", WTERMSIG(status), " (",
                                            strsignal(WTERMSIG(status)), ")"));
  }
  if (bytes.empty()) return absl::InternalError("the child exited without an answer");
  const int code = static_cast<unsigned char>(bytes[0]);
  if (code == 0) return bytes.substr(1);
  return absl::Status(static_cast<absl::StatusCode>(code), bytes.substr(1));
}

}  // namespace fabricctl::probes
