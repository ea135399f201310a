#ifndef FABRICCTL_BASE_CONFIG_H_
#define FABRICCTL_BASE_CONFIG_H_

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "proto/config.pb.h"

namespace fabricctl {

// Loads the YAML configuration file at `path` (schema: fabricctl.v1.Config, see
// configs/README.md), applies defaults to fields left unset, and validates values.
// Errors name the file, the line and the key: "cluster.yaml:7: thresholds.relative_bw: ...".
absl::StatusOr<v1::Config> LoadConfig(const std::string& path);

// Reads the topology files the configuration names (topology.slurm, topology.ibnetdiscover;
// relative to `config_path`'s directory) into its nodes: labels at topology.levels (leaf, and
// spine for a Slurm tree, where none are named); nodes: entries win over them. Only the
// controller places nodes, so only it reads them (an agent's node need not have the files).
// The cabling plan (topology.cabling) is read into topology.cables (LoadCablingPlan).
absl::Status LoadTopologyFiles(v1::Config* config, const std::string& config_path);

// As LoadConfig, from text; `source` names it in errors.
absl::StatusOr<v1::Config> ParseConfig(const std::string& yaml, const std::string& source);

// The configuration used when no file is given: the defaults of DefaultConfig() documented in
// configs/README.md.
v1::Config DefaultConfig();

// Fills `message` from YAML text by the message's own schema (field names as keys). Unknown
// keys, wrong types and out-of-range numbers are errors naming source, line and key path.
absl::Status YamlToMessage(const std::string& yaml, const std::string& source,
                           google::protobuf::Message* message);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_CONFIG_H_
