#include "base/config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "base/cabling_plan.h"
#include "base/net_address.h"
#include "base/profiles.h"
#include "base/status_macros.h"
#include "base/tls.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/reflection.h"
#include "yaml-cpp/yaml.h"

namespace fabricctl {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Walks a YAML tree against a message descriptor, filling the message by reflection.
class YamlReader {
 public:
  explicit YamlReader(std::string source) : source_(std::move(source)) {}

  absl::Status ReadMessage(const YAML::Node& node, const std::string& path, Message* message) {
    if (node.IsNull()) return absl::OkStatus();
    if (!node.IsMap()) return Error(node, path, "expected a mapping of keys");
    const Descriptor* descriptor = message->GetDescriptor();
    for (const auto& entry : node) {
      const YAML::Node& key = entry.first;
      if (!key.IsScalar()) return Error(key, path, "keys must be plain names");
      std::string name = key.Scalar();
      std::string key_path = path.empty() ? name : absl::StrCat(path, ".", name);
      const FieldDescriptor* field = descriptor->FindFieldByName(name);
      if (field == nullptr) {
        return Error(key, key_path,
                     absl::StrCat("unknown key (known: ", KnownKeys(descriptor), ")"));
      }
      if (auto status = ReadField(entry.second, key_path, field, message); !status.ok()) {
        return status;
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Error(const YAML::Node& node, const std::string& path, const std::string& what) {
    const YAML::Mark mark = node.Mark();
    std::string where = mark.is_null() ? source_ : absl::StrCat(source_, ":", mark.line + 1);
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", path, ": ", what));
  }

  static std::string KnownKeys(const Descriptor* descriptor) {
    std::vector<std::string> names;
    for (int i = 0; i < descriptor->field_count(); ++i)
      names.push_back(descriptor->field(i)->name());
    return absl::StrJoin(names, ", ");
  }

  absl::Status ReadField(const YAML::Node& node, const std::string& path,
                         const FieldDescriptor* field, Message* message) {
    if (field->is_map()) {
      if (node.IsNull()) return absl::OkStatus();
      if (!node.IsMap()) return Error(node, path, "expected a mapping");
      const Reflection* reflection = message->GetReflection();
      for (const auto& entry : node) {
        Message* item = reflection->AddMessage(message, field);
        const Descriptor* item_type = item->GetDescriptor();
        RETURN_IF_ERROR(SetScalar(entry.first, path, item_type->map_key(), item));
        std::string item_path = absl::StrCat(path, ".", entry.first.Scalar());
        if (auto s = SetValue(entry.second, item_path, item_type->map_value(), item); !s.ok()) {
          return s;
        }
      }
      return absl::OkStatus();
    }
    if (field->is_repeated()) {
      if (node.IsNull()) return absl::OkStatus();
      if (!node.IsSequence()) return Error(node, path, "expected a list");
      for (size_t i = 0; i < node.size(); ++i) {
        if (auto s = SetValue(node[i], absl::StrCat(path, "[", i, "]"), field, message); !s.ok()) {
          return s;
        }
      }
      return absl::OkStatus();
    }
    // `controller` takes one address or a list of them (a controller and its standby).
    if (field->full_name() == "fabricctl.v1.Config.controller" && node.IsSequence()) {
      std::vector<std::string> addresses;
      for (const auto& item : node) {
        if (!item.IsScalar()) return Error(item, path, "expected HOST:PORT");
        addresses.push_back(item.Scalar());
      }
      message->GetReflection()->SetString(message, field, absl::StrJoin(addresses, ","));
      return absl::OkStatus();
    }
    return SetValue(node, path, field, message);
  }

  // Sets a singular field, or appends to a repeated one.
  absl::Status SetValue(const YAML::Node& node, const std::string& path,
                        const FieldDescriptor* field, Message* message) {
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      return SetScalar(node, path, field, message);
    }
    const Reflection* reflection = message->GetReflection();
    Message* child = field->is_repeated() ? reflection->AddMessage(message, field)
                                          : reflection->MutableMessage(message, field);
    if (field->message_type()->full_name() == "google.protobuf.Duration") {
      return SetDuration(node, path, static_cast<google::protobuf::Duration*>(child));
    }
    return ReadMessage(node, path, child);
  }

  absl::Status SetDuration(const YAML::Node& node, const std::string& path,
                           google::protobuf::Duration* out) {
    absl::Duration d;
    // Days too ("90d"), which absl's syntax lacks.
    const std::string text = node.IsScalar() ? node.Scalar() : "";
    double days = 0;
    const bool in_days = text.size() > 1 && text.back() == 'd' &&
                         text.find_first_not_of("0123456789.") == text.size() - 1 &&
                         absl::SimpleAtod(text.substr(0, text.size() - 1), &days);
    if (in_days) d = absl::Hours(24) * days;
    if (!node.IsScalar() || (!in_days && !absl::ParseDuration(text, &d)) ||
        d < absl::ZeroDuration()) {
      return Error(node, path, "expected a duration such as 500ms, 30s, 2m or 90d");
    }
    int64_t nanos = absl::ToInt64Nanoseconds(d);
    out->set_seconds(nanos / 1000000000);
    out->set_nanos(static_cast<int32_t>(nanos % 1000000000));
    return absl::OkStatus();
  }

  absl::Status SetScalar(const YAML::Node& node, const std::string& path,
                         const FieldDescriptor* field, Message* message) {
    if (!node.IsScalar()) return Error(node, path, "expected a single value");
    const std::string& text = node.Scalar();
    const Reflection* r = message->GetReflection();
    const bool rep = field->is_repeated();
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING:
        rep ? r->AddString(message, field, text) : r->SetString(message, field, text);
        return absl::OkStatus();
      case FieldDescriptor::CPPTYPE_BOOL: {
        std::string lower = absl::AsciiStrToLower(text);
        bool value;
        if (lower == "true" || lower == "yes" || lower == "on") {
          value = true;
        } else if (lower == "false" || lower == "no" || lower == "off") {
          value = false;
        } else {
          return Error(node, path, absl::StrCat("expected true or false, got '", text, "'"));
        }
        rep ? r->AddBool(message, field, value) : r->SetBool(message, field, value);
        return absl::OkStatus();
      }
      case FieldDescriptor::CPPTYPE_DOUBLE:
      case FieldDescriptor::CPPTYPE_FLOAT: {
        double value;
        if (!absl::SimpleAtod(text, &value) || !std::isfinite(value)) {
          return Error(node, path, absl::StrCat("expected a number, got '", text, "'"));
        }
        if (field->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
          rep ? r->AddFloat(message, field, value) : r->SetFloat(message, field, value);
        } else {
          rep ? r->AddDouble(message, field, value) : r->SetDouble(message, field, value);
        }
        return absl::OkStatus();
      }
      case FieldDescriptor::CPPTYPE_INT32:
      case FieldDescriptor::CPPTYPE_INT64: {
        int64_t value;
        bool is32 = field->cpp_type() == FieldDescriptor::CPPTYPE_INT32;
        if (!absl::SimpleAtoi(text, &value) ||
            (is32 && (value < std::numeric_limits<int32_t>::min() ||
                      value > std::numeric_limits<int32_t>::max()))) {
          return Error(node, path, absl::StrCat("expected an integer, got '", text, "'"));
        }
        if (is32) {
          rep ? r->AddInt32(message, field, value) : r->SetInt32(message, field, value);
        } else {
          rep ? r->AddInt64(message, field, value) : r->SetInt64(message, field, value);
        }
        return absl::OkStatus();
      }
      case FieldDescriptor::CPPTYPE_UINT32:
      case FieldDescriptor::CPPTYPE_UINT64: {
        uint64_t value;
        bool is32 = field->cpp_type() == FieldDescriptor::CPPTYPE_UINT32;
        if (text.empty() || text[0] == '-' || !absl::SimpleAtoi(text, &value) ||
            (is32 && value > std::numeric_limits<uint32_t>::max())) {
          return Error(node, path,
                       absl::StrCat("expected a non-negative integer, got '", text, "'"));
        }
        if (is32) {
          rep ? r->AddUInt32(message, field, value) : r->SetUInt32(message, field, value);
        } else {
          rep ? r->AddUInt64(message, field, value) : r->SetUInt64(message, field, value);
        }
        return absl::OkStatus();
      }
      case FieldDescriptor::CPPTYPE_ENUM: {
        const EnumValueDescriptor* value = FindEnumValue(field, text);
        if (value == nullptr) {
          return Error(
              node, path,
              absl::StrCat("unknown value '", text, "' (expected ", EnumChoices(field), ")"));
        }
        rep ? r->AddEnum(message, field, value) : r->SetEnum(message, field, value);
        return absl::OkStatus();
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        break;
    }
    return Error(node, path, "unsupported field type");
  }

  // Enum values are written without the type prefix, in lower case: "full" for PAIRING_FULL.
  static std::string ShortEnumName(const EnumValueDescriptor* value) {
    std::string name = value->name();
    std::string prefix;
    for (char c : value->type()->name()) {
      if (std::isupper(static_cast<unsigned char>(c)) && !prefix.empty()) prefix += '_';
      prefix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    prefix += '_';
    if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
    return absl::AsciiStrToLower(name);
  }

  static const EnumValueDescriptor* FindEnumValue(const FieldDescriptor* field,
                                                  const std::string& text) {
    const auto* type = field->enum_type();
    for (int i = 1; i < type->value_count(); ++i) {  // 0 is UNSPECIFIED, never a choice
      if (ShortEnumName(type->value(i)) == absl::AsciiStrToLower(text) ||
          type->value(i)->name() == text) {
        return type->value(i);
      }
    }
    return nullptr;
  }

  static std::string EnumChoices(const FieldDescriptor* field) {
    std::vector<std::string> names;
    for (int i = 1; i < field->enum_type()->value_count(); ++i) {
      names.push_back(ShortEnumName(field->enum_type()->value(i)));
    }
    return absl::StrJoin(names, ", ");
  }

  std::string source_;
};

// Finds the YAML node of a dotted key path, for the line number of a validation error.
YAML::Node FindNode(const YAML::Node& node, const std::vector<std::string>& parts, size_t i = 0) {
  if (i == parts.size()) return node;
  if (!node.IsMap()) return YAML::Node();
  const YAML::Node child = node[parts[i]];  // const lookup: inserts nothing
  if (!child) return YAML::Node();
  return FindNode(child, parts, i + 1);
}

// The most topology levels (leaf, spine, core, ...) a configuration may name.
constexpr int kMaxTopologyLevels = 8;

template <typename Fail>
absl::Status ValidateTopology(const v1::Topology& topology, const Fail& fail) {
  if (topology.levels_size() > kMaxTopologyLevels) {
    return fail("topology.levels", absl::StrCat("at most ", kMaxTopologyLevels, " levels"));
  }
  std::set<std::string> seen;
  for (const std::string& level : topology.levels()) {
    const bool plain =
        !level.empty() && level.size() <= 64 && std::all_of(level.begin(), level.end(), [](char c) {
          return absl::ascii_isalnum(c) || c == '_' || c == '-' || c == '.';
        });
    if (!plain)
      return fail("topology.levels",
                  absl::StrCat("'", level, "' is not a label key ([A-Za-z0-9._-], 1-64)"));
    if (!seen.insert(level).second)
      return fail("topology.levels", absl::StrCat("'", level, "' is named twice"));
  }
  return absl::OkStatus();
}

// The most rails a configuration may name (a node has at most this many compute NICs).
constexpr int kMaxRails = 64;

bool PlainName(const std::string& name, size_t max_size) {
  return !name.empty() && name.size() <= max_size &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return absl::ascii_isalnum(c) || c == '_' || c == '-' || c == '.';
         });
}

// The link watch's durations: a second at least, and interval <= recovery <= window.
template <typename Fail>
absl::Status ValidateWatch(const v1::LinkWatch& w, const Fail& fail) {
  if (w.interval().seconds() == 0 && w.interval().nanos() > 0)
    return fail("watch.interval", "must be at least 1s (0s: no watch)");
  if (w.has_window() && w.window().seconds() < std::max<int64_t>(w.interval().seconds(), 1))
    return fail("watch.window", "must be at least watch.interval");
  if (w.has_recovery() && (w.recovery().seconds() < std::max<int64_t>(w.interval().seconds(), 1) ||
                           (w.has_window() && w.recovery().seconds() > w.window().seconds())))
    return fail("watch.recovery", "must be between watch.interval and watch.window");
  return absl::OkStatus();
}

template <typename Fail>
absl::Status ValidateRails(const v1::Config& config, const Fail& fail) {
  if (config.rails_size() > kMaxRails)
    return fail("rails", absl::StrCat("at most ", kMaxRails, " rails"));
  std::set<std::string> names, netdevs, devices;
  for (const v1::Rail& rail : config.rails()) {
    if (!PlainName(rail.name(), 64)) {
      return fail("rails", absl::StrCat("name '", rail.name(),
                                        "' is not a rail name ([A-Za-z0-9._-], 1-64)"));
    }
    if (!names.insert(rail.name()).second)
      return fail("rails", absl::StrCat("rail '", rail.name(), "' is named twice"));
    if (!PlainName(rail.netdev(), 15) || rail.netdev() == "." || rail.netdev() == "..") {
      return fail("rails", absl::StrCat("rail '", rail.name(), "': netdev '", rail.netdev(),
                                        "' is not an interface name ([A-Za-z0-9._-], 1-15)"));
    }
    if (!netdevs.insert(rail.netdev()).second) {
      return fail("rails", absl::StrCat("rail '", rail.name(), "': netdev ", rail.netdev(),
                                        " is another rail's"));
    }
    if (!rail.rdma_device().empty() && !PlainName(rail.rdma_device(), 64)) {
      return fail("rails", absl::StrCat("rail '", rail.name(), "': rdma_device '",
                                        rail.rdma_device(), "' is not a device name"));
    }
    if (rail.leaf_pattern().size() > 255)
      return fail("rails",
                  absl::StrCat("rail '", rail.name(), "': leaf_pattern is over 255 bytes"));
    if (!rail.rdma_device().empty() && !devices.insert(rail.rdma_device()).second) {
      return fail("rails", absl::StrCat("rail '", rail.name(), "': rdma_device ",
                                        rail.rdma_device(), " is another rail's"));
    }
  }
  return absl::OkStatus();
}

// Passes and their use: undrain, the incremental gate, the queue, known_good.
template <typename Fail>
absl::Status ValidatePasses(const v1::Config& config, const Fail& fail) {
  if (config.undrain().after().seconds() < 0 || config.undrain().after().nanos() < 0)
    return fail("undrain.after", "must not be negative");
  if (config.sweep().max_age().seconds() < 0 || config.sweep().max_age().nanos() < 0)
    return fail("sweep.max_age", "must not be negative");
  if (config.sweep().has_max_per_identity() &&
      (config.sweep().max_per_identity() < 1 || config.sweep().max_per_identity() > 4096))
    return fail("sweep.max_per_identity", "must be between 1 and 4096");
  if (config.known_good().has_min_peers() &&
      (config.known_good().min_peers() < 1 || config.known_good().min_peers() > 64))
    return fail("known_good.min_peers", "must be between 1 and 64");
  return absl::OkStatus();
}

absl::Status Validate(const v1::Config& config, const YAML::Node& root, const std::string& source) {
  auto fail = [&](const std::string& key, const std::string& what) {
    YAML::Node node = FindNode(root, absl::StrSplit(key, '.'));
    std::string where =
        (node && !node.Mark().is_null()) ? absl::StrCat(source, ":", node.Mark().line + 1) : source;
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", key, ": ", what));
  };
  const auto& e = config.expect();
  const auto& t = config.thresholds();
  if (e.link_rate_gbps() < 0 || e.link_rate_gbps() > 3200) {
    return fail("expect.link_rate_gbps", "must be between 0 and 3200 Gb/s");
  }
  if (e.tcp_bw_gbps() < 0 || e.tcp_bw_gbps() > 3200) {
    return fail("expect.tcp_bw_gbps", "must be between 0 and 3200 Gb/s");
  }
  if (e.netdev_mtu() != 0 && (e.netdev_mtu() < 576 || e.netdev_mtu() > 65536)) {
    return fail("expect.netdev_mtu", "must be between 576 and 65536");
  }
  if (e.roce_mtu() != 0 && e.roce_mtu() != 256 && e.roce_mtu() != 512 && e.roce_mtu() != 1024 &&
      e.roce_mtu() != 2048 && e.roce_mtu() != 4096) {
    return fail("expect.roce_mtu", "must be 256, 512, 1024, 2048 or 4096");
  }
  if (e.has_pfc_priority() && e.pfc_priority() > 7) {
    return fail("expect.pfc_priority", "must be a priority from 0 to 7");
  }
  if (t.min_bw_efficiency() <= 0 || t.min_bw_efficiency() > 1) {
    return fail("thresholds.min_bw_efficiency", "must be in (0, 1]");
  }
  if (t.relative_bw() <= 0 || t.relative_bw() > 1) {
    return fail("thresholds.relative_bw", "must be in (0, 1]");
  }
  if (t.relative_lat() < 1) return fail("thresholds.relative_lat", "must be at least 1");
  if (t.max_robust_z() <= 0) return fail("thresholds.max_robust_z", "must be positive");
  if (t.min_effect() < 0 || t.min_effect() >= 1)
    return fail("thresholds.min_effect", "must be in [0, 1)");
  if (t.min_loss_rate() < 0 || t.min_loss_rate() >= 1)
    return fail("thresholds.min_loss_rate", "must be in [0, 1)");
  if (t.min_node_pairs() < 1 || t.min_node_pairs() > 1000) {
    return fail("thresholds.min_node_pairs", "must be between 1 and 1000");
  }
  if (t.relative_allreduce_busbw() <= 0 || t.relative_allreduce_busbw() > 1) {
    return fail("thresholds.relative_allreduce_busbw", "must be in (0, 1]");
  }
  const double share = config.breaker().max_share();
  if (config.breaker().has_max_share() && !(share > 0 && share <= 1))
    return fail("breaker.max_share", "must be in (0, 1] (1: off)");
  RETURN_IF_ERROR(ValidateWatch(config.watch(), fail));
  if (config.topology().ib_cables_size() > static_cast<int>(kMaxCables))
    return fail("topology.ib_cables", absl::StrCat("more than ", kMaxCables, " host ports"));
  RETURN_IF_ERROR(ValidatePasses(config, fail));
  if (const std::string& n = config.tls().node_names(); !n.empty() && n != "cn" && n != "any")
    return fail("tls.node_names", "must be cn or any");
  const double budget = config.sweep().retest_budget();
  if (!(budget >= 0 && budget <= 10))
    return fail("sweep.retest_budget", "must be between 0 and 10");
  const auto& p = config.probes();
  if (p.iterations() != 0 && p.has_duration()) {
    return fail("probes.iterations", "iterations and duration exclude each other");
  }
  if (p.gid_index() < -1 || p.gid_index() > 255) {
    return fail("probes.gid_index", "must be -1 (automatic) or 0-255");
  }
  const auto& tls = config.tls();
  int tls_given = !tls.cert().empty() + !tls.key().empty() + !tls.ca().empty();
  if (tls_given != 0 && tls_given != 3) {
    return fail("tls", "cert, key and ca go together: give all three, or none");
  }
  if (!config.controller().empty()) {
    if (auto where = ParseHostPorts(config.controller(), "controller"); !where.ok()) {
      return fail("controller", std::string(where.status().message()));
    }
  }
  RETURN_IF_ERROR(ValidateTopology(config.topology(), fail));
  RETURN_IF_ERROR(ValidateRails(config, fail));
  if (auto s = ValidateProfiles(config); !s.ok()) {
    YAML::Node node = FindNode(root, {"profiles"});
    return absl::InvalidArgumentError(absl::StrCat(
        source, node && !node.Mark().is_null() ? absl::StrCat(":", node.Mark().line + 1) : "", ": ",
        s.message()));
  }
  return absl::OkStatus();
}

void ApplyDefaults(v1::Config* c) {
  // LLDP alone names the leaf; with a topology file the file's levels apply (LoadTopologyFiles).
  const v1::Topology& topology = c->topology();
  if (topology.lldp() && topology.levels().empty() && topology.slurm().empty() &&
      topology.ibnetdiscover().empty()) {
    c->mutable_topology()->add_levels("leaf");
  }
  auto* t = c->mutable_thresholds();
  if (!t->has_min_bw_efficiency()) t->set_min_bw_efficiency(0.90);
  if (!t->has_relative_bw()) t->set_relative_bw(0.6);
  if (!t->has_relative_lat()) t->set_relative_lat(2.1);
  if (!t->has_max_robust_z()) t->set_max_robust_z(3.5);
  if (!t->has_min_node_pairs()) t->set_min_node_pairs(2);
  if (!t->has_min_effect()) t->set_min_effect(0.2);
  if (!t->has_relative_allreduce_busbw()) t->set_relative_allreduce_busbw(0.85);
  if (!t->has_min_loss_rate()) t->set_min_loss_rate(0.001);
  auto* p = c->mutable_probes();
  if (p->sizes().empty()) p->set_sizes("64K:1M");
  // Time-bounded by default: a link 100 times slower than its peers still finishes on time.
  if (p->iterations() == 0 && !p->has_duration()) p->mutable_duration()->set_seconds(1);
  if (p->tcp_streams() == 0) p->set_tcp_streams(1);
  if (!p->has_gid_index()) p->set_gid_index(-1);
  auto* s = c->mutable_sweep();
  if (s->pairing() == v1::PAIRING_UNSPECIFIED) s->set_pairing(v1::PAIRING_FULL);
  if (s->probes().empty()) {
    s->add_probes("tcp_bw");
    s->add_probes("tcp_lat");
  }
  if (s->sample_rounds() == 0) s->set_sample_rounds(3);
  if (!s->has_pair_timeout()) s->mutable_pair_timeout()->set_seconds(60);
  if (!s->has_retests()) s->set_retests(2);  // 0 is a value: no re-tests
  if (!s->has_both_directions()) s->set_both_directions(true);
  if (!s->has_retest_budget()) s->set_retest_budget(0.1);
  if (!s->has_max_per_identity()) s->set_max_per_identity(64);
  if (!c->history().has_keep()) c->mutable_history()->mutable_keep()->set_seconds(90 * 24 * 3600);
  if (!c->breaker().has_max_share()) c->mutable_breaker()->set_max_share(0.1);
  if (!c->breaker().has_min_nodes()) c->mutable_breaker()->set_min_nodes(3);
  auto* w = c->mutable_watch();
  if (!w->has_interval()) w->mutable_interval()->set_seconds(10);
  if (!w->has_window()) w->mutable_window()->set_seconds(24 * 3600);
  if (!w->has_recovery()) w->mutable_recovery()->set_seconds(3600);
  if (w->file().empty()) w->set_file("/run/fabric-agent/link-watch");
  if (!c->undrain().has_after()) c->mutable_undrain()->mutable_after()->set_seconds(30 * 60);
  if (!c->known_good().has_min_peers()) c->mutable_known_good()->set_min_peers(2);
  auto* tls = c->mutable_tls();
  if (tls->controller_identity().empty()) tls->set_controller_identity("fabric-controller");
  if (tls->node_names().empty()) tls->set_node_names("cn");
  if (tls->admin_identities().empty()) tls->add_admin_identities("fabricctl");
  if (tls->operator_identities().empty()) {
    tls->add_operator_identities("fabricctl");
    tls->add_operator_identities("fabric-prolog");
  }
}

}  // namespace

absl::Status YamlToMessage(const std::string& yaml, const std::string& source, Message* message) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::ParserException& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", e.mark.line + 1, ": YAML syntax error: ", e.msg));
  }
  return YamlReader(source).ReadMessage(root, "", message);
}

v1::Config DefaultConfig() {
  v1::Config config;
  ApplyDefaults(&config);
  return config;
}

absl::StatusOr<v1::Config> ParseConfig(const std::string& yaml, const std::string& source) {
  v1::Config config;
  RETURN_IF_ERROR(YamlToMessage(yaml, source, &config));
  ApplyDefaults(&config);
  YAML::Node root = YAML::Load(yaml);  // parsed once already: cannot throw here
  RETURN_IF_ERROR(Validate(config, root, source));
  return config;
}

absl::StatusOr<v1::Config> LoadConfig(const std::string& path) {
  auto text = ReadFileToString(path, "--config");
  if (!text.ok()) return text.status();
  return ParseConfig(*text, path);
}

}  // namespace fabricctl
