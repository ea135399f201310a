#ifndef FABRICCTL_PROBES_CLIENT_H_
#define FABRICCTL_PROBES_CLIENT_H_

#include "probes/common/params.h"
#include "probes/common/result.h"
#include "probes/probe.h"

namespace fabricctl::probes {

// Runs the client half of `params.kind` against a ProbeServer and, when `end_session`, tells
// the server the session is over (a one-off server then exits). Parameters are validated
// against `limits` first; a bad request is kFailed with the reason and nothing is sent.
ProbeRun RunProbeClient(const ProbeParams& params, const ServerAddress& server,
                        const ProbeLimits& limits, bool end_session);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_CLIENT_H_
