#include "google/protobuf/util/json_util.h"
#include "report/render.h"

namespace fabricctl::report {

std::string RenderJson(const v1::Report& report) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(report, &json, options);
  return json;
}

}  // namespace fabricctl::report
