#ifndef FABRICCTL_CONTROLLER_ANALYSIS_H_
#define FABRICCTL_CONTROLLER_ANALYSIS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "proto/config.pb.h"
#include "proto/finding.pb.h"

namespace fabricctl::controller {

// What the analysis knows of one node of a sweep.
struct NodeInput {
  std::string name;
  bool reachable = true;
  std::string unreachable_reason;
  // MTU of the interface that carries the node's agent address; 0 when unknown.
  uint32_t netdev_mtu = 0;
  std::string netdev;  // that interface's name
  // Set when an RDMA probe was asked for and this node has no usable RDMA device.
  std::string rdma_unavailable_reason;
};

// How a pair's measurement ended.
enum class PairStatus : uint8_t {
  kMeasured,
  kFailed,       // the probe ran and failed (reason in PairInput::reason)
  kTimeout,      // the pair's deadline passed
  kNotMeasured,  // an end was unreachable
};

// One measured pair, compact (8.4 M of these for a 4,096-node full sweep). Headline figures:
// average bandwidth at the largest message size, typical latency at the smallest; NaN when
// the sweep had no such probe or it did not measure.
struct PairInput {
  uint32_t client = 0;  // node indices
  uint32_t server = 0;
  float bw_gbps = std::numeric_limits<float>::quiet_NaN();
  float lat_us = std::numeric_limits<float>::quiet_NaN();
  PairStatus status = PairStatus::kMeasured;
  // An RDMA probe was asked for and the pair could only use TCP.
  bool tcp_fallback = false;
  // Index into AnalysisInput::reasons for failures; -1 when none.
  int32_t reason = -1;
};

struct AnalysisInput {
  std::vector<NodeInput> nodes;
  std::vector<PairInput> pairs;
  std::vector<std::string> reasons;
  v1::Expectations expect;
  v1::Thresholds thresholds;
  // The bandwidth probe is an RDMA probe, so expect.link_rate_gbps applies to it (a TCP
  // probe is judged only against its peers).
  bool bandwidth_is_rdma = false;
  std::string bandwidth_probe;  // "rdma_write_bw", "tcp_bw"; for finding details
  std::string latency_probe;
};

enum class Verdict : uint8_t { kOk, kWarning, kCritical, kUnknown };

struct NodeResult {
  Verdict verdict = Verdict::kOk;
  float median_bw_gbps = std::numeric_limits<float>::quiet_NaN();
  float robust_z = std::numeric_limits<float>::quiet_NaN();
  uint32_t pairs = 0;
  uint32_t slow_pairs = 0;
  bool straggler = false;
};

struct PairResult {
  Verdict verdict = Verdict::kOk;
  bool slow = false;
  bool high_latency = false;
  float relative_bw = std::numeric_limits<float>::quiet_NaN();
};

struct AnalysisResult {
  std::vector<NodeResult> nodes;
  std::vector<PairResult> pairs;
  std::vector<v1::Finding> findings;
  float best_bw_gbps = std::numeric_limits<float>::quiet_NaN();
  float median_bw_gbps = std::numeric_limits<float>::quiet_NaN();
  float best_lat_us = std::numeric_limits<float>::quiet_NaN();
};

// Turns a sweep's measurements into verdicts and findings (SPEC.md "Findings"):
//
// A pair is slow when its bandwidth is below thresholds.relative_bw of the best pair, or (RDMA
// only) below thresholds.min_bw_efficiency of expect.link_rate_gbps; its latency is high above
// thresholds.relative_lat times the best pair's, or above thresholds.max_lat_us.
//
// Localisation: the node that explains most of the bad pairs is blamed first — a node with
// at least two measured pairs of which at least half are bad, or whose median bandwidth is a
// robust outlier (z below -max_robust_z), is a straggler_node; its pairs are then explained and
// the next node is considered with what is left. A bad pair that no straggler explains is a
// slow_link / high_latency_link: both ends are fine with everyone else.
//
// Also: node_unreachable, probe_failed, probe_timeout, tcp_fallback, and mtu_mismatch (a
// node's MTU differs from expect.netdev_mtu, or, with no expectation, from the sweep's most
// common MTU).
AnalysisResult Analyze(const AnalysisInput& input);

// Robust z-score helpers: median, and MAD scaled by 1.4826 (consistent with the standard
// deviation for normal data).
double Median(std::vector<double> values);
double ScaledMad(const std::vector<double>& values, double median);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_ANALYSIS_H_
