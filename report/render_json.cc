#include <algorithm>
#include <regex>
#include <set>
#include <string>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "report/render.h"

namespace fabricctl::report {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// The names of every 64-bit integer field reachable from `d`: protobuf's JSON mapping writes
// them as strings ("sweep_id": "13"), which scripts then compare as text.
void Int64Fields(const Descriptor* d, std::set<const Descriptor*>* seen, std::set<std::string>* out) {
  if (!seen->insert(d).second) return;
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT64:
      case FieldDescriptor::CPPTYPE_UINT64:
        out->insert(f->name());
        break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        if (!f->is_map()) Int64Fields(f->message_type(), seen, out);
        break;
      default:
        break;
    }
  }
}

}  // namespace

// protobuf's JSON printer with the proto field names and every field, zeros included (a
// counter at 0 is a value, not an absence), then 64-bit integers as JSON numbers: every value
// fabricctl writes is far below 2^53, so no reader loses precision.
std::string RenderJson(const v1::Report& report) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(report, &json, options);
  static const std::regex* const int64_value = [] {
    std::set<const Descriptor*> seen;
    std::set<std::string> names;
    Int64Fields(v1::Report::descriptor(), &seen, &names);
    std::string alternatives;
    for (const auto& n : names) alternatives += (alternatives.empty() ? "" : "|") + n;
    // `"name": "123"` as a field (an array's elements follow `[` or `,` on their own line).
    return new std::regex("(\"(?:" + alternatives + ")\": )\"(-?[0-9]+)\"");
  }();
  json = std::regex_replace(json, *int64_value, "$1$2");
  // The repeated 64-bit fields (sizes_bytes) print their elements quoted inside their list.
  for (size_t at = json.find("\"sizes_bytes\": ["); at != std::string::npos;
       at = json.find("\"sizes_bytes\": [", at + 1)) {
    const size_t end = json.find(']', at);
    if (end == std::string::npos) break;
    std::string list = json.substr(at, end - at);
    list.erase(std::remove(list.begin() + 15, list.end(), '"'), list.end());
    json.replace(at, end - at, list);
  }
  return json;
}

}  // namespace fabricctl::report
