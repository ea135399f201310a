#include "base/lock_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/testing/testing.h"

namespace fabricctl {
namespace {

std::string TempDir() {
  std::string pattern = testing::TestPath("lockXXXXXX");
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

std::string Read(const std::string& path) { return testing::ReadFile(path); }

TEST_CASE("A second holder of a lock file is refused with the first one's pid") {
  const std::string path = TempDir() + "/db.lock";
  auto first = LockFile::Acquire(path, "database db");
  REQUIRE(first.ok());
  CHECK(Read(path) == std::to_string(::getpid()) + "\n");

  // flock locks belong to the open file, so a second open in this process conflicts too.
  auto second = LockFile::Acquire(path, "database db");
  REQUIRE_FALSE(second.ok());
  const std::string message(second.status().message());
  CHECK(message.find("database db is in use by another process (pid " + std::to_string(::getpid()) +
                     ")") != std::string::npos);
  CHECK(message.find(path) != std::string::npos);

  first->reset();
  CHECK(Read(path).empty());
  auto third = LockFile::Acquire(path, "database db");
  CHECK(third.ok());
}

TEST_CASE("A lock file that is a symlink or not a regular file is refused") {
  const std::string dir = TempDir();
  REQUIRE(::symlink("/etc/passwd", (dir + "/link.lock").c_str()) == 0);
  auto link = LockFile::Acquire(dir + "/link.lock", "database");
  CHECK_FALSE(link.ok());
  REQUIRE(::mkfifo((dir + "/fifo.lock").c_str(), 0600) == 0);
  auto fifo = LockFile::Acquire(dir + "/fifo.lock", "database");
  REQUIRE_FALSE(fifo.ok());
  CHECK(std::string(fifo.status().message()).find("not a regular file") != std::string::npos);
}

}  // namespace
}  // namespace fabricctl
