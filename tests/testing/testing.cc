#include "tests/testing/testing.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "grpcpp/security/credentials.h"

namespace fabricctl::testing {

std::string TestPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/" + name;
}

std::string TempDir(const std::string& name) {
  const std::string dir = TestPath(name);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string FreshDbPath(const std::string& name) {
  const std::string path = TestPath(name);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

std::unique_ptr<controller::Store> FreshStore(const std::string& name) {
  auto store = controller::Store::Open(FreshDbPath(name));
  if (!store.ok()) {  // no test can go on without its store
    std::fprintf(stderr, "FreshStore(%s): %s\n", name.c_str(),
                 std::string(store.status().message()).c_str());
    std::abort();
  }
  return *std::move(store);
}

std::shared_ptr<grpc::ChannelCredentials> ClientCredentials(const std::string& certs,
                                                            const std::string& name) {
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ReadFile(certs + "/ca.pem");
  ssl.pem_cert_chain = ReadFile(certs + "/" + name + ".pem");
  ssl.pem_private_key = ReadFile(certs + "/" + name + ".key");
  return grpc::SslCredentials(ssl);
}

}  // namespace fabricctl::testing
