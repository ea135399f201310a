#include "base/hostlist.h"

#include <catch2/catch.hpp>

namespace fabricctl {
namespace {

using V = std::vector<std::string>;

V Expand(const std::string& e) {
  auto r = ExpandHostlist(e, "--nodes");
  INFO(e << ": " << r.status().message());
  REQUIRE(r.ok());
  return *r;
}

std::string Error(const std::string& e, size_t max = 100000) {
  auto r = ExpandHostlist(e, "--nodes", max);
  REQUIRE_FALSE(r.ok());
  return std::string(r.status().message());
}

TEST_CASE("Slurm hostlists expand as scontrol show hostnames does") {
  CHECK(Expand("node-1") == V{"node-1"});
  CHECK(Expand("node-[1-4,7]") == V{"node-1", "node-2", "node-3", "node-4", "node-7"});
  CHECK(Expand("gpu[08-11]") == V{"gpu08", "gpu09", "gpu10", "gpu11"});
  CHECK(Expand("rack[1-2]-n[1-2]") == V{"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"});
  CHECK(Expand("a, b[1-2],c") == V{"a", "b1", "b2", "c"});
  CHECK(Expand("n[1-2],n[2-3]") == V{"n1", "n2", "n3"});  // duplicates once, first order
  CHECK(Expand("n[3]") == V{"n3"});
}

TEST_CASE("Bad hostlists are errors that say what is wrong") {
  CHECK(Error("") == "--nodes: the node list is empty");
  CHECK(Error(" , ") == "--nodes: the node list is empty");
  CHECK(Error("a,,b") == "--nodes: an empty name in 'a,,b'");
  CHECK(Error("n[1-4") == "--nodes: '[' without ']' in 'n[1-4'");
  CHECK(Error("n1-4]") == "--nodes: ']' without '[' at character 5 of 'n1-4]'");
  CHECK(Error("n[4-1]") == "--nodes: '[4-1]': range 4-1 runs backwards");
  CHECK(Error("n[a-b]") == "--nodes: '[a-b]': 'a-b' is not a number or a range LOW-HIGH");
  CHECK(Error("n[[1]]").find("nested") != std::string::npos);
  CHECK(Error("n[1-100]", 10) == "--nodes: '[1-100]' names more than 10 hosts");
}

TEST_CASE("Many long ranges in one bracket are refused before any name is made") {
  std::string ranges;
  for (int i = 0; i < 2000; ++i) ranges += (i ? "," : "") + std::string("0-99999");
  CHECK(Error("n[" + ranges + "]").find("names more than 100000 hosts") != std::string::npos);
  CHECK(Error("n[1-6,10-15]", 10).find("names more than 10 hosts") != std::string::npos);
  // A large term repeated: the names made are counted, not only the distinct ones.
  CHECK(Error("n[1-8],n[1-8]", 10) == "--nodes: more than 10 hosts");
}

}  // namespace
}  // namespace fabricctl
