#ifndef FABRICCTL_TESTS_TESTING_TESTING_H_
#define FABRICCTL_TESTS_TESTING_TESTING_H_

// What the tests share (//tests:testing): their temporary files, files read whole, TLS
// credentials from a directory of scripts/make-certs.sh, and a store on a fresh database. The
// sweep harness (fake agents and a runner) is sweeps.h, in the same library.
#include <memory>
#include <string>

#include "controller/store/store.h"
#include "grpcpp/security/credentials.h"

namespace fabricctl::testing {

// NAME in the test's own temporary directory ($TEST_TMPDIR, Bazel's; /tmp outside Bazel). Nothing
// is created.
std::string TestPath(const std::string& name);

// A fresh, empty directory TestPath(name): removed first where it was.
std::string TempDir(const std::string& name);

// The whole of the file at `path`; empty where it cannot be read.
std::string ReadFile(const std::string& path);

// A fresh SQLite database TestPath(name): the file and its -wal and -shm removed first.
std::string FreshDbPath(const std::string& name);

// A store on FreshDbPath(name); the test aborts, saying why, when it cannot be opened.
std::unique_ptr<controller::Store> FreshStore(const std::string& name);

// The credentials of the certificate NAME in `certs` (a directory of scripts/make-certs.sh:
// NAME.pem, NAME.key, ca.pem), as a client presents them.
std::shared_ptr<grpc::ChannelCredentials> ClientCredentials(const std::string& certs,
                                                            const std::string& name);

}  // namespace fabricctl::testing

#endif  // FABRICCTL_TESTS_TESTING_TESTING_H_
