#ifndef FABRICCTL_CONTROLLER_VERDICT_FLAPS_H_
#define FABRICCTL_CONTROLLER_VERDICT_FLAPS_H_

// Flaps on pairs: what the nodes' link watches saw during the sweep, as evidence on the pairs'
// findings.
#include <vector>

#include "proto/finding.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

// A pair's finding whose end's link flapped within the watch's recovery window (a
// `link_flapping` finding among `watch`, the link watches' findings) carries it as evidence
// (`link_flapping`: "node link, ..."): the fall, not the pair, may be what was slow.
void NoteFlaps(const std::vector<v1::Finding>& watch, v1::Report* report);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_FLAPS_H_
