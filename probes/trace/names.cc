#include "probes/trace/names.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netinet/in.h>
#include <resolv.h>

#include <algorithm>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace fabricctl::probes {
namespace {

constexpr size_t kMaxHostsBytes = 1 << 20;  // the hosts file read, at most
constexpr size_t kMaxNames = 4096;          // addresses remembered

}  // namespace

RouterNames::RouterNames(absl::Duration budget, std::string hosts_file)
    : deadline_(absl::Now() + budget), hosts_file_(std::move(hosts_file)) {}

void RouterNames::Name(std::vector<Flow>& flows) {
  for (Flow& f : flows) {
    for (Hop& h : f.hops) {
      if (!h.address.empty()) h.name = NameOf(h.address);
    }
  }
}

std::string RouterNames::NameOf(const std::string& address) {
  if (auto it = cache_.find(address); it != cache_.end()) return it->second;
  std::string name = FromHostsFile(address);
  if (name.empty()) name = FromDns(address);
  if (cache_.size() < kMaxNames) cache_[address] = name;
  return name;
}

std::string RouterNames::FromHostsFile(const std::string& address) {
  if (!hosts_read_) {
    hosts_read_ = true;
    std::ifstream in(hosts_file_);
    std::string line;
    size_t read = 0;
    while (read < kMaxHostsBytes && std::getline(in, line)) {
      read += line.size() + 1;
      line = line.substr(0, line.find('#'));
      std::vector<std::string> fields =
          absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
      if (fields.size() >= 2) hosts_.emplace(fields[0], fields[1]);  // the first line wins
    }
  }
  const auto it = hosts_.find(address);
  return it == hosts_.end() ? "" : it->second;
}

std::string RouterNames::FromDns(const std::string& address) {
  in_addr a{};
  if (::inet_pton(AF_INET, address.c_str(), &a) != 1) return "";
  const auto* b = reinterpret_cast<const unsigned char*>(&a.s_addr);
  const std::string query = absl::StrCat(b[3], ".", b[2], ".", b[1], ".", b[0], ".in-addr.arpa");
  struct __res_state state {};
  if (::res_ninit(&state) != 0) return "";
  state.retrans = 1;  // seconds a try
  state.retry = 1;    // one try a server
  std::string name;
  // A query may take a second for each name server: only where that is left of the budget.
  if (absl::Now() + absl::Seconds(std::max(1, state.nscount)) > deadline_) {
    ::res_nclose(&state);
    return name;
  }
  // res_nquery returns the answer's whole length even where it did not fit: at most the buffer.
  std::vector<unsigned char> answer(NS_MAXMSG);
  const int length = std::min<int>(::res_nquery(&state, query.c_str(), ns_c_in, ns_t_ptr,
                                                answer.data(), static_cast<int>(answer.size())),
                                   static_cast<int>(answer.size()));
  ns_msg message;
  if (length > 0 && ::ns_initparse(answer.data(), length, &message) == 0) {
    for (int i = 0; i < ns_msg_count(message, ns_s_an) && name.empty(); ++i) {
      ns_rr record;
      char text[NS_MAXDNAME];
      if (::ns_parserr(&message, ns_s_an, i, &record) == 0 && ns_rr_type(record) == ns_t_ptr &&
          ::dn_expand(ns_msg_base(message), ns_msg_end(message), ns_rr_rdata(record), text,
                      sizeof(text)) > 0) {
        name = text;
      }
    }
  }
  ::res_nclose(&state);
  return name;
}

}  // namespace fabricctl::probes
