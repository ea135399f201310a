#include "probes/gpu/nccl_log.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fabricctl::probes {
namespace {

// Everything after "NCCL INFO " (or the whole line when there is no envelope).
absl::string_view Message(absl::string_view line) {
  size_t at = line.find("NCCL INFO ");
  if (at != absl::string_view::npos) return line.substr(at + 10);
  at = line.find("NCCL WARN ");
  if (at != absl::string_view::npos) return line.substr(at + 10);
  return line;
}

// "host:pid:tid [dev] NCCL INFO ..." -> host.
std::string Host(absl::string_view line) {
  if (absl::ConsumePrefix(&line, "[")) {  // an optional "[timestamp] " before the envelope
    size_t close = line.find("] ");
    if (close == absl::string_view::npos) return "";
    line.remove_prefix(close + 2);
  }
  size_t colon = line.find(':');
  size_t space = line.find(' ');
  if (colon == absl::string_view::npos || colon == 0 ||
      (space != absl::string_view::npos && space < colon)) {
    return "";
  }
  return std::string(line.substr(0, colon));
}

void Remember(NcclLog* log, const std::string& key, absl::string_view line) {
  log->evidence.emplace(key, std::string(absl::StripAsciiWhitespace(line)));
}

}  // namespace

NcclLog ParseNcclLog(const std::string& text) {
  NcclLog log;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.find("NCCL") == absl::string_view::npos) continue;
    absl::string_view msg = absl::StripAsciiWhitespace(Message(line));
    bool recognised = true;
    if (absl::ConsumePrefix(&msg, "NCCL version ")) {
      log.version = std::string(msg.substr(0, msg.find(' ')));
    } else if (absl::ConsumePrefix(&msg, "Using network ")) {
      log.network = std::string(absl::StripAsciiWhitespace(msg));
      Remember(&log, "network", line);
    } else if (absl::StartsWith(msg, "NET/IB : No device found")) {
      log.ib_no_device = true;
      Remember(&log, "ib_no_device", line);
    } else if (absl::ConsumePrefix(&msg, "NET/IB : Using")) {
      // " [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:..." — the device tokens start "[n]".
      absl::string_view devices = msg.substr(0, msg.find(';'));
      for (absl::string_view token : absl::StrSplit(devices, ' ', absl::SkipEmpty())) {
        if (token.size() > 3 && token[0] == '[' &&
            absl::ascii_isdigit(static_cast<unsigned char>(token[1]))) {
          size_t close = token.find(']');
          if (close != absl::string_view::npos && close + 1 < token.size()) {
            log.ib_devices.emplace_back(token.substr(close + 1));
          }
        }
      }
      if (!log.ib_devices.empty()) Remember(&log, "ib", line);
    } else if (absl::StartsWith(msg, "Channel ") && msg.find(" via ") != absl::string_view::npos) {
      // "Channel 00/0 : 4[0] -> 12[0] [send] via NET/IB/3/GDRDMA"
      size_t colon = msg.find(" : ");
      size_t via = msg.find(" via ");
      std::string pair =
          colon != absl::string_view::npos && colon < via
              ? std::string(absl::StripAsciiWhitespace(msg.substr(colon + 3, via - colon - 3)))
              : std::string(msg.substr(0, via));
      std::string transport(absl::StripAsciiWhitespace(msg.substr(via + 5)));
      if (absl::StartsWith(transport, "NET/")) {
        ++log.net_channels;
        if (absl::StartsWith(transport, "NET/Socket")) {
          ++log.socket_channels;
          Remember(&log, "socket", line);
        } else if (absl::StrContains(transport, "/GDRDMA")) {
          ++log.gdr_channels;
          Remember(&log, "gdr", line);
        } else {
          Remember(&log, "no_gdr", line);
        }
      }
      log.channels[pair] = transport;
    } else if (absl::ConsumePrefix(&msg, "Connected all rings, use ring PXN ")) {
      size_t gdr = msg.find("GDR ");
      if (gdr != absl::string_view::npos && gdr + 4 < msg.size()) {
        log.ring_gdr = msg[gdr + 4] == '1';
        if (!*log.ring_gdr) Remember(&log, "ring_no_gdr", line);
      }
    } else {
      recognised = absl::StrContains(line, "NCCL INFO") || absl::StrContains(line, "NCCL WARN");
    }
    if (recognised) {
      ++log.lines;
      if (log.host.empty()) log.host = Host(line);
    }
  }
  return log;
}

