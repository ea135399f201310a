#ifndef FABRICCTL_BASE_PROFILES_H_
#define FABRICCTL_BASE_PROFILES_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "proto/config.pb.h"

namespace fabricctl {

// What a node is held to: the expect of the first profile that matches it (its name in the
// profile's hostlist, its labels carrying the profile's), else the configuration's expect.
// `labels` are the node's own (an agent's --label); the configuration's nodes: entry for the
// node adds to them. `profile` (optional) receives the matching profile's name, or "".
const v1::Expectations& ExpectationsFor(const v1::Config& config, const std::string& node,
                                        const std::map<std::string, std::string>& labels,
                                        std::string* profile = nullptr);

// A node's labels: its own (an agent's --label) and, for keys it does not carry, the
// configuration's nodes: entry for it.
std::map<std::string, std::string> NodeLabelsFor(const v1::Config& config, const std::string& node,
                                                 const std::map<std::string, std::string>& labels);

// Each profile has a name, names nodes or labels, and its hostlist expands; errors name
// `profiles[i]`.
absl::Status ValidateProfiles(const v1::Config& config);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_PROFILES_H_
