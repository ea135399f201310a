#include "cli/output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/testing/testing.h"

namespace fabricctl::cli {
namespace {

std::string Dir(const std::string& name) { return testing::TempDir(name); }

std::string Read(const std::string& path) { return testing::ReadFile(path); }

size_t Entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("A report replaces a regular file whole and leaves nothing beside it") {
  const std::string dir = Dir("regular");
  const std::string path = dir + "/report.json";
  std::ofstream(path) << "old";
  REQUIRE(WriteOutput(path, "new report").ok());
  CHECK(Read(path) == "new report");
  CHECK(Entries(dir) == 1);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK((st.st_mode & 0777) == (0666 & ~mask));  // the old file's, made with the umask
}

TEST_CASE("A link, a FIFO or a directory at the output is refused and left untouched") {
  const std::string dir = Dir("hostile");
  const std::string victim = dir + "/victim";
  std::ofstream(victim) << "precious";
  const std::string link = dir + "/link.json";
  REQUIRE(::symlink(victim.c_str(), link.c_str()) == 0);
  absl::Status s = WriteOutput(link, "report");
  CHECK(absl::IsInvalidArgument(s));
  CHECK(std::string(s.message()).find("symbolic link") != std::string::npos);
  CHECK(Read(victim) == "precious");

  const std::string fifo = dir + "/fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  s = CheckOutput(fifo);  // would block on open if it were opened
  CHECK(absl::IsInvalidArgument(s));
  CHECK(std::string(s.message()).find("not a regular file") != std::string::npos);
  CHECK(absl::IsInvalidArgument(WriteOutput(dir, "report")));

  // The old predictable temporary name is no longer used: a link planted there is not followed.
  const std::string planted = dir + "/report.json.tmp";
  REQUIRE(::symlink(victim.c_str(), planted.c_str()) == 0);
  REQUIRE(WriteOutput(dir + "/report.json", "report").ok());
  CHECK(Read(victim) == "precious");
}

TEST_CASE("An output whose directory is missing is refused before any work") {
  absl::Status s = CheckOutput("/nonexistent-dir/x.json");
  CHECK(absl::IsInvalidArgument(s));
  CHECK(std::string(s.message()).find("/nonexistent-dir") != std::string::npos);
  CHECK(CheckOutput("").ok());
  CHECK(CheckOutput("-").ok());
}

}  // namespace fabricctl::cli
