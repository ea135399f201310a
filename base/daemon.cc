#include "base/daemon.h"

#include <signal.h>
#include <systemd/sd-daemon.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "base/logging.h"

namespace fabricctl {
namespace {

sigset_t DaemonSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

void Notify(const std::string& state) {
  // unset_environment=0: children (NCCL ranks, probes) never talk to systemd anyway, since
  // only the main PID's notifications are accepted under NotifyAccess=main.
  int rc = sd_notify(0, state.c_str());
  if (rc < 0) Logger("daemon")->warn("sd_notify: {}", std::strerror(-rc));
}

}  // namespace

void BlockDaemonSignals() {
  sigset_t set = DaemonSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

std::string WaitForStopSignal(absl::Duration timeout) {
  const sigset_t set = DaemonSignals();
  const absl::Time until = absl::Now() + timeout;
  for (absl::Duration left = timeout; left > absl::ZeroDuration(); left = until - absl::Now()) {
    const timespec wait = absl::ToTimespec(left);
    const int signal = sigtimedwait(&set, nullptr, &wait);
    if (signal == SIGINT || signal == SIGTERM) return signal == SIGINT ? "SIGINT" : "SIGTERM";
    if (signal < 0 && errno == EAGAIN) return "";
  }
  return "";
}

void NotifyReady(const std::string& status) { Notify("READY=1\nSTATUS=" + status); }

void PingWatchdog() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0) Notify("WATCHDOG=1");
}

void NotifyStopping(const std::string& status) { Notify("STOPPING=1\nSTATUS=" + status); }

std::string RunDaemon(const std::string& name, const DaemonHooks& hooks) {
  auto log = Logger(name);
  uint64_t watchdog_usec = 0;
  if (sd_watchdog_enabled(0, &watchdog_usec) <= 0) watchdog_usec = 0;
  if (watchdog_usec > 0) {
    log->info("systemd watchdog on: pinging every {} ms", watchdog_usec / 2000);
  }
  const sigset_t set = DaemonSignals();
  for (;;) {
    int signal = 0;
    if (watchdog_usec > 0) {
      const uint64_t half = watchdog_usec / 2;
      timespec timeout{static_cast<time_t>(half / 1000000),
                       static_cast<long>(half % 1000000) * 1000};
      signal = sigtimedwait(&set, nullptr, &timeout);
      if (signal < 0) {
        if (errno == EAGAIN && (!hooks.healthy || hooks.healthy())) Notify("WATCHDOG=1");
        continue;
      }
    } else if (sigwait(&set, &signal) != 0) {
      continue;
    }
    if (signal == SIGHUP) {
      if (!hooks.reload) {
        log->info("SIGHUP: nothing to reload; ignored");
        continue;
      }
      Notify("RELOADING=1");
      absl::Status reloaded = hooks.reload();
      if (reloaded.ok()) {
        log->info("SIGHUP: configuration reloaded");
      } else {
        log->error("SIGHUP: configuration not reloaded, keeping the old one: {}",
                   std::string(reloaded.message()));
      }
      Notify("READY=1");
      continue;
    }
    return signal == SIGINT ? "SIGINT" : "SIGTERM";
  }
}

}  // namespace fabricctl
