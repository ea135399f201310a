#include "base/tls.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "tests/testing/testing.h"

namespace fabricctl {
namespace {

std::string WriteTemp(const std::string& name, const std::string& contents) {
  std::string path = testing::TestPath(name);
  std::ofstream(path) << contents;
  return path;
}

}  // namespace

TEST_CASE("Plain text is allowed on loopback only, unless --insecure") {
  auto loopback = TransportSecurity::Create({}, {"127.0.0.1", "::1", "localhost"});
  REQUIRE(loopback.ok());
  CHECK_FALSE(loopback->tls());
  CHECK_FALSE(loopback->insecure_override());

  auto remote = TransportSecurity::Create({}, {"127.0.0.1", "198.18.0.5"});
  REQUIRE_FALSE(remote.ok());
  CHECK(std::string(remote.status().message()).find("198.18.0.5") != std::string::npos);

  TlsOptions insecure;
  insecure.insecure = true;
  auto forced = TransportSecurity::Create(insecure, {"198.18.0.5"});
  REQUIRE(forced.ok());
  CHECK(forced->insecure_override());
}

TEST_CASE("TLS flags go together and must name readable PEM files") {
  TlsOptions partial;
  partial.cert_path = "/nonexistent/cert.pem";
  auto status = TransportSecurity::Create(partial, {"127.0.0.1"}).status();
  CHECK(std::string(status.message()).find("go together") != std::string::npos);

  TlsOptions missing{"/nonexistent/c.pem", "/nonexistent/k.pem", "/nonexistent/ca.pem", false};
  status = TransportSecurity::Create(missing, {"127.0.0.1"}).status();
  CHECK(std::string(status.message()).find("--tls-cert: cannot read '/nonexistent/c.pem'") !=
        std::string::npos);

  std::string not_pem = WriteTemp("not.pem", "hello");
  TlsOptions garbage{not_pem, not_pem, not_pem, false};
  status = TransportSecurity::Create(garbage, {"127.0.0.1"}).status();
  CHECK(std::string(status.message()) == "--tls-cert: not a PEM file");

  std::string pem = WriteTemp("fake.pem", "-----BEGIN CERTIFICATE-----\n");
  TlsOptions all{pem, pem, pem, false};
  auto ok = TransportSecurity::Create(all, {"198.18.0.5"});
  REQUIRE(ok.ok());
  CHECK(ok->tls());
}

}  // namespace fabricctl
