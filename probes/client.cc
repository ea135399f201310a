#include "probes/client.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "probes/table.h"

namespace fabricctl::probes {

ProbeRun RunProbeClient(const ProbeParams& params, const ServerAddress& server,
                        const ProbeLimits& limits, bool end_session) {
  const Probe* probe = FindProbe(params.kind);
  ProbeRun run;
  if (probe == nullptr) {
    run.reason = absl::StrCat("no probe of kind ", v1::ProbeKind_Name(params.kind));
    return run;
  }
  run.kind = probe->name();
  if (auto s = ValidateParams(params, limits); !s.ok()) {
    run.reason = std::string(s.message());
    return run;
  }
  run = probe->Run(params, server);
  if (params.cancel != nullptr && params.cancel->cancelled() && run.outcome != Outcome::kOk) {
    // Whatever the sockets said when they were shut down, the probe was stopped.
    run.outcome = Outcome::kTimeout;
    run.reason = "stopped: its requester went away or its deadline passed";
    run.cause = v1::CAUSE_CANCELLED;
    run.server_side = false;
    run.bw.clear();
    run.lat.clear();
    return run;
  }
  if (end_session) {
    auto fd = net::ConnectTcp(server.host, server.port, absl::Seconds(5),
                              params.cancel ? &params.cancel->flag() : nullptr, params.source_host,
                              params.netdev);
    if (fd.ok()) {
      v1::ProbeHello bye;
      bye.set_bye(true);
      bye.set_token(params.token);
      (void)net::SendFrame(fd->get(), bye, absl::Now() + absl::Seconds(5));
    }
  }
  return run;
}

}  // namespace fabricctl::probes
