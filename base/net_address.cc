#include "base/net_address.h"

#include <arpa/inet.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fabricctl {

std::string HostPort::ToString() const {
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<HostPort> ParseHostPort(const std::string& text, const std::string& what,
                                       uint16_t default_port) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": '", text, "' is not HOST:PORT (", why, ")"));
  };
  if (text.empty()) return bad("empty");
  HostPort out;
  std::string port_text;
  if (text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos) return bad("unclosed '['");
    out.host = text.substr(1, close - 1);
    std::string rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return bad("expected ':' after ']'");
      port_text = rest.substr(1);
    }
  } else {
    size_t colon = text.rfind(':');
    if (colon != std::string::npos && text.find(':') != colon) {
      return bad("an IPv6 address needs brackets, as [::1]:PORT");
    }
    if (colon == std::string::npos) {
      out.host = text;
    } else {
      out.host = text.substr(0, colon);
      port_text = text.substr(colon + 1);
    }
  }
  if (out.host.empty()) return bad("empty host");
  // A DNS name or an IPv4 address; inside brackets an IPv6 address (with a %zone).
  const bool bracketed = text.front() == '[';
  for (char c : out.host) {
    const bool ok = absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ||
                    c == '_' || (bracketed && (c == ':' || c == '%'));
    if (!ok)
      return bad(
          "the host may hold only letters, digits, '-', '.' and '_', or be an IPv6 address in "
          "brackets");
  }
  if (port_text.empty()) {
    if (default_port == 0) return bad("missing port");
    out.port = default_port;
    return out;
  }
  uint32_t port = 0;
  if (!absl::SimpleAtoi(port_text, &port) || port > 65535) return bad("port is not 0-65535");
  out.port = static_cast<uint16_t>(port);
  return out;
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

}  // namespace fabricctl

namespace fabricctl {

absl::StatusOr<std::vector<HostPort>> ParseHostPorts(const std::string& text,
                                                     const std::string& what) {
  std::vector<HostPort> out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": '", text, "' has an empty address in its list"));
    }
    if (out.size() == kMaxHostPorts) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": at most ", kMaxHostPorts, " addresses"));
    }
    auto one = ParseHostPort(std::string(part), what);
    if (!one.ok()) return one.status();
    out.push_back(*std::move(one));
  }
  return out;
}

}  // namespace fabricctl
