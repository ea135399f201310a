#include "probes/sysfs/sysfs_root.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "tests/testing/testing.h"

namespace fabricctl::probes {

TEST_CASE("SysfsRoot reads, lists and follows links below its root") {
  std::string root = testing::TestPath("sysroot");
  ::mkdir(root.c_str(), 0755);
  ::mkdir((root + "/sys").c_str(), 0755);
  ::mkdir((root + "/sys/class").c_str(), 0755);
  ::mkdir((root + "/sys/class/net").c_str(), 0755);
  ::mkdir((root + "/sys/class/net/eth0").c_str(), 0755);
  std::ofstream(root + "/sys/class/net/eth0/mtu") << "9000\n";
  ::unlink((root + "/sys/class/net/eth0/device").c_str());
  REQUIRE(::symlink("../../../0000:18:00.0", (root + "/sys/class/net/eth0/device").c_str()) == 0);

  SysfsRoot sysfs(root + "/");
  auto mtu = sysfs.ReadTrimmed("/sys/class/net/eth0/mtu");
  REQUIRE(mtu.ok());
  CHECK(*mtu == "9000");
  auto names = sysfs.List("/sys/class/net/eth0");
  REQUIRE(names.ok());
  CHECK(*names == std::vector<std::string>{"device", "mtu"});
  auto link = sysfs.ReadLink("/sys/class/net/eth0/device");
  REQUIRE(link.ok());
  CHECK(*link == "../../../0000:18:00.0");
  CHECK(sysfs.Exists("/sys/class/net/eth0/mtu"));
  CHECK_FALSE(sysfs.Exists("/sys/class/net/eth1"));

  auto missing = sysfs.Read("/sys/class/net/eth1/mtu");
  REQUIRE_FALSE(missing.ok());
  CHECK(absl::IsNotFound(missing.status()));
  CHECK(std::string(missing.status().message()).find(root + "/sys/class/net/eth1/mtu") !=
        std::string::npos);
}

}  // namespace fabricctl::probes
