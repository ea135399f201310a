// The configuration's defaults have one home, base/config.cc's ApplyDefaults (and, for the
// probe caps, probes/common/params.h's ProbeLimits, which every binary applies). This test holds
// what documents them to it: each field's "Default: VALUE." in proto/config.proto, and the
// "Keys and defaults" table of configs/README.md, which must also name every key.

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "base/config.h"
#include "catch2/catch.hpp"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/util/time_util.h"
#include "probes/common/params.h"
#include "tests/testing/testing.h"

namespace fabricctl {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// The file whole; the test fails when it is missing or empty.
std::string ReadFile(const std::string& path) {
  std::string text = testing::ReadFile(path);
  REQUIRE(!text.empty());
  return text;
}

// The defaults every binary starts from: the configuration's, with the probe caps filled in.
v1::Config Defaults() {
  v1::Config config = DefaultConfig();
  const probes::ProbeLimits caps;
  v1::ProbeLimits* limits = config.mutable_probes()->mutable_limits();
  limits->set_max_message_bytes(caps.max_message_bytes);
  limits->set_max_total_bytes(caps.max_total_bytes);
  limits->set_max_memory_bytes(caps.max_memory_bytes);
  *limits->mutable_max_duration() = google::protobuf::util::TimeUtil::NanosecondsToDuration(
      absl::ToInt64Nanoseconds(caps.max_duration));
  return config;
}

std::string SpellBytes(uint64_t bytes) {
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  std::string spelled = absl::StrCat(bytes);
  for (int i = 0; bytes >= 1024 && bytes % 1024 == 0 && i < 4; ++i) {
    bytes /= 1024;
    spelled = absl::StrCat(bytes, " ", kUnits[i]);
  }
  return spelled;
}

// A field's value as the YAML (and its documentation) spells it.
std::string Spell(const Message& m, const FieldDescriptor* f) {
  const Reflection* r = m.GetReflection();
  if (f->is_repeated()) {
    std::vector<std::string> items;
    for (int i = 0; i < r->FieldSize(m, f); ++i) items.push_back(r->GetRepeatedString(m, f, i));
    return absl::StrJoin(items, ", ");
  }
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return absl::StrCat(r->GetDouble(m, f));
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(r->GetInt32(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(r->GetUInt32(m, f));
    case FieldDescriptor::CPPTYPE_UINT64: {
      const uint64_t v = r->GetUInt64(m, f);
      return absl::EndsWith(f->name(), "_bytes") ? SpellBytes(v) : absl::StrCat(v);
    }
    case FieldDescriptor::CPPTYPE_BOOL:
      return r->GetBool(m, f) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_STRING:
      return r->GetString(m, f);
    case FieldDescriptor::CPPTYPE_ENUM: {
      const std::string name = r->GetEnum(m, f)->name();
      return absl::AsciiStrToLower(name.substr(name.find('_') + 1));
    }
    case FieldDescriptor::CPPTYPE_MESSAGE: {
      const auto& d = static_cast<const google::protobuf::Duration&>(r->GetMessage(m, f));
      constexpr int64_t kDay = 24 * 3600;
      if (d.nanos() == 0 && d.seconds() > 0 && d.seconds() % kDay == 0)
        return absl::StrCat(d.seconds() / kDay, "d");
      return absl::FormatDuration(absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos()));
    }
    default:
      FAIL("no spelling for " << f->full_name());
      return "";
  }
}

bool IsLeaf(const FieldDescriptor* f) {
  return f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || f->is_map() ||
         f->message_type()->full_name() == "google.protobuf.Duration";
}

// Every key of the configuration ("thresholds.relative_bw", "rails[].netdev") with its field, and
// the spelled default of each that has one.
struct Key {
  const FieldDescriptor* field;
  std::string default_value;  // empty: none
};

void CollectKeys(const Message* m, const Descriptor* d, const std::string& prefix,
                 std::map<std::string, Key>* keys) {
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string key = prefix + f->name();
    if (IsLeaf(f)) {
      const bool set = m != nullptr && (f->is_repeated() ? m->GetReflection()->FieldSize(*m, f) > 0
                                                         : m->GetReflection()->HasField(*m, f));
      (*keys)[key] = Key{f, set ? Spell(*m, f) : ""};
    } else if (f->is_repeated()) {
      CollectKeys(nullptr, f->message_type(), key + "[].", keys);
    } else {
      const Message* sub = m != nullptr ? &m->GetReflection()->GetMessage(*m, f) : nullptr;
      CollectKeys(sub, f->message_type(), key + ".", keys);
    }
  }
}

std::map<std::string, Key> Keys() {
  const v1::Config defaults = Defaults();
  std::map<std::string, Key> keys;
  CollectKeys(&defaults, v1::Config::descriptor(), "", &keys);
  return keys;
}

