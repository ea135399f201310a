#include "probes/table.h"

#include <string>

#include "catch2/catch.hpp"
#include "probes/catalogue.h"

namespace fabricctl::probes {
namespace {

TEST_CASE("the catalogue describes every implemented probe as it is") {
  REQUIRE(AllProbes().size() == ProbeCatalogue().size());
  for (const Probe* probe : AllProbes()) {
    INFO(probe->name());
    const ProbeInfo* info = FindProbeInfo(probe->kind());
    REQUIRE(info != nullptr);
    CHECK(std::string(info->name) == probe->name());
    CHECK(info->measures_bandwidth == probe->measures_bandwidth());
    CHECK(FindProbeInfo(std::string(probe->name())) == info);
    CHECK(FindProbe(std::string(info->name)) == probe);
  }
  CHECK(IsRdmaProbe(v1::RDMA_WRITE_BW));
  CHECK_FALSE(IsRdmaProbe(v1::TCP_BW));
  CHECK(FindProbeInfo("allreduce") == nullptr);
}

}  // namespace
}  // namespace fabricctl::probes
