#include "cli/progress.h"

#include <catch2/catch.hpp>
#include <sstream>

namespace fabricctl::cli {
namespace {

v1::RoundProgress Round(const char* phase, uint32_t round, uint32_t rounds, uint32_t pairs,
                        uint32_t failed = 0) {
  v1::RoundProgress r;
  r.set_phase(phase);
  r.set_round(round);
  r.set_rounds(rounds);
  r.set_pairs(pairs);
  r.set_pairs_failed(failed);
  return r;
}

TEST_CASE("on a terminal: a bar, the elapsed time, and the time left from the rounds so far") {
  std::ostringstream err;
  absl::Time now = absl::FromUnixSeconds(1000);
  {
    SweepProgress progress(err, /*terminal=*/true, [&] { return now; });
    v1::SweepInfo info;
    info.set_sweep_id(7);
    info.set_rounds(4);
    progress.Started(info);
    CHECK(progress.Line(now) ==
          "sweep 7 [>                       ] measure 0/4 rounds, 0 pairs, 0:00 elapsed");
    now += absl::Seconds(10);
    progress.Round(Round("measure", 1, 4, 2));
    // One round in 10 s: three more, about 30 s.
    CHECK(
        progress.Line(now) ==
        "sweep 7 [======>                 ] measure 1/4 rounds, 2 pairs, 0:10 elapsed, ~0:30 left");
    // Between rounds the estimate counts down.
    CHECK(
        progress.Line(now + absl::Seconds(5)) ==
        "sweep 7 [======>                 ] measure 1/4 rounds, 2 pairs, 0:15 elapsed, ~0:25 left");
    now += absl::Seconds(30);
    progress.Round(Round("measure", 2, 4, 2, 1));
    CHECK(progress.Line(now) ==
          "sweep 7 [============>           ] measure 2/4 rounds, 4 pairs (1 failed), 0:40 "
          "elapsed, ~0:40 left");
    now += absl::Seconds(40);
    progress.Round(Round("measure", 4, 4, 4));
    CHECK(
        progress.Line(now) ==
        "sweep 7 [========================] measure 4/4 rounds, 8 pairs (1 failed), 1:20 elapsed");
    // Re-tests are a phase of their own, timed from the last measured round.
    now += absl::Seconds(6);
    progress.Round(Round("retest", 1, 3, 1));
    CHECK(
        progress.Line(now) ==
        "sweep 7 [========>               ] retest 1/3 rounds, 1 pairs, 1:26 elapsed, ~0:12 left");
    now += absl::Seconds(4);
    progress.Round(Round("retest", 3, 3, 1));
    // A second re-test pass counts from round 1 again: a new pass, timed from the last one's end.
    now += absl::Seconds(2);
    progress.Round(Round("retest", 1, 2, 1));
    CHECK(
        progress.Line(now) ==
        "sweep 7 [============>           ] retest 1/2 rounds, 1 pairs, 1:32 elapsed, ~0:02 left");
  }
  // Redrawn in place, and cleared at the end.
  CHECK(err.str().find("\r\033[Ksweep 7 [") != std::string::npos);
  CHECK(err.str().find('\n') == std::string::npos);
  CHECK(err.str().substr(err.str().size() - 4) == "\r\033[K");
}

TEST_CASE("elsewhere: a plain line per round with the elapsed time") {
  std::ostringstream err;
  absl::Time now = absl::FromUnixSeconds(1000);
  {
    SweepProgress progress(err, /*terminal=*/false, [&] { return now; });
    v1::SweepInfo info;
    info.set_sweep_id(3);
    info.set_rounds(2);
    info.add_nodes("a");
    info.add_nodes("b");
    progress.Started(info);
    now += absl::Seconds(75);
    progress.Round(Round("measure", 1, 2, 1));
  }
  CHECK(
      err.str() ==
      "sweep 3: 2 nodes, 2 rounds\nsweep 3: measure round 1/2: 1 pairs, 0 failed (1:15 elapsed)\n");
  CHECK(FormatClock(absl::Hours(12) + absl::Seconds(3)) == "12:00:03");
}

}  // namespace
}  // namespace fabricctl::cli
