#include "tests/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "absl/time/clock.h"

namespace fabricctl::testing {
namespace {

pid_t SpawnWithPipes(const std::vector<std::string>& argv, int* out_fd, int* err_fd) {
  int out[2];
  int err[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  if (err_fd != nullptr && ::pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    if (err_fd != nullptr) ::dup2(err[1], STDERR_FILENO);
    // Daemons under test must not inherit the test's blocked signal mask.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(out[1]);
  *out_fd = out[0];
  if (err_fd != nullptr) {
    ::close(err[1]);
    *err_fd = err[0];
  }
  return pid;
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

Subprocess::Subprocess(std::vector<std::string> argv) {
  pid_ = SpawnWithPipes(argv, &stdout_fd_, nullptr);
}

Subprocess::~Subprocess() {
  if (!exit_code_) {
    Kill(SIGKILL);
    Wait(absl::Seconds(5));
  }
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

std::optional<std::string> Subprocess::ReadLine(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return std::nullopt;
    pollfd pfd{stdout_fd_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::nullopt;
    char chunk[4096];
    ssize_t n = ::read(stdout_fd_, chunk, sizeof(chunk));
    if (n <= 0) return std::nullopt;
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

std::optional<std::string> Subprocess::WaitForLine(const std::string& needle,
                                                   absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (auto line = ReadLine(deadline - absl::Now())) {
    if (line->find(needle) != std::string::npos) return line;
  }
  return std::nullopt;
}

std::string ListeningAddress(Subprocess& daemon) {
  auto line = daemon.WaitForLine("listening on ", absl::Seconds(15));
  if (!line) throw std::runtime_error("the daemon printed no \"listening on\" line within 15 s");
  return line->substr(line->rfind(' ') + 1);
}

void Subprocess::Kill(int signal) {
  if (pid_ > 0 && !exit_code_) ::kill(pid_, signal);
}

int Subprocess::Wait(absl::Duration timeout) {
  if (exit_code_) return *exit_code_;
  const absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  for (;;) {
    pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (absl::Now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    absl::SleepFor(absl::Milliseconds(10));  // polling a child's exit; no event to wait on
  }
  exit_code_ = DecodeStatus(status);
  return *exit_code_;
}

bool Subprocess::Running() {
  if (exit_code_ || pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return true;
  exit_code_ = DecodeStatus(status);
  return false;
}

CommandResult RunCommand(const std::vector<std::string>& argv, absl::Duration timeout) {
  int out_fd = -1, err_fd = -1;
  pid_t pid = SpawnWithPipes(argv, &out_fd, &err_fd);
  CommandResult result;
  const absl::Time deadline = absl::Now() + timeout;
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      ::kill(pid, SIGKILL);
      break;
    }
    int ready = ::poll(fds, 2, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char chunk[4096];
      ssize_t n = ::read(fds[i].fd, chunk, sizeof(chunk));
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? result.out : result.err).append(chunk, static_cast<size_t>(n));
      }
    }
  }
  for (auto& fd : fds) {
    if (fd.fd >= 0) ::close(fd.fd);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = DecodeStatus(status);
  return result;
}

}  // namespace fabricctl::testing
