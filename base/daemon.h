#ifndef FABRICCTL_BASE_DAEMON_H_
#define FABRICCTL_BASE_DAEMON_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace fabricctl {

// The life cycle of fabric-agent and fabric-controller, under systemd (Type=notify, with or
// without WatchdogSec) or without it: signals are taken synchronously by the main thread, and
// readiness, reloads, stopping and watchdog pings go to systemd through libsystemd's sd_notify
// (a no-op when $NOTIFY_SOCKET is unset).

// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread and every thread it starts
// afterwards, so that RunDaemon() receives them synchronously (no handler does I/O). Call at
// the top of main, before any thread exists.
void BlockDaemonSignals();

// Tells systemd the daemon is ready (READY=1, with `status` as its STATUS=).
void NotifyReady(const std::string& status);

// Pings systemd's watchdog when it is on for this process (a daemon that waits before it
// serves, a standby controller, pings it itself).
void PingWatchdog();

// Tells systemd the daemon is stopping (STOPPING=1).
void NotifyStopping(const std::string& status);

struct DaemonHooks {
  // Called on SIGHUP; its error is logged and the daemon goes on with what it had. Null: SIGHUP
  // is logged and ignored.
  std::function<absl::Status()> reload;
  // Asked before each watchdog ping: a daemon that answers false (or hangs in it) is not
  // pinged, so systemd restarts it after WatchdogSec. Null: always healthy.
  std::function<bool()> healthy;
};

// Waits at most `timeout` for SIGINT or SIGTERM (a daemon that waits before it serves: a
// standby controller); returns the signal's name, or "" when none came. SIGHUP is taken and
// ignored meanwhile.
std::string WaitForStopSignal(absl::Duration timeout);

// Waits for SIGINT or SIGTERM and returns its name. Meanwhile SIGHUP runs hooks.reload, and
// when systemd's watchdog is on (WATCHDOG_USEC for this process) the daemon pings it at half
// its interval while hooks.healthy says so.
std::string RunDaemon(const std::string& name, const DaemonHooks& hooks);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_DAEMON_H_
