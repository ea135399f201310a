#include "cli/history.h"

#include <catch2/catch.hpp>
#include <string>

namespace fabricctl::cli {

TEST_CASE("history --acceptances: a line each, the first few names, the sweeps, why cut short") {
  v1::ListAcceptancesResponse listed;
  v1::AcceptanceRecord* accepted = listed.add_acceptances();
  accepted->set_acceptance_id(3);
  accepted->mutable_recorded()->set_seconds(1'700'000'000);
  accepted->set_recorded_by("fabricctl");
  accepted->add_accepted("node-5");
  accepted->add_accepted("node-6");
  accepted->add_sweep_ids(4);
  accepted->add_sweep_ids(5);
  // A rack rejected whole, its first pass cut short: twelve names, of which eight are shown.
  v1::AcceptanceRecord* cut_short = listed.add_acceptances();
  cut_short->set_acceptance_id(2);
  cut_short->mutable_recorded()->set_seconds(1'700'000'000 - 8000);
  cut_short->set_recorded_by("fabric-prolog");
  for (int i = 1; i <= 12; ++i) {
    cut_short->add_rejected((i < 10 ? "rack7-0" : "rack7-") + std::to_string(i));
  }
  cut_short->set_incomplete("pass 1: controller unreachable");

  CHECK(FormatAcceptances(listed) ==
        "ID     RECORDED             BY               VERDICT\n"
        "3      2023-11-14T22:13:20Z fabricctl        accepted 2 (node-5,node-6), rejected 0; "
        "sweeps 4,5\n"
        "2      2023-11-14T20:00:00Z fabric-prolog    accepted 0, rejected 12 (rack7-01,rack7-02,"
        "rack7-03,rack7-04,rack7-05,rack7-06,rack7-07,rack7-08,... (4 more)); sweeps none; "
        "incomplete: pass 1: controller unreachable\n");
}

TEST_CASE("history --acceptances with none recorded is the header alone") {
  CHECK(FormatAcceptances(v1::ListAcceptancesResponse()) ==
        "ID     RECORDED             BY               VERDICT\n");
}

}  // namespace fabricctl::cli
