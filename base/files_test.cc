#include "base/files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "tests/testing/testing.h"

namespace fabricctl {
namespace {

std::string TempDir() {
  std::string pattern = testing::TestPath("filesXXXXXX");
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

std::string Message(const absl::StatusOr<std::string>& r) {
  return std::string(r.status().message());
}

TEST_CASE("A bounded read takes a regular file within its bound") {
  const std::string path = TempDir() + "/a.yaml";
  std::ofstream(path) << "probes: {}\n";
  auto text = ReadBoundedFile(path, "--config", 100);
  REQUIRE(text.ok());
  CHECK(*text == "probes: {}\n");
  auto small = ReadBoundedFile(path, "--config", 4);
  REQUIRE_FALSE(small.ok());
  CHECK(Message(small) == "--config: cannot read '" + path + "': is 11 bytes; at most 4 are read");
}

TEST_CASE("A FIFO, a directory and a device are refused without blocking or reading") {
  const std::string dir = TempDir();
  REQUIRE(::mkfifo((dir + "/fifo").c_str(), 0600) == 0);
  auto fifo = ReadBoundedFile(dir + "/fifo", "--nccl-log", 1 << 20);
  REQUIRE_FALSE(fifo.ok());
  CHECK(Message(fifo).find("is a FIFO, not a regular file") != std::string::npos);
  auto directory = ReadBoundedFile(dir, "--config", 1 << 20);
  REQUIRE_FALSE(directory.ok());
  CHECK(Message(directory).find("is a directory") != std::string::npos);
  auto zero = ReadBoundedFile("/dev/zero", "--pairing", 1 << 20);
  REQUIRE_FALSE(zero.ok());
  CHECK(Message(zero).find("is a character device") != std::string::npos);
  auto missing = ReadBoundedFile(dir + "/none", "--tls-ca", 1 << 20);
  REQUIRE_FALSE(missing.ok());
  CHECK(Message(missing).find("No such file or directory") != std::string::npos);
}

}  // namespace
}  // namespace fabricctl
