// Traces through a router: three network namespaces (a host, a router, a host) built with `ip`,
// the test's own thread moved into the first (setns) to send the probes. Needs root.
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/socket.h"
#include "catch2/catch.hpp"
#include "probes/trace/names.h"
#include "probes/trace/roce.h"
#include "probes/trace/tcp.h"
#include "tests/skip.h"
#include "tests/subprocess.h"

namespace fabricctl::probes {
namespace {

using testing::RunCommand;

// a (203.0.113.1) - router (203.0.113.126 | 203.0.113.254) - b (203.0.113.129).
class RoutedPair {
 public:
  RoutedPair() : prefix_(absl::StrCat("ftr", ::getpid())) {
    const std::string a = ns("a"), r = ns("r"), b = ns("b");
    ok_ = Sh(absl::StrCat(
        "set -e; for n in ", a, " ", r, " ", b, "; do ip netns add $n; ",
        "ip -n $n link set lo up; done; ", "ip link add ", prefix_, "a0 netns ", a,
        " type veth peer name r0 netns ", r, "; ", "ip link add ", prefix_, "b0 netns ", b,
        " type veth peer name r1 netns ", r, "; ", "ip -n ", a, " addr add 203.0.113.1/25 dev ",
        prefix_, "a0; ", "ip -n ", a, " link set ", prefix_, "a0 up; ", "ip -n ", a,
        " route add default via 203.0.113.126; ", "ip -n ", b, " addr add 203.0.113.129/25 dev ",
        prefix_, "b0; ", "ip -n ", b, " link set ", prefix_, "b0 up; ", "ip -n ", b,
        " route add default via 203.0.113.254; ", "ip -n ", r,
        " addr add 203.0.113.126/25 dev r0; ip -n ", r, " link set r0 up; ", "ip -n ", r,
        " addr add 203.0.113.254/25 dev r1; ip -n ", r, " link set r1 up; ", "ip netns exec ", r,
        " sysctl -qw net.ipv4.ip_forward=1 net.ipv4.icmp_ratelimit=0"));
  }
  ~RoutedPair() {
    Enter("");
    Sh(absl::StrCat("for n in a r b; do ip netns del ", prefix_, "$n 2>/dev/null; done"));
  }
  bool ok() const { return ok_; }
  std::string ns(const std::string& which) const { return prefix_ + which; }
  // Moves this thread into a namespace ("": back where it started).
  bool Enter(const std::string& which) {
    if (home_ < 0) home_ = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    const int fd = which.empty()
                       ? ::dup(home_)
                       : ::open(("/var/run/netns/" + ns(which)).c_str(), O_RDONLY | O_CLOEXEC);
    const bool entered = fd >= 0 && ::setns(fd, CLONE_NEWNET) == 0;
    if (fd >= 0) ::close(fd);
    return entered;
  }
  static bool Sh(const std::string& script) {
    const auto r = RunCommand({"/bin/sh", "-c", script});
    if (r.exit_code != 0) WARN(script << ": " << r.err);
    return r.exit_code == 0;
  }

