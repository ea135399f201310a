#include "controller/metrics_http.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <vector>

#include "absl/time/clock.h"
#include "base/socket.h"

namespace fabricctl::controller {
namespace {

std::string Get(uint16_t port, const std::string& request) {
  auto fd = net::ConnectTcp("127.0.0.1", port, absl::Seconds(5));
  REQUIRE(fd.ok());
  REQUIRE(
      net::SendAll(fd->get(), request.data(), request.size(), absl::Now() + absl::Seconds(5)).ok());
  std::string reply;
  char chunk[512];
  for (;;) {
    ssize_t n = ::read(fd->get(), chunk, sizeof(chunk));
    if (n <= 0) break;
    reply.append(chunk, static_cast<size_t>(n));
  }
  return reply;
}

}  // namespace

TEST_CASE("GET and HEAD /metrics answer the exposition; other paths and methods do not") {
  int calls = 0;
  auto server = MetricsServer::Start("127.0.0.1", 0, [&] {
    ++calls;
    return std::string("fabricctl_nodes{state=\"online\"} 3\n");
  });
  REQUIRE(server.ok());
  const uint16_t port = (*server)->port();
  REQUIRE(port != 0);
  std::string ok = Get(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(ok.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(ok.find("Content-Type: text/plain; version=0.0.4") != std::string::npos);
  CHECK(ok.find("\r\n\r\nfabricctl_nodes{state=\"online\"} 3\n") != std::string::npos);
  std::string head = Get(port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(head.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(head.find("Content-Length: 34\r\n") != std::string::npos);
  CHECK(head.find("fabricctl_nodes") == std::string::npos);  // headers only
  CHECK(calls == 2);
  CHECK(Get(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n").rfind("HTTP/1.1 404", 0) == 0);
  std::string post = Get(port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  CHECK(post.rfind("HTTP/1.1 405", 0) == 0);
  CHECK(post.find("Allow: GET, HEAD\r\n") != std::string::npos);
  CHECK(calls == 2);
}

TEST_CASE("Idle clients holding connections do not hold up a scrape") {
  auto server = MetricsServer::Start("127.0.0.1", 0, [] { return std::string("up 1\n"); });
  REQUIRE(server.ok());
  // Thirty clients connect and send nothing (a slow-loris); the one-at-a-time server this
  // replaced answered nobody until each had timed out.
  std::vector<net::UniqueFd> idle;
  for (int i = 0; i < 30; ++i) {
    auto fd = net::ConnectTcp("127.0.0.1", (*server)->port(), absl::Seconds(5));
    REQUIRE(fd.ok());
    idle.push_back(*std::move(fd));
  }
  std::string ok = Get((*server)->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(ok.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(ok.find("\r\n\r\nup 1\n") != std::string::npos);
}

TEST_CASE("A busy address is an error naming it") {
  auto first = MetricsServer::Start("127.0.0.1", 0, [] { return std::string(); });
  REQUIRE(first.ok());
  auto second = MetricsServer::Start("127.0.0.1", (*first)->port(), [] { return std::string(); });
  REQUIRE_FALSE(second.ok());
  CHECK(
      std::string(second.status().message()).find("--metrics-listen: cannot serve on 127.0.0.1:") ==
      0);
}

}  // namespace fabricctl::controller
