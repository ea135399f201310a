#include "probes/common/sizes.h"

#include <catch2/catch.hpp>

namespace fabricctl::probes {

TEST_CASE("Sizes take binary units") {
  CHECK(*ParseSize("2") == 2);
  CHECK(*ParseSize("64K") == 65536);
  CHECK(*ParseSize("64k") == 65536);
  CHECK(*ParseSize("64KiB") == 65536);
  CHECK(*ParseSize("8M") == 8388608);
  CHECK(*ParseSize("1G") == 1073741824);
  CHECK_FALSE(ParseSize("").ok());
  CHECK_FALSE(ParseSize("K").ok());
  CHECK_FALSE(ParseSize("-4").ok());
  CHECK_FALSE(ParseSize("1.5M").ok());
  CHECK_FALSE(ParseSize("99999999999999999999").ok());
}

TEST_CASE("A MIN:MAX sweep doubles like perftest -a") {
  auto all = ParseSizeSweep("2:8M", 1ull << 30);
  REQUIRE(all.ok());
  REQUIRE(all->size() == 23);  // perftest -a: 2^1 .. 2^23
  CHECK(all->front() == 2);
  CHECK(all->back() == 8388608);
  CHECK(*ParseSizeSweep("64K:1M", 1ull << 30) ==
        std::vector<uint64_t>{65536, 131072, 262144, 524288, 1048576});
  CHECK(*ParseSizeSweep("3:20", 1 << 20) == std::vector<uint64_t>{3, 6, 12});
  CHECK(*ParseSizeSweep("4K:4K", 1 << 20) == std::vector<uint64_t>{4096});
}

TEST_CASE("A list is sorted and deduplicated") {
  CHECK(*ParseSizeSweep("1M,4K,64K,4K", 1ull << 30) == std::vector<uint64_t>{4096, 65536, 1048576});
}

TEST_CASE("Zero, above the cap and malformed sweeps are errors naming the size") {
  auto zero = ParseSizeSweep("0:1M", 1ull << 30);
  REQUIRE_FALSE(zero.ok());
  CHECK(std::string(zero.status().message()) == "--sizes: size '0' is zero");
  auto big = ParseSizeSweep("4K,2G", 1ull << 30);
  REQUIRE_FALSE(big.ok());
  CHECK(std::string(big.status().message()) == "--sizes: size '2G' is above the cap of 1G bytes");
  CHECK_FALSE(ParseSizeSweep("1M:4K", 1ull << 30).ok());
  CHECK_FALSE(ParseSizeSweep("1:2:3", 1ull << 30).ok());
  CHECK_FALSE(ParseSizeSweep("", 1ull << 30).ok());
  CHECK_FALSE(ParseSizeSweep("4K,,8K", 1ull << 30).ok());
}

TEST_CASE("Sizes print in their shortest exact unit") {
  CHECK(FormatSize(65536) == "64K");
  CHECK(FormatSize(8388608) == "8M");
  CHECK(FormatSize(1536) == "1536");
  CHECK(FormatSize(2) == "2");
}

}  // namespace fabricctl::probes
