#ifndef FABRICCTL_PROBES_COMMON_CHILD_H_
#define FABRICCTL_PROBES_COMMON_CHILD_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "probes/common/cancel.h"

namespace fabricctl::probes {

// Runs `work` in a forked child process and returns the bytes it produced, with a watchdog:
// a child still running after `timeout` is killed (SIGKILL) and the answer is
// DeadlineExceeded. For CUDA and NCCL calls, which can hang or abort a process: the caller
// survives either. A child that crashes is Internal with the signal; `work` returning an
// error status passes it through.
// With `cancel`, the child is also killed as soon as it is cancelled (Cancelled).
absl::StatusOr<std::string> RunInChild(const std::function<absl::StatusOr<std::string>()>& work,
                                       absl::Duration timeout,
                                       const Cancellation* cancel = nullptr);

// A child that answers once and then stays alive, holding state its answer refers to (NCCL's
// bootstrap root behind a unique id), until this object is destroyed: then it is killed and
// reaped. Move-only.
class HeldChild {
 public:
  // Forks a child that runs `work` and answers as RunInChild's does; the answer must come
  // within `timeout` (else the child is killed and the answer is DeadlineExceeded). An error
  // answer ends the child.
  static absl::StatusOr<HeldChild> Start(const std::function<absl::StatusOr<std::string>()>& work,
                                         absl::Duration timeout);
  HeldChild() = default;
  HeldChild(HeldChild&& other) noexcept;
  HeldChild& operator=(HeldChild&& other) noexcept;
  ~HeldChild();

  const std::string& answer() const { return answer_; }
  bool running() const { return pid_ > 0; }
  // Whether the child has ended by itself since it answered (reaps it then).
  bool Exited();
  // After Exited() said so: the child's exit status, -1 when a signal ended it.
  int exit_code() const { return exit_code_; }

 private:
  void End();
  int pid_ = -1;
  int hold_fd_ = -1;  // the child runs until this closes or it is killed
  std::string answer_;
  int exit_code_ = -1;
};

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COMMON_CHILD_H_
