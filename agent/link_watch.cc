#include "agent/link_watch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "report/findings.h"

namespace fabricctl::agent {
namespace {

// A counter of a link: where it is below the link's directory, and whether a rise is the link
// going down (a flap) or errors on it.
struct Counter {
  const char* path;
  bool flap;
};

// carrier_down_count (Linux 4.16) counts the carrier's losses; carrier_changes counts losses
// and returns alike, so it is read only where the first is missing, halved.
// Of the netdev's errors, the frames that arrived damaged (rx_errors would count them again, and
// with them what the host missed) and what it could not send.
constexpr Counter kNetdevCounters[] = {{"carrier_down_count", true},
                                       {"carrier_changes", true},
                                       {"statistics/rx_crc_errors", false},
                                       {"statistics/tx_errors", false}};
// The PMA counters of an RDMA port (sysfs-class-infiniband): link_downed counts the port's
// falls from LinkUp; the others, errors the link corrected or could not.
constexpr Counter kPortCounters[] = {{"counters/link_downed", true},
                                     {"counters/symbol_error", false},
                                     {"counters/link_error_recovery", false},
                                     {"counters/port_rcv_errors", false},
                                     {"counters/local_link_integrity_errors", false},
                                     {"counters/excessive_buffer_overrun_errors", false}};

std::string Leaf(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// The netdev's FEC blocks, as "<netdev> fec_corrected" and "<netdev> fec_uncorrected" where its
// driver counts them. A netdev that the kernel or driver has none for (Unimplemented) joins
// `no_fec`: that does not change while the driver is loaded, and asking again would cost a
// netlink round trip at every sample. Other failures (no reply in time, a netdev gone for a
// moment while its driver reloads) are tried again at the next sample.
void ReadFec(const FecSource& fec, const std::string& netdev,
             std::map<std::string, uint64_t>* values, std::set<std::string>* no_fec) {
  const absl::StatusOr<probes::FecCounts> counts = fec(netdev);
  if (absl::IsUnimplemented(counts.status())) {
    no_fec->insert(netdev);
    return;
  }
  if (!counts.ok()) return;
  if (counts->corrected) (*values)[netdev + " fec_corrected"] = *counts->corrected;
  if (counts->uncorrected) (*values)[netdev + " fec_uncorrected"] = *counts->uncorrected;
}

std::string Clock(absl::Time t) { return absl::FormatTime("%H:%M:%S", t, absl::UTCTimeZone()); }

// What the ring holds about one link, for the verdict.
struct LinkSummary {
  uint64_t flaps = 0;                             // in the window
  std::vector<absl::Time> recent_flaps;           // within recovery
  std::map<std::string, uint64_t> errors;         // counter -> rise in the window
  std::map<std::string, uint64_t> recent_errors;  // counter -> rise within recovery
};

v1::Finding Flapping(const std::string& node, const std::string& link, const LinkSummary& s,
                     absl::Duration recovery, absl::Duration span) {
  std::vector<std::string> times;
  for (absl::Time t : s.recent_flaps) times.push_back(Clock(t));
  if (times.size() > 10) times.erase(times.begin(), times.end() - 10);  // the latest ten
  const size_t recent = s.recent_flaps.size();
  v1::Finding f =
      report::Make(report::kind::kLinkFlapping, node,
                   absl::StrCat(node, ": ", link, " went down ", recent,
                                recent == 1 ? " time" : " times", " in the last ",
                                absl::FormatDuration(recovery), " (at ", absl::StrJoin(times, ", "),
                                " UTC); ", s.flaps, " in ", absl::FormatDuration(span)),
                   recent >= 2 ? report::Level::kDefault : report::Level::kAlternate);
  f.set_device(link);
  auto& e = *f.mutable_evidence();
  e["link"] = link;
  e["flaps"] = absl::StrCat(recent);
  e["flaps_in_window"] = absl::StrCat(s.flaps);
  e["times"] = absl::StrJoin(times, " ");
  e["recovery"] = absl::FormatDuration(recovery);
  return f;
}

v1::Finding Errors(const std::string& node, const std::string& link, const LinkSummary& s,
                   absl::Duration recovery, absl::Duration judged) {
  std::vector<std::string> parts;
  uint64_t total = 0;
  for (const auto& [counter, rise] : s.recent_errors) {
    parts.push_back(absl::StrCat(counter, " +", rise));
    total += rise;
  }
  const double hours = std::max(absl::ToDoubleHours(judged), 1.0 / 3600);
  v1::Finding f =
      report::Make(report::kind::kLinkErrors, node,
                   absl::StrCat(node, ": ", link, " counted ", total, " errors in the last ",
                                absl::FormatDuration(judged), " (", absl::StrJoin(parts, ", "),
                                "; ", static_cast<uint64_t>(total / hours + 0.5), " an hour)"));
  f.set_device(link);
  auto& e = *f.mutable_evidence();
  e["link"] = link;
  e["counters"] = absl::StrJoin(parts, ", ");
  e["errors"] = absl::StrCat(total);
  e["window"] = absl::FormatDuration(judged);
  e["recovery"] = absl::FormatDuration(recovery);
  return f;
}

}  // namespace

LinkWatch::LinkWatch(const probes::SysfsRoot* sysfs, WatchedLinks links, LinkWatchSettings settings,
                     std::string node)
    : sysfs_(sysfs),
      settings_(std::move(settings)),
      node_(std::move(node)),
      links_(std::move(links)) {}

namespace {

// `links` with those of `found` it lacks, in their order after its own.
void Join(WatchedLinks& links, const WatchedLinks& found) {
  for (const std::string& itf : found.interfaces) {
    if (std::find(links.interfaces.begin(), links.interfaces.end(), itf) == links.interfaces.end())
      links.interfaces.push_back(itf);
  }
  for (const auto& port : found.rdma_ports) {
    if (std::find(links.rdma_ports.begin(), links.rdma_ports.end(), port) == links.rdma_ports.end())
      links.rdma_ports.push_back(port);
  }
}

}  // namespace

std::map<std::string, uint64_t> LinkWatch::Read(const WatchedLinks& links,
                                                std::set<std::string>* no_fec) const {
  std::map<std::string, uint64_t> values;
  auto read = [&](const std::string& link, const std::string& dir, const Counter& c) {
    auto text = sysfs_->ReadTrimmed(absl::StrCat(dir, "/", c.path));
    uint64_t v = 0;
    if (text.ok() && absl::SimpleAtoi(*text, &v)) values[absl::StrCat(link, " ", Leaf(c.path))] = v;
  };
  for (const std::string& itf : links.interfaces) {
    if (IsAggregate(*sysfs_, itf)) continue;
    for (const Counter& c : kNetdevCounters) read(itf, "/sys/class/net/" + itf, c);
    if (settings_.fec && no_fec->count(itf) == 0) ReadFec(settings_.fec, itf, &values, no_fec);
  }
  for (const auto& [device, port] : links.rdma_ports) {
    const std::string dir = absl::StrCat("/sys/class/infiniband/", device, "/ports/", port);
    for (const Counter& c : kPortCounters) read(absl::StrCat(device, ":", port), dir, c);
  }
  return values;
}

void LinkWatch::Sample(absl::Time now) {
  std::set<std::string> no_fec;
  WatchedLinks links;
  bool discover = false;
  {
    MutexLock lock(&mu_);
    no_fec = no_fec_;
    links = links_;
    discover = settings_.discover && settings_.discover_every > 0 && samples_ > 0 &&
               samples_ % settings_.discover_every == 0;
  }
  // Found and read without the lock: a verdict asked meanwhile never waits on sysfs or netlink.
  if (discover) Join(links, settings_.discover());
  const std::map<std::string, uint64_t> values = Read(links, &no_fec);
  MutexLock lock(&mu_);
  links_ = std::move(links);
  no_fec_.insert(no_fec.begin(), no_fec.end());
  if (samples_ == 0) first_ = now;
  ++samples_;
  latest_ = now;
  for (const auto& [key, value] : values) {
    auto it = last_.find(key);
    // A counter that went back (the NIC or its driver reset), or a link that vanished and
    // came back: not a rise, but what ran there is not what a sweep measured.
    if ((it != last_.end() && value < it->second) || (it == last_.end() && seen_.count(key) > 0)) {
      ++resets_;
    }
    seen_.insert(key);
    // The first reading is the baseline; a smaller one is a reset (a driver reload), not a rise.
    if (it != last_.end() && value > it->second) {
      const size_t space = key.find(' ');
      LinkEvent event{now, key.substr(0, space), key.substr(space + 1), value - it->second};
      event.flap = event.counter == "carrier_down_count" || event.counter == "link_downed";
      if (event.counter == "fec_corrected") {
        AddCorrected(event.link, now, event.increase);  // shown, not judged
        continue;
      }
      if (event.counter == "carrier_changes") {
        // Only where the kernel has no carrier_down_count: a loss and a return are two changes,
        // which two samples may see apart; the odd one waits for its pair.
        if (values.count(event.link + " carrier_down_count")) continue;
        uint64_t& odd = odd_changes_[event.link];
        const uint64_t changes = event.increase + odd;
        odd = changes % 2;
        event.increase = changes / 2;
        event.flap = true;
        if (event.increase == 0) continue;
      }
      (event.flap ? flaps_ : errors_).push_back(std::move(event));
    }
  }
  last_ = values;
  Trim(now);
}

void LinkWatch::AddCorrected(const std::string& link, absl::Time now, uint64_t blocks) {
  // A bucket a hundredth of the window wide: at most about a hundred per link, whatever the
  // interval, and the window's edge is off by a hundredth of it at most.
  auto& buckets = corrected_[link];
  if (!buckets.empty() && now - buckets.back().first < settings_.window / 100) {
    buckets.back().second += blocks;
  } else {
    buckets.emplace_back(now, blocks);
  }
}

void LinkWatch::Trim(absl::Time now) {
  // Falls and errors bounded apart: a link counting errors at every sample never pushes out
  // the falls that decide link_flapping.
  for (std::deque<LinkEvent>* events : {&flaps_, &errors_}) {
    while (!events->empty() && (events->front().at < now - settings_.window ||
                                events->size() > settings_.max_events / 2)) {
      if (events->front().at >= now - settings_.window) ++dropped_;
      events->pop_front();
    }
  }
  for (auto it = corrected_.begin(); it != corrected_.end();) {
    auto& buckets = it->second;
    while (!buckets.empty() && buckets.front().first < now - settings_.window) buckets.pop_front();
    it = buckets.empty() ? corrected_.erase(it) : std::next(it);
  }
}

std::vector<LinkEvent> LinkWatch::Events() const {
  MutexLock lock(&mu_);
  return Merged();
}

std::vector<LinkEvent> LinkWatch::Merged() const {
  std::vector<LinkEvent> all(flaps_.begin(), flaps_.end());
  all.insert(all.end(), errors_.begin(), errors_.end());
  std::stable_sort(all.begin(), all.end(),
                   [](const LinkEvent& a, const LinkEvent& b) { return a.at < b.at; });
  return all;
}

WatchedLinks LinkWatch::Links() const {
  MutexLock lock(&mu_);
  return links_;
}

uint64_t LinkWatch::Resets() const {
  MutexLock lock(&mu_);
  return resets_;
}

v1::AuditResult LinkWatch::Result(absl::Time now) const {
  v1::AuditResult r;
  r.set_audit("link_watch");
  MutexLock lock(&mu_);
  if (samples_ < 2) {
    r.set_outcome(v1::AUDIT_SKIPPED);
    r.set_reason(samples_ == 0 ? "the link watch has not sampled yet"
                               : "the link watch has one sample (its baseline) so far");
    return r;
  }
  r.set_outcome(v1::AUDIT_RAN);
  const absl::Duration span = std::min(settings_.window, latest_ - first_);
  const absl::Time recent = now - settings_.recovery;
  std::map<std::string, LinkSummary> links;
  for (const LinkEvent& e : Merged()) {
    if (e.at < now - settings_.window) continue;
    LinkSummary& s = links[e.link];
    if (e.flap) {
      s.flaps += e.increase;
      for (uint64_t i = 0; i < e.increase && i < 100 && e.at >= recent; ++i)
        s.recent_flaps.push_back(e.at);
    } else {
      s.errors[e.counter] += e.increase;
      if (e.at >= recent) s.recent_errors[e.counter] += e.increase;
    }
  }
  auto& seen = *r.mutable_observed();
  seen["links"] =
      absl::StrCat(absl::StrJoin(links_.interfaces, " "), links_.interfaces.empty() ? "" : " ",
                   absl::StrJoin(links_.rdma_ports, " ", [](std::string* out, const auto& p) {
                     absl::StrAppend(out, p.first, ":", p.second);
                   }));
  seen["since"] = absl::FormatTime(absl::RFC3339_sec, first_, absl::UTCTimeZone());
  seen["last_sample"] = absl::FormatTime(absl::RFC3339_sec, latest_, absl::UTCTimeZone());
  seen["window"] = absl::FormatDuration(span);
  seen["interval"] = absl::FormatDuration(settings_.interval);  // how fresh the verdict must be
  if (dropped_ > 0) seen["events_dropped"] = absl::StrCat(dropped_);
  const absl::Duration judged = std::min(settings_.recovery, latest_ - first_);
  for (const auto& [link, s] : links) {
    if (s.flaps > 0) seen[link + " flaps"] = absl::StrCat(s.flaps);
    for (const auto& [counter, rise] : s.errors)
      seen[link + " " + counter] = absl::StrCat("+", rise);
    if (!s.recent_flaps.empty()) {
      *r.add_findings() = Flapping(node_, link, s, settings_.recovery, span);
    }
    uint64_t recent_errors = 0;
    for (const auto& [counter, rise] : s.recent_errors) recent_errors += rise;
    if (recent_errors > settings_.max_errors) {
      *r.add_findings() = Errors(node_, link, s, settings_.recovery, judged);
    }
  }
  for (const auto& [link, buckets] : corrected_) {
    uint64_t blocks = 0;
    for (const auto& [start, rise] : buckets) {
      if (start >= now - settings_.window) blocks += rise;
    }
    if (blocks > 0) seen[link + " fec_corrected"] = absl::StrCat("+", blocks);
  }
  return r;
}

absl::Status WriteWatchVerdict(const std::string& path, const v1::AuditResult& verdict) {
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(verdict, &text)) {
    return absl::InternalError("cannot print the link watch's verdict");
  }
  const std::filesystem::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  // A name of its own beside the file: two agents on one host (a lab, a test) never interleave.
  std::string tmp = path + ".XXXXXX";
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  auto fail = [&](const char* what) {
    const std::string error = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    return absl::UnavailableError(absl::StrCat("watch.file: ", what, " ", tmp, ": ", error));
  };
  if (fd < 0) return fail("cannot create");
  ::fchmod(fd, 0644);  // whatever the umask: the check that reads it may run as another user
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("cannot write");
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return absl::UnavailableError(absl::StrCat("watch.file: cannot write ", tmp));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string error = std::strerror(errno);
    ::unlink(tmp.c_str());
    return absl::UnavailableError(absl::StrCat("watch.file: cannot rename to ", path, ": ", error));
  }
  return absl::OkStatus();
}

}  // namespace fabricctl::agent
