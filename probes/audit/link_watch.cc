// link_watch: what the agent's watch of this node's links saw between sweeps (flaps, errors;
// agent/link_watch.h judges them). In the agent it is asked of the watch itself; in
// `fabricctl check` it is read from the file the agent writes at each sample, and a file the
// agent stopped writing is no verdict.
#include <sys/stat.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "google/protobuf/text_format.h"
#include "probes/audit/common.h"
#include "probes/audit/registry.h"

namespace fabricctl::probes::audit_internal {
namespace {

constexpr size_t kMaxWatchFileBytes = 4 << 20;

// How long after its last sample the agent's verdict still stands: three samples missed, and
// never less than a minute (a busy node's agent may be late).
absl::Duration Freshness(const v1::AuditResult& r) {
  absl::Duration interval = absl::Seconds(10);
  auto it = r.observed().find("interval");
  if (it != r.observed().end()) (void)absl::ParseDuration(it->second, &interval);
  return std::max(3 * interval, absl::Minutes(1));
}

// The findings as this node's: the agent may know the node by another name than the check.
void Rename(const std::string& node, v1::AuditResult* r) {
  for (auto& f : *r->mutable_findings()) {
    if (node.empty() || f.node() == node) continue;
    const std::string prefix = f.node() + ": ";
    if (f.detail().rfind(prefix, 0) == 0)
      f.set_detail(node + ": " + f.detail().substr(prefix.size()));
    f.set_node(node);
  }
}

class Watch final : public Audit {
 public:
  const char* name() const override { return "link_watch"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    if (ctx.link_watch) return ctx.link_watch();
    if (ctx.watch_file.empty()) return Skipped(name(), "no link watch file (watch.file)");
    struct stat st;
    if (::stat(ctx.watch_file.c_str(), &st) != 0) {
      return Skipped(name(), absl::StrCat("no link watch at ", ctx.watch_file,
                                          ": fabric-agent is not running on this node, or its "
                                          "watch is off (watch.interval 0s)"));
    }
    auto text = ReadBoundedFile(ctx.watch_file, "watch.file", kMaxWatchFileBytes);
    v1::AuditResult r;
    // A newer agent's fields are skipped, not a failure of this check.
    google::protobuf::TextFormat::Parser parser;
    parser.AllowUnknownField(true);
    if (!text.ok() || !parser.ParseFromString(*text, &r) || r.audit() != name()) {
      r.Clear();
      r.set_audit(name());
      r.set_outcome(v1::AUDIT_FAILED);
      r.set_reason(text.ok() ? absl::StrCat(ctx.watch_file, ": not a link watch verdict")
                             : std::string(text.status().message()));
      return r;
    }
    absl::Time last;
    std::string error;
    auto sampled = r.observed().find("last_sample");
    if (r.outcome() == v1::AUDIT_RAN &&
        (sampled == r.observed().end() ||
         !absl::ParseTime(absl::RFC3339_full, sampled->second, &last, &error) ||
         absl::Now() - last > Freshness(r) || last - absl::Now() > absl::Minutes(1))) {
      return Skipped(name(),
                     absl::StrCat("the link watch in ", ctx.watch_file, " was last sampled ",
                                  sampled == r.observed().end() ? "at no time it says"
                                                                : "at " + sampled->second,
                                  ": is fabric-agent running?"));
    }
    Rename(ctx.node, &r);
    return r;
  }
};

}  // namespace

const Audit& LinkWatchAudit() {
  static const Watch audit;
  return audit;
}

}  // namespace fabricctl::probes::audit_internal