std::vector<v1::Finding> NcclLogFindings(const NcclLog& log, const std::string& source,
                                         const NcclExpectation& expect) {
  std::vector<v1::Finding> out;
  auto finding = [&](const std::string& kind, v1::Severity severity, const std::string& detail,
                     const std::string& evidence_key) {
    v1::Finding f;
    f.set_kind(kind);
    f.set_severity(severity);
    f.set_action(v1::ACTION_INVESTIGATE);
    f.set_node(log.host);
    f.set_device(source);
    f.set_detail(detail);
    auto it = log.evidence.find(evidence_key);
    if (it != log.evidence.end()) (*f.mutable_evidence())["line"] = it->second;
    if (!log.version.empty()) (*f.mutable_evidence())["nccl_version"] = log.version;
    out.push_back(std::move(f));
  };
  const std::string who = log.host.empty() ? source : absl::StrCat(log.host, " (", source, ")");
  if (log.socket_channels > 0) {
    finding("tcp_fallback", v1::SEVERITY_CRITICAL,
            absl::StrCat(who, ": NCCL sent ", log.socket_channels, " of ", log.net_channels,
                         " inter-node connections over TCP sockets (NET/Socket), expected NET/IB: ",
                         log.evidence.count("socket") ? log.evidence.at("socket") : ""),
            "socket");
  } else if (log.network == "Socket") {
    // Nothing went between nodes: this is NCCL's choice, not a fallback seen on the wire. It is
    // critical where RDMA is expected, and otherwise a warning about the node's set-up.
    const bool expected = !expect.rdma_expected_because.empty();
    finding("tcp_fallback", expected ? v1::SEVERITY_CRITICAL : v1::SEVERITY_WARNING,
            absl::StrCat(who, ": NCCL chose the Socket network",
                         log.ib_no_device ? " after NET/IB found no device" : "",
                         ", so it would use TCP sockets between nodes (this run sent nothing "
                         "between nodes); ",
                         expected ? absl::StrCat("critical: RDMA is expected here (",
                                                 expect.rdma_expected_because, ")")
                                  : "a warning: no RDMA is expected here (no expect.* asks for "
                                    "it and the node has no RDMA device)",
                         ": ", log.evidence.at("network")),
            "network");
  }
  const int ib_channels = log.net_channels - log.socket_channels;
  if (ib_channels > 0 && log.gdr_channels == 0) {
    finding("gpudirect_unavailable", v1::SEVERITY_WARNING,
            absl::StrCat(who, ": none of ", ib_channels,
                         " NET/IB connections used GPUDirect RDMA (no /GDRDMA): data is staged "
                         "through host memory: ",
                         log.evidence.count("no_gdr") ? log.evidence.at("no_gdr") : ""),
            "no_gdr");
  } else if (ib_channels == 0 && log.ring_gdr.has_value() && !*log.ring_gdr &&
             log.network != "Socket" && log.socket_channels == 0) {
    finding(
        "gpudirect_unavailable", v1::SEVERITY_WARNING,
        absl::StrCat(who, ": NCCL reports GDR 0 for its rings: ", log.evidence.at("ring_no_gdr")),
        "ring_no_gdr");
  }
  return out;
}

v1::NcclTransport NcclTransportOf(const NcclLog& log) {
  v1::NcclTransport t;
  t.set_net(log.network.empty() && log.net_channels > 0
                ? (log.socket_channels == log.net_channels ? "Socket" : "IB")
                : log.network);
  t.set_gpudirect_rdma(log.gdr_channels > 0 ||
                       (log.ring_gdr && *log.ring_gdr && log.net_channels > 0));
  for (const auto& [pair, transport] : log.channels)
    (*t.mutable_peer_transports())[pair] = transport;
  for (const auto& [key, line] : log.evidence) t.add_evidence(line);
  return t;
}

}  // namespace fabricctl::probes
