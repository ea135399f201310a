#include "controller/verdict/acceptance.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/exit_code.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

using Key = AcceptanceJudge::Key;
using Samples = AcceptanceJudge::Samples;

bool Raised(const v1::Finding& f) {
  return f.severity() == v1::SEVERITY_WARNING || f.severity() == v1::SEVERITY_CRITICAL;
}

Key KeyOf(const v1::Finding& f) { return {f.kind(), f.node(), f.peer(), f.rail(), f.device()}; }

// What makes two nodes' findings the same state: the kind, on the same device, of the same audit.
std::string Alike(const v1::Finding& f) {
  auto audit = f.evidence().find("audit");
  return absl::StrCat(f.kind(), "|", f.device(), "|",
                      audit == f.evidence().end() ? "" : audit->second);
}

void AddPair(const v1::PairHealth& p, Samples& s) {
  if (p.has_bw_gbps() && std::isfinite(p.bw_gbps())) s.bw_gbps.push_back(p.bw_gbps());
  if (p.has_bw_reverse_gbps() && std::isfinite(p.bw_reverse_gbps()))
    s.bw_gbps.push_back(p.bw_reverse_gbps());
  if (p.has_lat_us() && std::isfinite(p.lat_us())) s.lat_us.push_back(p.lat_us());
}

// The median as the sweep's verdict takes it: the mean of the middle two of an even count.
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

std::string Sweeps(const std::vector<int64_t>& ids) { return absl::StrJoin(ids, ","); }

}  // namespace

std::string CheckOf(const std::string& kind) {
  if (kind == report::kind::kMiscabled) return "cabling";
  if (kind == report::kind::kNodeUnreachable) return "reachable";
  if (report::IsConfigurationKind(kind)) return "configuration";
  return "fabric";
}

AcceptanceJudge::AcceptanceJudge(std::vector<std::string> new_nodes,
                                 std::vector<std::string> references)
    : new_nodes_(std::move(new_nodes)),
      references_(std::move(references)),
      fresh_(new_nodes_.begin(), new_nodes_.end()),
      refs_(references_.begin(), references_.end()) {}

void AcceptanceJudge::Add(const v1::Report& pass) {
  ++passes_;
  std::set<std::string> measured;
  for (const v1::NodeHealth& node : pass.health().nodes()) measured.insert(node.node());
  for (const std::string& name : new_nodes_) {
    if (measured.count(name) == 0) missing_[name].push_back(pass.sweep().sweep_id());
  }
  AddFindings(pass);
  AddPairs(pass);
  AddWatch(pass);
}

void AcceptanceJudge::AddFindings(const v1::Report& pass) {
  std::set<Key> this_pass;
  for (const v1::Finding& f : pass.findings()) {
    if (!Raised(f) || !this_pass.insert(KeyOf(f)).second) continue;
    auto [it, added] = seen_.try_emplace(KeyOf(f), Seen{f, {}});
    if (added) order_.push_back(KeyOf(f));
    it->second.sweeps.push_back(pass.sweep().sweep_id());
  }
}

void AcceptanceJudge::AddPairs(const v1::Report& pass) {
  auto add_rail = [&](const std::string& rail) {
    if (std::find(rails_.begin(), rails_.end(), rail) == rails_.end()) rails_.push_back(rail);
  };
  if (pass.health().rails().empty()) add_rail("");
  for (const std::string& rail : pass.health().rails()) add_rail(rail);
  for (const v1::PairHealth& p : pass.health().pairs()) {
    RailSamples& r = by_rail_[p.rail()];
    if (refs_.count(p.node()) > 0 && refs_.count(p.peer()) > 0) {
      AddPair(p, r.between);
      continue;
    }
    auto add = [&](const std::string& node, const std::string& partner) {
      if (fresh_.count(node) == 0 || (!refs_.empty() && refs_.count(partner) == 0)) return;
      AddPair(p, r.with[node]);
      r.partners[node].insert(partner);
    };
    add(p.node(), p.peer());
    add(p.peer(), p.node());
  }
}

void AcceptanceJudge::AddWatch(const v1::Report& pass) {
  // Each pass's link watch result counts, per link, the flaps and error counter rises within
  // its window ("eth0 flaps" = "3", "eth0 symbol_error" = "+40"); corrected FEC blocks are
  // the code doing its work, not errors.
  for (const v1::NodeHealth& node : pass.health().nodes()) {
    if (fresh_.count(node.node()) == 0) continue;
    for (const v1::AuditResult& audit : node.audits()) {
      if (audit.audit() != "link_watch" || audit.outcome() != v1::AUDIT_RAN) continue;
      for (const auto& [key, value] : audit.observed()) {
        const size_t space = key.rfind(' ');
        if (space == std::string::npos || key == "links") continue;
        const std::string counter = key.substr(space + 1);
        const bool flaps = counter == "flaps";
        if (!flaps && (counter == "fec_corrected" || value.empty() || value[0] != '+')) continue;
        uint64_t count = 0;
        if (!absl::SimpleAtoi(absl::StripPrefix(value, "+"), &count)) continue;
        auto [it, first] = counters_.try_emplace({node.node(), key}, Counter{count, count, flaps});
        if (!first) it->second.most = std::max(it->second.most, count);
      }
    }
  }
}

