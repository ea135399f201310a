#include "probes/gpu/copy_audit.h"

#include <catch2/catch.hpp>

namespace fabricctl::probes {
namespace {

TEST_CASE("a measured gpu_copy is a ran entry with the rates per GPU and size") {
  v1::ProbeResult result;
  result.set_outcome(v1::PROBE_OK);
  auto* p = result.add_copy();
  p->set_gpu_index(1);
  p->set_size_bytes(64u << 20);
  p->set_h2d_gbytes(54.61);
  p->set_d2h_gbytes(53.04);
  const v1::AuditResult r = GpuCopyAudit(result);
  CHECK(r.audit() == "gpu_copy");
  CHECK(r.outcome() == v1::AUDIT_RAN);
  REQUIRE(r.observed().count("GPU 1 67108864 B") == 1);
  CHECK(r.observed().at("GPU 1 67108864 B") == "H2D 54.6 GB/s, D2H 53.0 GB/s");
}

TEST_CASE("a skipped gpu_copy keeps its reason; a failure or a timeout is a failed entry") {
  v1::ProbeResult skipped;
  skipped.set_outcome(v1::PROBE_SKIPPED);
  skipped.set_reason("libcuda.so.1 not found");
  CHECK(GpuCopyAudit(skipped).outcome() == v1::AUDIT_SKIPPED);
  CHECK(GpuCopyAudit(skipped).reason() == "libcuda.so.1 not found");

  v1::ProbeResult hung;
  hung.set_outcome(v1::PROBE_TIMEOUT);
  hung.set_reason("the child did not answer within 150s");
  CHECK(GpuCopyAudit(hung).outcome() == v1::AUDIT_FAILED);
  CHECK(GpuCopyAudit(hung).reason() == "timed out: the child did not answer within 150s");

  v1::ProbeResult empty;  // ran, yet no figure: not a pass
  empty.set_outcome(v1::PROBE_OK);
  CHECK(GpuCopyAudit(empty).outcome() == v1::AUDIT_FAILED);
}

}  // namespace
}  // namespace fabricctl::probes
