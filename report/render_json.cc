#include <algorithm>
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
void Int64Fields(const Descriptor* d, std::set<const Descriptor*>* seen,
                 std::set<std::string>* out) {
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

// The 64-bit integer field names reachable from a Report, once.
const std::set<std::string>& Int64Names() {
  static const auto* const names = [] {
    std::set<const Descriptor*> seen;
    auto* out = new std::set<std::string>();
    Int64Fields(v1::Report::descriptor(), &seen, out);
    return out;
  }();
  return *names;
}

// `line` with a quoted integer value unquoted when its key is a 64-bit field:
// `  "sweep_id": "13",` becomes `  "sweep_id": 13,`.
void UnquoteInt64(std::string& line) {
  const size_t key = line.find('"');
  if (key == std::string::npos) return;
  const size_t key_end = line.find("\": \"", key + 1);
  if (key_end == std::string::npos) return;
  if (Int64Names().count(line.substr(key + 1, key_end - key - 1)) == 0) return;
  const size_t value = key_end + 4;
  size_t end = value;
  if (end < line.size() && line[end] == '-') ++end;
  while (end < line.size() && line[end] >= '0' && line[end] <= '9') ++end;
  if (end == value || end >= line.size() || line[end] != '"') return;
  line = line.substr(0, value - 1) + line.substr(value, end - value) + line.substr(end + 1);
}

}  // namespace

// protobuf's JSON printer with the proto field names and every field, zeros included (a
// counter at 0 is a value, not an absence), then 64-bit integers as JSON numbers: every value
// fabricctl writes is far below 2^53, so no reader loses precision. One pass over the lines
// of the printed text (each field, and each element of a list, on its own line), so that a
// report of tens of MB renders in time linear in its size.
std::string RenderJson(const v1::Report& report) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(report, &json, options);
  std::string out;
  out.reserve(json.size());
  bool in_sizes = false;  // inside the list of a repeated 64-bit field (sizes_bytes)
  for (size_t at = 0; at < json.size();) {
    size_t eol = json.find('\n', at);
    if (eol == std::string::npos) eol = json.size();
    std::string line = json.substr(at, eol - at);
    at = eol + 1;
    const size_t list = line.find("\"sizes_bytes\": [");
    if (list != std::string::npos || in_sizes) {
      const size_t from = list == std::string::npos ? 0 : list + 16;
      const size_t close = line.find(']', from);
      line.erase(std::remove(line.begin() + static_cast<long>(from), line.end(), '"'), line.end());
      in_sizes = close == std::string::npos;
    } else {
      UnquoteInt64(line);
    }
    out += line;
    if (eol < json.size()) out += '\n';
  }
  return out;
}

}  // namespace fabricctl::report