// Flaps and error counters that grew from the first pass's count to a later one's: they
// happened during the burn-in (a lower bound, as the watch counts within its window).
void AcceptanceJudge::AddGrowth(Failed& failed) const {
  for (const auto& [at, c] : counters_) {
    if (c.most <= c.first) continue;
    const auto& [node, key] = at;
    const uint64_t rise = c.most - c.first;
    const std::string link = key.substr(0, key.rfind(' '));
    v1::Finding f = report::Make(
        c.flaps ? report::kind::kLinkFlapping : report::kind::kLinkErrors, node,
        absl::StrCat(node, " ", key, ": ", rise, c.flaps ? " more flap(s)" : " more errors",
                     " during the burn-in (its link watch counted ", c.first,
                     " at the first pass, ", c.most, " at a later one)"));
    f.set_device(link);
    auto& e = *f.mutable_evidence();
    e["during_burn_in"] = absl::StrCat(c.flaps ? "" : "+", rise);
    e["counter"] = key.substr(key.rfind(' ') + 1);
    failed[node]["fabric"].push_back(std::move(f));
  }
}

void AcceptanceJudge::SortFindings(v1::Acceptance& out, Failed& failed) const {
  // The configuration kinds every reference shows: the fleet's state, which a new node
  // joining it may share.
  std::map<std::string, std::set<std::string>> refs_with;
  for (const Key& key : order_) {
    const v1::Finding& f = seen_.at(key).finding;
    if (refs_.count(f.node()) > 0) refs_with[Alike(f)].insert(f.node());
  }
  auto shared = [&](const v1::Finding& f) {
    return !refs_.empty() && CheckOf(f.kind()) == "configuration" &&
           refs_with[Alike(f)].size() == refs_.size();
  };
  std::map<std::tuple<std::string, std::string, std::string>, v1::Finding> unstable;
  for (const Key& key : order_) {
    v1::Finding f = seen_.at(key).finding;
    const std::vector<int64_t>& sweeps = seen_.at(key).sweeps;
    (*f.mutable_evidence())["passes"] = absl::StrCat(sweeps.size(), " of ", passes_);
    const bool named = fresh_.count(f.node()) > 0 || fresh_.count(f.peer()) > 0;
    if (!named) {
      const bool reference = refs_.count(f.node()) > 0 || refs_.count(f.peer()) > 0;
      *(reference ? out.add_reference_findings() : out.add_other_findings()) = std::move(f);
    } else if (shared(f)) {
      *out.add_shared_findings() = std::move(f);
    } else if (passes_ >= 2 && sweeps.size() < passes_ && CheckOf(f.kind()) == "fabric") {
      // Raised in some passes only: what comes and goes is the finding, whatever its kind.
      NoteUnstable(f, sweeps, unstable[{f.node(), f.peer(), f.rail()}]);
    } else {
      for (const std::string* end : {&f.node(), &f.peer()}) {
        if (fresh_.count(*end) > 0) failed[*end][CheckOf(f.kind())].push_back(f);
      }
    }
  }
  for (auto& [at, u] : unstable) {
    u.set_detail(absl::StrCat(std::get<0>(at), std::get<1>(at).empty() ? "" : " <-> ",
                              std::get<1>(at), ": ", u.detail()));
    for (const std::string* end : {&u.node(), &u.peer()}) {
      if (fresh_.count(*end) > 0) failed[*end]["fabric"].push_back(u);
    }
  }
}

void AcceptanceJudge::NoteUnstable(const v1::Finding& f, const std::vector<int64_t>& sweeps,
                                   v1::Finding& u) const {
  if (u.kind().empty()) {
    // A node's own finding (no peer) coming and going is the node's instability (the kind's
    // alternate level, as a node unstable with most of its peers); a pair's, the pair's.
    u = f.peer().empty()
            ? report::Make(report::kind::kUnstable, f.node(), "", report::Level::kAlternate)
            : report::MakePair(report::kind::kUnstable, f.node(), f.peer(), "");
    u.set_rail(f.rail());
  }
  auto& e = *u.mutable_evidence();
  e["kinds"] = e["kinds"].empty() ? f.kind() : absl::StrCat(e["kinds"], ",", f.kind());
  e[f.kind() + "_sweeps"] = Sweeps(sweeps);
  e["passes"] = absl::StrCat(passes_);
  u.set_detail(absl::StrCat(u.detail(), u.detail().empty() ? "" : "; ", f.kind(), " in ",
                            sweeps.size(), " of ", passes_, " passes (sweeps ", Sweeps(sweeps),
                            "), not in the others"));
}

