#ifndef FABRICCTL_REPORT_RENDER_ACCEPTANCE_H_
#define FABRICCTL_REPORT_RENDER_ACCEPTANCE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/report.pb.h"

namespace fabricctl::report {

// The output formats of `fabricctl accept` (docs/accept.md): "text" (one line per new node,
// accepted or rejected with the checks that failed, then each failing finding), "json" (the
// Acceptance message through protobuf's JSON printer, proto field names), "junit" (one
// testsuite, one testcase per new node and check, a failure per failed check) and "html" (one
// self-contained page: the summary, a row per new node and check, the configuration
// differences, the cabling, each node's figures beside the references', the other findings).
const std::vector<std::string>& AcceptanceFormats();
absl::StatusOr<std::string> RenderAcceptance(const v1::Acceptance& acceptance,
                                             const std::string& format);

}  // namespace fabricctl::report

#endif  // FABRICCTL_REPORT_RENDER_ACCEPTANCE_H_
