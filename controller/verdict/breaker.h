#ifndef FABRICCTL_CONTROLLER_VERDICT_BREAKER_H_
#define FABRICCTL_CONTROLLER_VERDICT_BREAKER_H_

// The drain breaker (breaker.max_share, breaker.min_nodes, breaker.window): one verdict, or a
// wave of small ones, that would drain more of the nodes it judged than the site allows drains
// nobody more; many nodes failing at once points at the fabric or the configuration.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "proto/config.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

// What the verdicts within breaker.window drained and judged.
struct EarlierDrains {
  std::set<std::string> drained, judged;
  size_t verdicts = 0;
};

// Whether `drain` nodes of `judged` are more than the breaker allows: more than its min_nodes
// and more than its max_share of them.
bool HoldsDrains(const v1::DrainBreaker& breaker, size_t drain, size_t judged);

// On a finished report (its summary's drain list made): when its drains, with `earlier`'s,
// would be more than the breaker allows of its nodes, `earlier`'s judged and `vouched` more
// judged without a measurement, no finding asks for a drain any more (each says the breaker
// held it: evidence drain_held), one drain_breaker_open names the nodes it would have drained,
// the drain list is emptied and the verdict is critical. Only this verdict's drains are held.
// A breaker without max_share (a configuration without defaults) is none.
void ApplyBreaker(const v1::DrainBreaker& breaker, uint32_t vouched, const EarlierDrains& earlier,
                  v1::Report* report);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_BREAKER_H_
