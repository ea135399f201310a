#include "base/net_address.h"

#include <catch2/catch.hpp>

namespace fabricctl {

TEST_CASE("ParseHostPort accepts host:port, [v6]:port and a default port") {
  auto v4 = ParseHostPort("127.0.0.1:7000", "--listen");
  REQUIRE(v4.ok());
  CHECK(v4->host == "127.0.0.1");
  CHECK(v4->port == 7000);

  auto v6 = ParseHostPort("[::1]:0", "--listen");
  REQUIRE(v6.ok());
  CHECK(v6->host == "::1");
  CHECK(v6->port == 0);
  CHECK(v6->ToString() == "[::1]:0");

  auto named = ParseHostPort("node-7", "--controller", 7400);
  REQUIRE(named.ok());
  CHECK(named->ToString() == "node-7:7400");
}

TEST_CASE("ParseHostPort names the flag and the reason in its error") {
  auto missing = ParseHostPort("node-7", "--controller");
  REQUIRE_FALSE(missing.ok());
  CHECK(std::string(missing.status().message()) ==
        "--controller: 'node-7' is not HOST:PORT (missing port)");
  CHECK_FALSE(ParseHostPort("h:70000", "x").ok());
  CHECK_FALSE(ParseHostPort("h:port", "x").ok());
  CHECK_FALSE(ParseHostPort("::1:80", "x").ok());
  CHECK_FALSE(ParseHostPort("[::1:80", "x").ok());
  CHECK_FALSE(ParseHostPort(":80", "x").ok());
  CHECK_FALSE(ParseHostPort("", "x").ok());
}

TEST_CASE("IsLoopbackHost knows 127/8, ::1 and localhost, and nothing else") {
  CHECK(IsLoopbackHost("127.0.0.1"));
  CHECK(IsLoopbackHost("127.3.2.1"));
  CHECK(IsLoopbackHost("::1"));
  CHECK(IsLoopbackHost("localhost"));
  CHECK_FALSE(IsLoopbackHost("128.0.0.1"));
  CHECK_FALSE(IsLoopbackHost("0.0.0.0"));
  CHECK_FALSE(IsLoopbackHost("198.18.0.2"));
  CHECK_FALSE(IsLoopbackHost("::"));
  CHECK_FALSE(IsLoopbackHost("node-1"));
}

}  // namespace fabricctl

namespace fabricctl {

TEST_CASE("ParseHostPorts takes a list in order, and names what is wrong in it") {
  auto two = ParseHostPorts("a.example:7400, [::1]:7401", "controller");
  REQUIRE(two.ok());
  REQUIRE(two->size() == 2);
  CHECK((*two)[0].ToString() == "a.example:7400");
  CHECK((*two)[1].ToString() == "[::1]:7401");
  CHECK(ParseHostPorts("a:1", "controller")->size() == 1);
  CHECK(std::string(ParseHostPorts("a:1,,b:2", "controller").status().message())
            .find("empty address") != std::string::npos);
  CHECK(std::string(ParseHostPorts("a:1,b", "--controller").status().message())
            .find("--controller") == 0);
  CHECK_FALSE(ParseHostPorts("a:1,b:2,c:3,d:4,e:5,f:6,g:7,h:8,i:9", "controller").ok());
}

}  // namespace fabricctl