 private:
  std::string prefix_;
  bool ok_ = false;
  int home_ = -1;
};

// A UDP socket bound to port 4791 that reads nothing and answers nothing: what a RoCE stack
// does with a datagram too short to be a RoCE packet.
net::UniqueFd SilentRoceStack() {
  net::UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_port = htons(4791);
  REQUIRE(::bind(fd.get(), reinterpret_cast<const sockaddr*>(&any), sizeof(any)) == 0);
  return fd;
}

Flow RoceFlow() {
  Flow f;
  f.protocol = "roce";
  f.source = "203.0.113.1:49999";
  f.destination = "203.0.113.129:4791";
  return f;
}

// Traced to the destination through the one router, which answered at TTL 1.
void CheckThroughRouter(const Flow& f) {
  INFO(f.trace_note);
  CHECK(f.traced);
  REQUIRE(f.hops.size() == 1);
  CHECK(f.hops[0].ttl == 1);
  CHECK(f.hops[0].address == "203.0.113.126");
}

TEST_CASE("Flows are traced through a router with their own 5-tuple") {
  if (::geteuid() != 0) FABRIC_SKIP("network namespaces need root");
  RoutedPair net;
  REQUIRE(net.ok());
  TraceLimits limits;
  // Long enough for any answer on a loaded machine: only silent hops wait it out.
  limits.per_hop = absl::Seconds(2);

  SECTION("a RoCE flow to a host without RoCE: the host's port unreachable ends it") {
    REQUIRE(net.Enter("a"));
    Flow f = RoceFlow();
    TraceRoceFlow(f, limits, nullptr);
    CheckThroughRouter(f);
  }
  SECTION("a RoCE flow to a RoCE stack that drops the datagram: a SYN finds the destination") {
    REQUIRE(net.Enter("b"));
    net::UniqueFd roce = SilentRoceStack();
    REQUIRE(net.Enter("a"));
    Flow f = RoceFlow();
    TraceRoceFlow(f, limits, nullptr);
    CheckThroughRouter(f);
  }
  SECTION("a router that does not answer leaves a gap, and a destination that does not either") {
    // The router forwards, but what it sends itself towards a (its ICMP) is refused.
    REQUIRE(RoutedPair::Sh(
        absl::StrCat("ip -n ", net.ns("r"), " rule add iif lo to 203.0.113.0/25 prohibit")));
    REQUIRE(net.Enter("b"));
    net::UniqueFd roce = SilentRoceStack();
    REQUIRE(net.Enter("a"));
    Flow f = RoceFlow();
    TraceRoceFlow(f, limits, nullptr);
    // TTL 1: silent (the router's answer dropped); TTL 2: the SYN's reset comes back.
    CHECK(f.traced);
    REQUIRE(f.hops.size() == 1);
    CHECK(f.hops[0].address.empty());
  }
  SECTION("bound to the flow's interface; an interface that is not there ends it with why") {
    REQUIRE(net.Enter("a"));
    Flow f = RoceFlow();
    TraceRoceFlow(f, limits, nullptr, net.ns("a0"));
    CheckThroughRouter(f);
    TraceRoceFlow(f, limits, nullptr, "nosuch0");
    CHECK_FALSE(f.traced);
    CHECK(f.trace_note == "TTL 1: SO_BINDTODEVICE nosuch0: No such device");
  }
  SECTION("a port another socket holds is not shared: the trace says so") {
    REQUIRE(net.Enter("a"));
    net::UniqueFd holder(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_in held{};
    REQUIRE(ParseEndpoint("203.0.113.1:49999", &held));
    REQUIRE(::bind(holder.get(), reinterpret_cast<const sockaddr*>(&held), sizeof(held)) == 0);
    Flow f = RoceFlow();
    TraceRoceFlow(f, limits, nullptr);
    CHECK_FALSE(f.traced);
    CHECK(f.trace_note == "TTL 1: bind to the flow's port: Address already in use");
  }
  SECTION("a TCP flow: the destination's reset ends it") {
    REQUIRE(net.Enter("a"));
    Flow f;
    f.source = "203.0.113.1:40001";
    f.destination = "203.0.113.129:9";
    TraceTcpFlow(f, limits, nullptr);
    CheckThroughRouter(f);
  }
  SECTION("nothing past the router: the trace ends after its silent hops, untraced") {
    REQUIRE(
        RoutedPair::Sh(absl::StrCat("ip -n ", net.ns("b"), " link set ", net.ns(""), "b0 down")));
    REQUIRE(net.Enter("a"));
    Flow f = RoceFlow();
    limits.max_silent = 2;
    TraceRoceFlow(f, limits, nullptr);
    CHECK_FALSE(f.traced);
    CHECK(f.hops.size() == 3);
    CHECK(f.trace_note == "2 hops in a row did not answer from TTL 2");
  }
  net.Enter("");
}

TEST_CASE("Routers are named from the hosts file, each address looked up once") {
  const std::string hosts = testing::TempDir("names") + "/hosts";
  std::ofstream(hosts) << "# routers\n203.0.113.126 leaf-1 leaf-1.fabric  # up\n"
                          "203.0.113.126 other\n\n203.0.113.254\tspine-2\n";
  RouterNames names(absl::ZeroDuration(), hosts);  // no time for DNS: the file only
  std::vector<Flow> flows(2);
  flows[0].hops = {{1, "203.0.113.126", ""}, {2, "", ""}, {3, "203.0.113.254", ""}};
  flows[1].hops = {{1, "203.0.113.7", ""}};
  names.Name(flows);
  CHECK(flows[0].hops[0].name == "leaf-1");
  CHECK(flows[0].hops[1].name.empty());
  CHECK(flows[0].hops[2].name == "spine-2");
  CHECK(flows[1].hops[0].name.empty());
}

TEST_CASE("A RoCE trace names what it cannot trace") {
  Flow f = RoceFlow();
  f.destination = "203.0.113.129:80";
  TraceRoceFlow(f, {}, nullptr);
  CHECK_FALSE(f.traced);
  CHECK(f.trace_note == "not a RoCE v2 flow (port 4791): '203.0.113.129:80'");
  f.source = "rxe0:1 qp 17";
  TraceRoceFlow(f, {}, nullptr);
  CHECK(f.trace_note == "not an IPv4 address and port: 'rxe0:1 qp 17'");
}

}  // namespace
}  // namespace fabricctl::probes
