#ifndef FABRICCTL_TESTS_SUBPROCESS_H_
#define FABRICCTL_TESTS_SUBPROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tests/testing/testing.h"  // TempDir, TestPath

namespace fabricctl::testing {

// A child process with its stdout on a pipe, for integration tests. stderr is inherited (it
// lands in the test log). The destructor kills (SIGKILL) and reaps a child still running.
class Subprocess {
 public:
  explicit Subprocess(std::vector<std::string> argv);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // The next line of stdout (without '\n'), or nullopt at end of output or after `timeout`.
  std::optional<std::string> ReadLine(absl::Duration timeout);
  // Reads lines until one contains `needle`; returns it, or nullopt (end of output / timeout).
  std::optional<std::string> WaitForLine(const std::string& needle, absl::Duration timeout);
  // Sends `signal`.
  void Kill(int signal);
  // Waits for exit (at most `timeout`, then SIGKILL) and returns the exit code, or
  // 128 + signal number when killed by a signal.
  int Wait(absl::Duration timeout);
  // Whether the child is still running (it is reaped, and its exit code kept, when it is not):
  // unlike kill(pid, 0), which succeeds on a child that died and was not yet reaped.
  bool Running();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
  std::optional<int> exit_code_;
};

// A daemon's bound address, from its "listening on ADDR" line (the controller and the agent
// print one once serving); fails the test after 15 s without one.
std::string ListeningAddress(Subprocess& daemon);

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs a command to completion (killed after `timeout`) and captures stdout and stderr.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         absl::Duration timeout = absl::Seconds(30));

}  // namespace fabricctl::testing

#endif  // FABRICCTL_TESTS_SUBPROCESS_H_
