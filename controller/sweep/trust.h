#ifndef FABRICCTL_CONTROLLER_SWEEP_TRUST_H_
#define FABRICCTL_CONTROLLER_SWEEP_TRUST_H_

#include <string>
#include <vector>

#include "proto/probe.pb.h"
#include "proto/report.pb.h"

// What the controller takes from an agent. Agents report facts; the controller decides
// findings. An agent holding a valid certificate may still lie (a compromised node), so
// whatever it says is bounded to what it can know: its findings are about itself only, of a
// kind the catalogue knows at a level the catalogue gives, and its figures are ones a probe
// could have measured. The rules hold for every agent answer a sweep keeps (audits, probe
// results, the findings an NCCL rank's log gave).
namespace fabricctl::controller::sweep {

// The most bandwidth any result may claim where no link rate is expected: 8 x 800 Gb/s, both
// ways, beyond any one node's fabric bandwidth today.
inline constexpr double kBandwidthCeilingGbps = 12800;

// Bounds on what one agent answer may carry into a report.
inline constexpr int kMaxFindingsPerAnswer = 256;
inline constexpr int kMaxEvidenceEntries = 32;
inline constexpr size_t kMaxFindingText = 1024;

// An agent's findings about `node` (the node that answered): each stamped with `node` (its
// peer cleared), its severity and action the catalogue's for its kind (the agent may ask for
// the kind's alternate level, no other), its text printable and bounded. A finding of a kind
// the catalogue does not know, or of one only the controller decides (about a pair, a link or
// the fabric), is dropped and logged; so are those beyond kMaxFindingsPerAnswer.
// Returns how many were dropped.
int AcceptFindings(const std::string& node,
                   google::protobuf::RepeatedPtrField<v1::Finding>* findings);

// The same for the findings inside each audit result, and the results' own text.
int AcceptAudits(const std::string& node, std::vector<v1::AuditResult>* audits);

// A probe result from the agent of `node`, checked against the `spec` the controller sent:
// its kind is the spec's, its text printable, its findings accepted as above, and its figures
// possible: finite, non-negative, bandwidths at most `max_gbps` (what the fastest link of the
// fabric could carry), latencies above zero and within the probe's deadline. A result with an
// impossible figure becomes FAILED with CAUSE_INVALID_FIGURES and a reason naming the figure.
void AcceptResult(const std::string& node, const v1::ProbeSpec& spec, double max_gbps,
                  v1::ProbeResult* result);

// The largest bandwidth a probe result may claim: twice the expected RDMA link rate where
// one is set (both directions at once), else a ceiling no NIC of today reaches.
double MaxPlausibleGbps(double expected_link_rate_gbps);

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_TRUST_H_
