#ifndef FABRICCTL_PROBES_TRACE_NAMES_H_
#define FABRICCTL_PROBES_TRACE_NAMES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "probes/common/result.h"

namespace fabricctl::probes {

// Names for the routers of traced flows, each address looked up once: the hosts file first,
// then a reverse (PTR) query with one try of one second for each name server, asked only while
// that much is left of `budget` (a host whose name servers do not answer costs the budget, not a
// probe's deadline). An address with no name keeps none; the analysis then knows the router by it.
class RouterNames {
 public:
  explicit RouterNames(absl::Duration budget = absl::Seconds(3),
                       std::string hosts_file = "/etc/hosts");
  // Fills hop.name for every answering hop of `flows`.
  void Name(std::vector<Flow>& flows);
  std::string NameOf(const std::string& address);

 private:
  std::string FromHostsFile(const std::string& address);
  std::string FromDns(const std::string& address);

  absl::Time deadline_;
  std::string hosts_file_;
  bool hosts_read_ = false;
  std::map<std::string, std::string> hosts_, cache_;
};

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_TRACE_NAMES_H_
