#ifndef FABRICCTL_BASE_EXIT_CODE_H_
#define FABRICCTL_BASE_EXIT_CODE_H_

namespace fabricctl {

// Nagios-style exit codes, as NHC and operators' scripts expect (the README's "Exit codes").
enum ExitCode : int {
  kExitOk = 0,        // nothing worse than ok
  kExitWarning = 1,   // the worst finding is a warning
  kExitCritical = 2,  // a critical finding
  kExitUnknown = 3,   // could not complete: unreachable, bad configuration, bad arguments
};

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_EXIT_CODE_H_