// "Message.field" -> the value after "Default: " in the field's comment in proto/config.proto.
std::map<std::string, std::string> ProtoDefaults() {
  std::map<std::string, std::string> defaults;
  std::istringstream lines(ReadFile("proto/config.proto"));
  static const std::regex kMessage(R"(^message (\w+) \{)");
  static const std::regex kField(R"(^  (optional |repeated )?[\w.<>, ]+ (\w+) = \d+;)");
  std::string line, message, comment;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kMessage)) {
      message = m[1];
    } else if (line.rfind("  //", 0) == 0) {
      comment += line.substr(4) + "\n";
      continue;
    } else if (std::regex_search(line, m, kField) && !message.empty()) {
      const size_t at = comment.find("Default: ");
      if (at != std::string::npos) {
        std::string value = comment.substr(at + 9);
        value = value.substr(0, value.find_first_of("\n("));
        value = std::string(absl::StripAsciiWhitespace(value));
        if (absl::EndsWith(value, ".")) value.pop_back();
        defaults[message + "." + m[2].str()] = value;
      }
    }
    comment.clear();
  }
  return defaults;
}

// configs/README.md's "Keys and defaults" table: key -> the default cell, backticks removed.
std::map<std::string, std::string> ReadmeDefaults() {
  std::map<std::string, std::string> rows;
  std::istringstream lines(ReadFile("configs/README.md"));
  std::string line;
  bool in_table = false;
  while (std::getline(lines, line)) {
    if (line.rfind("| key | default | meaning |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table || line.rfind("|---", 0) == 0) continue;
    if (line.empty() || line[0] != '|') break;
    std::vector<std::string> cells = absl::StrSplit(line, " | ");
    REQUIRE(cells.size() >= 3);
    std::string value = absl::StrReplaceAll(cells[1], {{"`", ""}});
    for (absl::string_view key : absl::StrSplit(cells[0].substr(1), ", ")) {
      key = absl::StripAsciiWhitespace(key);
      rows[std::string(absl::StripSuffix(absl::StripPrefix(key, "`"), "`"))] = value;
    }
  }
  return rows;
}

bool HasKeyUnder(const std::map<std::string, Key>& keys, const std::string& prefix) {
  auto it = keys.lower_bound(prefix);
  return it != keys.end() && absl::StartsWith(it->first, prefix);
}

// The README's spelling of a default: the cell up to a parenthesis.
std::string Leading(const std::string& cell) {
  return std::string(absl::StripAsciiWhitespace(cell.substr(0, cell.find(" ("))));
}

TEST_CASE("each default is stated in proto/config.proto as ApplyDefaults sets it") {
  const std::map<std::string, std::string> stated = ProtoDefaults();
  std::set<std::string> checked;
  for (const auto& [key, k] : Keys()) {
    const std::string field = k.field->containing_type()->name() + "." + k.field->name();
    INFO(key << " (" << field << ")");
    auto it = stated.find(field);
    if (k.default_value.empty()) {
      CHECK(it == stated.end());  // a comment must not promise a default nothing sets
      continue;
    }
    REQUIRE(it != stated.end());
    CHECK(it->second == k.default_value);
    checked.insert(field);
  }
  CHECK(checked.size() == stated.size());
}

TEST_CASE("configs/README.md names every key and states each default as the code sets it") {
  const std::map<std::string, std::string> readme = ReadmeDefaults();
  const std::map<std::string, Key> keys = Keys();
  for (const auto& [key, k] : keys) {
    INFO(key);
    // A key is named itself, or by what contains it: "probes.limits.*", "profiles[].expect" for
    // "profiles[].expect.ecn", "rails" for "rails[].netdev".
    std::string named = key;
    for (std::string up = key; readme.count(named) == 0 && !up.empty();) {
      const size_t dot = up.rfind('.');
      up = dot == std::string::npos ? "" : up.substr(0, dot);
      if (absl::EndsWith(up, "[]")) up.resize(up.size() - 2);
      if (readme.count(up + ".*") > 0) named = up + ".*";
      if (readme.count(up) > 0) named = up;
    }
    REQUIRE(readme.count(named) == 1);
    if (!k.default_value.empty() && named == key) CHECK(Leading(readme.at(key)) == k.default_value);
  }
  for (const auto& [key, cell] : readme) {
    INFO("README row " << key);
    CHECK((keys.count(key) > 0 || HasKeyUnder(keys, std::string(absl::StripSuffix(key, "*"))) ||
           HasKeyUnder(keys, key + ".") || HasKeyUnder(keys, key + "[].")));
  }
}

TEST_CASE("the spelling rules are those of the YAML reader") {
  // What Spell writes for a double, an enum and a duration reads back as the same value.
  const v1::Config defaults = Defaults();
  auto spell = [](const Message& m, const char* name) {
    return Spell(m, m.GetDescriptor()->FindFieldByName(name));
  };
  const std::string yaml =
      absl::StrCat("thresholds: {relative_bw: ", spell(defaults.thresholds(), "relative_bw"), "}\n",
                   "sweep: {pairing: ", spell(defaults.sweep(), "pairing"),
                   ", pair_timeout: ", spell(defaults.sweep(), "pair_timeout"), "}\n");
  auto read = ParseConfig(yaml, "defaults.yaml");
  REQUIRE(read.ok());
  CHECK(read->thresholds().relative_bw() == defaults.thresholds().relative_bw());
  CHECK(read->sweep().pairing() == defaults.sweep().pairing());
  CHECK(read->sweep().pair_timeout().seconds() == defaults.sweep().pair_timeout().seconds());
}

}  // namespace
}  // namespace fabricctl
