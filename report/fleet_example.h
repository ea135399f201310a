#ifndef FABRICCTL_REPORT_FLEET_EXAMPLE_H_
#define FABRICCTL_REPORT_FLEET_EXAMPLE_H_

// A fleet-sized report for the renderers' tests and tests/fleet_html_test.sh (testonly).
#include <algorithm>
#include <string>

#include "proto/report.pb.h"

namespace fabricctl::report {

// A fleet of `n` nodes in leaves of `leaf` nodes, every pair within a leaf measured (9.5 Gb/s,
// one pair per leaf at 2 and critical) and a pair to the next leaf from each leaf's first node.
inline v1::Report Fleet(int n, int leaf) {
  v1::Report r;
  r.set_schema("fabricctl.report/v1");
  r.set_source("sweep");
  r.mutable_health()->add_levels("leaf");
  r.mutable_health()->set_median_bw_gbps(9.5);
  auto name = [](int i) { return "node-" + std::to_string(i); };
  for (int i = 0; i < n; ++i) {
    auto* node = r.mutable_health()->add_nodes();
    node->set_node(name(i));
    (*node->mutable_labels())["leaf"] = "leaf-" + std::to_string(i / leaf);
  }
  auto pair = [&](int a, int b, double bw) {
    auto* p = r.mutable_health()->add_pairs();
    p->set_node(name(a));
    p->set_peer(name(b));
    p->set_bw_gbps(bw);
    p->set_bw_reverse_gbps(bw);
    p->set_relative_bw(bw / 9.5);
    p->set_status(bw < 5 ? v1::HEALTH_CRITICAL : v1::HEALTH_OK);
  };
  for (int first = 0; first < n; first += leaf) {
    for (int a = first; a < std::min(n, first + leaf); ++a) {
      for (int b = a + 1; b < std::min(n, first + leaf); ++b)
        pair(a, b, a == first && b == first + 1 ? 2 : 9.5);
    }
    if (first + leaf < n) pair(first, first + leaf, 9.4);
  }
  return r;
}

}  // namespace fabricctl::report

#endif  // FABRICCTL_REPORT_FLEET_EXAMPLE_H_
