#include "report/chunks.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace fabricctl::report {
namespace {

// Fills parts from `items` (moved out of a copy of the report), sending each when it is full.
template <typename Item, typename AddFn>
bool SendParts(const google::protobuf::RepeatedPtrField<Item>& items, size_t max_part_bytes,
               AddFn add, const std::function<bool(v1::ReportChunk)>& write) {
  v1::ReportChunk chunk;
  size_t bytes = 0;
  for (const Item& item : items) {
    const size_t size = item.ByteSizeLong() + 8;
    if (bytes > 0 && bytes + size > max_part_bytes) {
      if (!write(std::move(chunk))) return false;
      chunk = v1::ReportChunk();
      bytes = 0;
    }
    *add(chunk.mutable_part()) = item;
    bytes += size;
  }
  return bytes == 0 || write(std::move(chunk));
}

}  // namespace

bool SendReportChunks(const v1::Report& report, size_t max_part_bytes,
                      const std::function<bool(v1::ReportChunk)>& write) {
  v1::ReportChunk head;
  *head.mutable_head() = report;
  head.mutable_head()->clear_findings();
  head.mutable_head()->mutable_health()->clear_nodes();
  head.mutable_head()->mutable_health()->clear_pairs();
  if (!write(std::move(head))) return false;
  if (!SendParts(
          report.findings(), max_part_bytes, [](v1::ReportPart* p) { return p->add_findings(); },
          write) ||
      !SendParts(
          report.health().nodes(), max_part_bytes, [](v1::ReportPart* p) { return p->add_nodes(); },
          write) ||
      !SendParts(
          report.health().pairs(), max_part_bytes, [](v1::ReportPart* p) { return p->add_pairs(); },
          write)) {
    return false;
  }
  v1::ReportChunk end;
  end.mutable_end()->set_findings(static_cast<uint32_t>(report.findings_size()));
  end.mutable_end()->set_nodes(static_cast<uint32_t>(report.health().nodes_size()));
  end.mutable_end()->set_pairs(static_cast<uint32_t>(report.health().pairs_size()));
  return write(std::move(end));
}

absl::Status ReportAssembler::Add(v1::ReportChunk chunk) {
  if (complete_) return absl::FailedPreconditionError("report: a chunk after its end");
  bytes_ += chunk.ByteSizeLong();
  if (bytes_ > kMaxAssembledBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("report: larger than ", kMaxAssembledBytes >> 30, " GiB"));
  }
  switch (chunk.chunk_case()) {
    case v1::ReportChunk::kHead:
      if (head_) return absl::FailedPreconditionError("report: a second head");
      report_ = std::move(*chunk.mutable_head());
      head_ = true;
      return absl::OkStatus();
    case v1::ReportChunk::kPart: {
      if (!head_) return absl::FailedPreconditionError("report: a part before the head");
      v1::ReportPart* part = chunk.mutable_part();
      for (auto& f : *part->mutable_findings()) *report_.add_findings() = std::move(f);
      for (auto& n : *part->mutable_nodes()) *report_.mutable_health()->add_nodes() = std::move(n);
      for (auto& p : *part->mutable_pairs()) *report_.mutable_health()->add_pairs() = std::move(p);
      return absl::OkStatus();
    }
    case v1::ReportChunk::kEnd: {
      if (!head_) return absl::FailedPreconditionError("report: an end before the head");
      const v1::ReportEnd& end = chunk.end();
      if (end.findings() != static_cast<uint32_t>(report_.findings_size()) ||
          end.nodes() != static_cast<uint32_t>(report_.health().nodes_size()) ||
          end.pairs() != static_cast<uint32_t>(report_.health().pairs_size())) {
        return absl::FailedPreconditionError(absl::StrCat(
            "report: the end counts ", end.findings(), " findings, ", end.nodes(), " nodes and ",
            end.pairs(), " pairs; ", report_.findings_size(), ", ", report_.health().nodes_size(),
            " and ", report_.health().pairs_size(), " came"));
      }
      complete_ = true;
      return absl::OkStatus();
    }
    default:
      return absl::FailedPreconditionError("report: an empty chunk");
  }
}

absl::StatusOr<v1::Report> ReportAssembler::Take() {
  if (!complete_) {
    return absl::DataLossError(head_ ? "the report was cut short (its end never came)"
                                     : "no report came");
  }
  complete_ = false;
  head_ = false;
  bytes_ = 0;
  return std::move(report_);
}

}  // namespace fabricctl::report
