// gpudirect on the fixture nodes, against the RoCE H100 expectations.
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "probes/audit/audit.h"
#include "probes/audit/testing.h"

namespace fabricctl::probes {
using audit_testing::Findings;
using audit_testing::Fixtures;
using audit_testing::RoceH100;
using V = std::vector<std::string>;

TEST_CASE("gpudirect: the planted fault produces exactly its finding") {
  CHECK(Findings("roce-h100-no-peermem", RoceH100()) == V{"gpudirect_unavailable:"});
}

TEST_CASE("GPUDirect without peer memory: dma-buf counts when the driver and kernel have it") {
  SysfsRoot root(Fixtures() + "/roce-h100-no-peermem");
  auto run = [&](std::optional<std::vector<v1::Gpu>> driver) {
    AuditContext ctx{&root, RoceH100(), {}, "n1"};
    ctx.driver_gpus = std::move(driver);
    auto results = RunAudits(ctx, {"gpudirect"});
    REQUIRE(results.ok());
    return (*results)[0];
  };
  std::vector<v1::Gpu> gpus(8);
  for (auto& g : gpus) g.set_dma_buf_supported(true);
  v1::AuditResult with = run(gpus);
  CHECK(with.findings().empty());
  CHECK(with.observed().at("path") == "dma-buf");
  CHECK(with.observed().at("dma_buf") == "8 of 8 GPUs support it, kernel 6.1.0-27-amd64");
  gpus[5].set_dma_buf_supported(false);
  v1::AuditResult one_without = run(gpus);
  REQUIRE(one_without.findings_size() == 1);
  CHECK(one_without.findings(0).kind() == "gpudirect_unavailable");
  CHECK(one_without.findings(0).detail().find("7 of 8 GPUs support it") != std::string::npos);
  v1::AuditResult not_asked = run(std::nullopt);
  REQUIRE(not_asked.findings_size() == 1);
  CHECK(not_asked.observed().at("dma_buf") == "not asked of the CUDA driver");
}

}  // namespace fabricctl::probes
