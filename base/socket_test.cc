#include "base/socket.h"

#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <thread>

#include "absl/time/clock.h"
#include "proto/probe.pb.h"

namespace fabricctl::net {

TEST_CASE("Frames cross a real loopback connection") {
  auto listener = ListenTcp("127.0.0.1", 0);
  REQUIRE(listener.ok());
  REQUIRE(listener->port != 0);
  v1::ProbeHello received;
  // Catch2's assertions are for the test's own thread: the server's steps report a status.
  absl::Status served;
  std::thread server([&] {
    auto conn = AcceptTcp(*listener, absl::Seconds(5));
    served = conn.status();
    if (served.ok()) served = RecvFrame(conn->get(), &received, absl::Now() + absl::Seconds(5));
    v1::ProbeWelcome welcome;
    welcome.set_error("no");
    if (served.ok()) served = SendFrame(conn->get(), welcome, absl::Now() + absl::Seconds(5));
  });
  auto client = ConnectTcp("127.0.0.1", listener->port, absl::Seconds(5));
  REQUIRE(client.ok());
  v1::ProbeHello hello;
  hello.set_size_bytes(65536);
  hello.set_stream(3);
  REQUIRE(SendFrame(client->get(), hello, absl::Now() + absl::Seconds(5)).ok());
  v1::ProbeWelcome welcome;
  REQUIRE(RecvFrame(client->get(), &welcome, absl::Now() + absl::Seconds(5)).ok());
  server.join();
  REQUIRE(served.ok());
  CHECK(received.size_bytes() == 65536);
  CHECK(received.stream() == 3);
  CHECK(welcome.error() == "no");
}

TEST_CASE("A refused connection names the address") {
  auto listener = ListenTcp("127.0.0.1", 0);
  REQUIRE(listener.ok());
  uint16_t port = listener->port;
  listener->fd.Reset();  // nothing listens there now
  auto client = ConnectTcp("127.0.0.1", port, absl::Seconds(2));
  REQUIRE_FALSE(client.ok());
  CHECK(absl::IsUnavailable(client.status()));
  CHECK(std::string(client.status().message()).find("127.0.0.1:" + std::to_string(port)) !=
        std::string::npos);
}

TEST_CASE("Reads time out, and a closed peer is reported as such") {
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
  UniqueFd a(pair[0]), b(pair[1]);
  char byte;
  auto timed_out = RecvAll(a.get(), &byte, 1, absl::Now() + absl::Milliseconds(50));
  CHECK(absl::IsDeadlineExceeded(timed_out));
  b.Reset();
  auto closed = RecvAll(a.get(), &byte, 1, absl::Now() + absl::Seconds(1));
  CHECK(absl::IsUnavailable(closed));
  CHECK(std::string(closed.message()) == "recv: connection closed by peer");
}

TEST_CASE("A frame that is not ours is refused") {
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
  UniqueFd a(pair[0]), b(pair[1]);
  const char garbage[] = "GET / HTTP/1.1\r\n\r\n";
  REQUIRE(SendAll(b.get(), garbage, sizeof(garbage), absl::Now() + absl::Seconds(1)).ok());
  v1::ProbeHello hello;
  auto status = RecvFrame(a.get(), &hello, absl::Now() + absl::Seconds(1));
  CHECK(absl::IsInvalidArgument(status));
}

}  // namespace fabricctl::net
