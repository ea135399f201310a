#include "controller/metrics_http.h"

#include <catch2/catch.hpp>

#include "absl/time/clock.h"

namespace fabricctl::controller {
namespace {

std::string Get(uint16_t port, const std::string& request) {
  auto fd = net::ConnectTcp("127.0.0.1", port, absl::Seconds(5));
  REQUIRE(fd.ok());
  REQUIRE(net::SendAll(fd->get(), request.data(), request.size(), absl::Now() + absl::Seconds(5)).ok());
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

TEST_CASE("GET /metrics answers the rendered exposition; other paths do not") {
  int calls = 0;
  auto server = MetricsServer::Start("127.0.0.1", 0, [&] {
    ++calls;
    return std::string("fabricctl_nodes{state=\"online\"} 3\n");
  });
  REQUIRE(server.ok());
  std::string ok = Get((*server)->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(ok.rfind("HTTP/1.0 200 OK\r\n", 0) == 0);
  CHECK(ok.find("Content-Type: text/plain; version=0.0.4") != std::string::npos);
  CHECK(ok.find("\r\n\r\nfabricctl_nodes{state=\"online\"} 3\n") != std::string::npos);
  CHECK(calls == 1);
  CHECK(Get((*server)->port(), "GET / HTTP/1.1\r\n\r\n").rfind("HTTP/1.0 404", 0) == 0);
  CHECK(Get((*server)->port(), "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.0 405", 0) == 0);
  CHECK(calls == 1);
}

}  // namespace fabricctl::controller
