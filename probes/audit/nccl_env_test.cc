// nccl_env on the healthy RoCE H100 node, with NCCL variables set.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "probes/audit/audit.h"
#include "probes/audit/testing.h"

namespace fabricctl::probes {
using audit_testing::Findings;
using audit_testing::Fixtures;
using audit_testing::RoceH100;
using V = std::vector<std::string>;

TEST_CASE("NCCL's environment: fallbacks to TCP and names that match nothing") {
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_IB_DISABLE", "1"}}) == V{"tcp_fallback:"});
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_NET", "Socket"}}) == V{"tcp_fallback:"});
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_IB_HCA", "mlx5_0:1,mlx5_9"}}) ==
        V{"nccl_env_misconfigured:"});
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_IB_HCA", "mlx5"}}).empty());  // prefix
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_IB_HCA", "^mlx5_9"}}).empty());
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_SOCKET_IFNAME", "eth"}}) ==
        V{"nccl_env_misconfigured:"});
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_SOCKET_IFNAME", "eno"}}).empty());
}

}  // namespace fabricctl::probes