void AcceptanceJudge::AddMissing(Failed& failed) const {
  for (const auto& [node, sweeps] : missing_) {
    v1::Finding f = report::Make(
        report::kind::kNodeUnreachable, node,
        absl::StrCat(node, ": not measured by sweep(s) ", Sweeps(sweeps), " of the burn-in"));
    (*f.mutable_evidence())["passes"] = absl::StrCat(sweeps.size(), " of ", passes_);
    failed[node]["reachable"].push_back(std::move(f));
  }
}

// Each new node's Figures (Acceptance.NodeVerdict.figures), one per rail of the passes; a node
// measured with too few partners on every rail fails its fabric check as insufficient_data.
void AcceptanceJudge::AddFigures(v1::Acceptance& out, Failed& failed) const {
  static const RailSamples kNone;
  const uint32_t need = refs_.empty() ? 1 : kMinReferencePartners;
  for (v1::Acceptance::NodeVerdict& verdict : *out.mutable_nodes()) {
    uint32_t most = 0;
    for (const std::string& rail : rails_) {
      auto it = by_rail_.find(rail);
      const RailSamples& r = it == by_rail_.end() ? kNone : it->second;
      auto with = r.with.find(verdict.node());
      auto partners = r.partners.find(verdict.node());
      v1::Acceptance::Figures* f = verdict.add_figures();
      f->set_rail(rail);
      if (with != r.with.end() && !with->second.bw_gbps.empty())
        f->set_bw_gbps(Median(with->second.bw_gbps));
      if (with != r.with.end() && !with->second.lat_us.empty())
        f->set_lat_us(Median(with->second.lat_us));
      if (!r.between.bw_gbps.empty()) f->set_reference_bw_gbps(Median(r.between.bw_gbps));
      if (!r.between.lat_us.empty()) f->set_reference_lat_us(Median(r.between.lat_us));
      f->set_partners(partners == r.partners.end() ? 0 : partners->second.size());
      most = std::max(most, f->partners());
    }
    if (passes_ == 0 || most >= need) continue;
    v1::Finding f =
        report::Make(report::kind::kInsufficientData, verdict.node(),
                     absl::StrCat(verdict.node(), ": its pairs were measured with ", most, " ",
                                  refs_.empty() ? "other new node(s)" : "reference node(s)",
                                  " on any rail over the burn-in; ", need, " needed to judge it"));
    (*f.mutable_evidence())["partners"] = absl::StrCat(most);
    failed[verdict.node()]["fabric"].push_back(std::move(f));
  }
}

v1::Acceptance AcceptanceJudge::Result(const std::string& incomplete) const {
  v1::Acceptance out;
  out.set_incomplete(incomplete);
  for (const std::string& r : references_) out.add_reference_nodes(r);
  for (const std::string& name : new_nodes_) out.add_nodes()->set_node(name);
  Failed failed;
  SortFindings(out, failed);
  AddGrowth(failed);
  AddMissing(failed);
  AddFigures(out, failed);
  for (v1::Acceptance::NodeVerdict& verdict : *out.mutable_nodes()) {
    const auto& checks = failed[verdict.node()];
    // An acceptance cut short, or of no pass, accepts nobody: what was not measured.
    verdict.set_accepted(checks.empty() && incomplete.empty() && passes_ > 0);
    for (const char* check : {"reachable", "configuration", "cabling", "fabric"}) {
      v1::Acceptance::Check* c = verdict.add_checks();
      c->set_name(check);
      auto it = checks.find(check);
      c->set_passed(it == checks.end());
      if (it != checks.end()) {
        for (const v1::Finding& f : it->second) *c->add_findings() = f;
      }
    }
  }
  out.set_exit_code(static_cast<uint32_t>(ExitCode(out, passes_)));
  return out;
}

int AcceptanceJudge::ExitCode(const v1::Acceptance& acceptance, size_t passes) {
  for (const auto& node : acceptance.nodes()) {
    for (const auto& check : node.checks()) {
      if (!check.passed()) return kExitCritical;
    }
  }
  // No pass, or one cut short: what was not measured accepts nobody.
  if (!acceptance.incomplete().empty() || passes == 0) return kExitUnknown;
  // A reference's own configuration findings are the fleet's state; its fabric findings make
  // the figures new nodes were judged against suspect, and a finding about no single node (a
  // path, a switch) is the fabric's.
  int code = kExitOk;
  for (const auto* list : {&acceptance.reference_findings(), &acceptance.other_findings()}) {
    for (const v1::Finding& f : *list) {
      if (list == &acceptance.reference_findings() && CheckOf(f.kind()) == "configuration")
        continue;
      code =
          std::max<int>(code, f.severity() == v1::SEVERITY_CRITICAL ? kExitCritical : kExitWarning);
    }
  }
  return code;
}

v1::Acceptance JudgeAcceptance(const std::vector<std::string>& new_nodes,
                               const std::vector<std::string>& references,
                               const std::vector<v1::Report>& passes,
                               const std::string& incomplete) {
  AcceptanceJudge judge(new_nodes, references);
  for (const v1::Report& pass : passes) judge.Add(pass);
  return judge.Result(incomplete);
}

}  // namespace fabricctl::controller
