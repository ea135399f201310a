// The controller's request handlers against mutated requests: what a hostile client could send
// once past TLS. Registrations (Register, Heartbeat, ListNodes, RemoveNodes through the real
// service over a real SQLite store) and sweep requests (the probes' specs, the rounds of a
// pairing file) are generated from valid seeds by deterministic mutations of their wire bytes.
// The Sweep handler itself runs mutated sweep requests against fake agents over an in-process
// gRPC channel. Invariants, stated here independently of the handlers' own validation: nothing
// crashes or hangs; a registration is stored exactly when it is within the registry's contract
// (and then as sent); the registry stays readable after every request; a sweep request ends with
// a whole report that speaks only of registered nodes, or with an error that says why.
//
//   handlers_fuzz_test [RUNS]   (default 20000 each)
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/config.h"
#include "controller/service.h"
#include "controller/sweep/fake_agent.h"
#include "controller/sweep/pairing.h"
#include "controller/sweep/runner.h"
#include "controller/sweep/specs.h"
#include "grpcpp/grpcpp.h"
#include "proto/controller.grpc.pb.h"
#include "report/chunks.h"
#include "tests/testing/testing.h"

namespace fabricctl::controller {
namespace {

int failures = 0;
uint64_t parsed = 0, accepted = 0;  // registrations that parsed, and that were stored
void Expect(bool ok, const char* what, const std::string& input) {
  if (ok) return;
  ++failures;
  if (failures <= 5) std::fprintf(stderr, "broken: %s (input of %zu bytes)\n", what, input.size());
}

std::string Mutate(std::string input, const std::vector<std::string>& seeds,
                   std::mt19937_64& random) {
  const int mutations = 1 + static_cast<int>(random() % 6);
  for (int m = 0; m < mutations; ++m) {
    const size_t at = input.empty() ? 0 : random() % input.size();
    switch (random() % 5) {
      case 0:
        if (!input.empty()) input[at] = static_cast<char>(random());
        break;
      case 1:
        input.insert(at, 1, static_cast<char>(random()));
        break;
      case 2:
        if (!input.empty()) input.erase(at, 1 + random() % 8);
        break;
      case 3:
        input.insert(at, seeds[random() % seeds.size()]);
        break;
      default:
        input.insert(at, std::string(random() % 64, static_cast<char>(random())));
        break;
    }
  }
  return input;
}

// A registration built field by field from awkward values: names empty, long, with spaces or
// control bytes; addresses without ports or with port 0; lists just under and over their caps;
// strings up to 10 KB.
v1::RegisterRequest AwkwardRegistration(std::mt19937_64& random) {
  auto pick = [&](const std::vector<std::string>& v) { return v[random() % v.size()]; };
  const std::vector<std::string> names = {
      "node-1",  "node-2",    "",  "a b",     std::string(253, 'n'), std::string(254, 'n'),
      "node\n1", "n\xc3\xa9", "-", "node_9.x"};
  const std::vector<std::string> addresses = {
      "10.0.0.1:7401", "10.0.0.1", "10.0.0.1:0", "[::1]:7401", ":7401", "host:99999", "", "h:1"};
  v1::RegisterRequest request;
  auto* inv = request.mutable_inventory();
  inv->set_node_name(pick(names));
  inv->set_agent_address(pick(addresses));
  inv->set_hostname(std::string(random() % 3 == 0 ? random() % 10000 : random() % 64, 'h'));
  const int labels = static_cast<int>(random() % 70);
  for (int i = 0; i < labels; ++i)
    (*inv->mutable_labels())["k" + std::to_string(i)] = std::string(random() % 5000, 'v');
  const int interfaces =
      random() % 4 == 0 ? 1000 + static_cast<int>(random() % 50) : static_cast<int>(random() % 4);
  for (int i = 0; i < interfaces; ++i) inv->add_interfaces()->set_name("eth" + std::to_string(i));
  const int gpus = static_cast<int>(random() % 70);
  for (int i = 0; i < gpus; ++i) inv->add_gpus()->set_name(std::string(random() % 50, 'g'));
  return request;
}

// The registry's contract, restated here rather than borrowed from ValidateInventory: a node
// name is 1-253 of letters, digits, '-', '.', '_' (a DNS name); an inventory has at most 64
// labels, 64 GPUs, 1024 interfaces and no string longer than 4096 bytes.
bool NameIsValid(const std::string& name) {
  return !name.empty() && name.size() <= 253 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

bool WithinCaps(const v1::NodeInventory& inv) {
  bool strings_ok = inv.hostname().size() <= 4096 && inv.node_name().size() <= 4096;
  for (const auto& [k, v] : inv.labels()) strings_ok &= k.size() <= 4096 && v.size() <= 4096;
  for (const auto& g : inv.gpus()) strings_ok &= g.name().size() <= 4096;
  return strings_ok && inv.labels_size() <= 64 && inv.gpus_size() <= 64 &&
         inv.interfaces_size() <= 1024;
}

// An agent address is HOST:PORT, the host a DNS name or an IPv4 address (letters, digits, '-',
// '.', '_') or an IPv6 address in brackets.
bool HostIsValid(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  std::string host = address.substr(0, colon);
  const bool bracketed = host.size() > 2 && host.front() == '[' && host.back() == ']';
  if (bracketed) host = host.substr(1, host.size() - 2);
  return std::all_of(host.begin(), host.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
           (bracketed && (c == ':' || c == '%'));
  });
}

// Addresses AwkwardRegistration picks that the contract accepts (HOST:PORT, port 1-65535).
bool AddressIsGood(const std::string& address) {
  return address == "10.0.0.1:7401" || address == "[::1]:7401" || address == "h:1";
}

// A stored node is exactly what was registered, and within the contract.
void CheckStored(const Store& store, const v1::NodeInventory& sent, const std::string& bytes) {
  auto listed = store.ListNodes({});
  Expect(listed.ok(), "the registry stays readable", bytes);
  if (!listed.ok()) return;
  for (const StoredNode& node : *listed) {
    if (node.inventory.node_name() != sent.node_name()) continue;
    Expect(NameIsValid(node.inventory.node_name()) && WithinCaps(node.inventory),
           "a stored inventory is within the contract", bytes);
    const bool same = node.inventory.labels_size() == sent.labels_size() &&
                      node.inventory.interfaces_size() == sent.interfaces_size() &&
                      node.inventory.agent_address() == sent.agent_address();
    if (!same && failures < 5) {
      std::fprintf(stderr, "registered %s, stored %s\n",
                   sent.ShortDebugString().substr(0, 300).c_str(),
                   node.inventory.ShortDebugString().substr(0, 300).c_str());
    }
    Expect(same, "the registry keeps what was registered", bytes);
    return;
  }
  Expect(false, "an accepted registration is listed", bytes);
}

void FuzzRegistry(uint64_t runs) {
  const std::string db = testing::FreshDbPath("fuzz.db");
  auto store = Store::Open(db);
  if (!store.ok()) {
    std::fprintf(stderr, "cannot open %s\n", db.c_str());
    std::exit(1);
  }
  RegistryOptions options;
  options.forget_after = absl::Hours(1);
  ControllerServiceImpl service(store->get(), options);
  grpc::ServerContext context;

  v1::RegisterRequest seed;
  auto* inv = seed.mutable_inventory();
  inv->set_node_name("node-1");
  inv->set_agent_address("10.0.0.1:7401");
  inv->set_hostname("gpu-r01-n01");
  (*inv->mutable_labels())["rack"] = "r1";
  auto* itf = inv->add_interfaces();
  itf->set_name("eth0");
  itf->add_addresses("10.0.0.1");
  inv->add_rdma_devices()->set_name("mlx5_0");
  inv->add_gpus()->set_name("NVIDIA H100");
  std::vector<std::string> seeds = {seed.SerializeAsString()};
  v1::RemoveNodesRequest remove;
  remove.add_names("node-1");
  seeds.push_back(remove.SerializeAsString());

  std::mt19937_64 random(20261123);
  for (uint64_t i = 0; i < runs; ++i) {
    // Half built from awkward field values, half mutated wire bytes.
    const bool awkward = random() % 2 == 0;
    const std::string bytes = awkward ? AwkwardRegistration(random).SerializeAsString()
                                      : Mutate(seeds[random() % seeds.size()], seeds, random);
    switch (random() % 4) {
      case 0: {
        v1::RegisterRequest request;
        if (!request.ParseFromString(bytes)) break;
        ++parsed;
        v1::RegisterResponse response;
        grpc::Status s = service.Register(&context, &request, &response);
        const v1::NodeInventory& inv = request.inventory();
        const bool within =
            NameIsValid(inv.node_name()) && WithinCaps(inv) && HostIsValid(inv.agent_address());
        if (s.ok()) {
          ++accepted;
          Expect(within, "a registration outside the contract is refused", bytes);
          CheckStored(**store, inv, bytes);
        } else if (awkward && within && AddressIsGood(inv.agent_address())) {
          Expect(false, "a registration within the contract is stored", bytes);
        }
        break;
      }
      case 1: {
        v1::HeartbeatRequest request;
        if (!request.ParseFromString(bytes)) break;
        v1::HeartbeatResponse response;
        (void)service.Heartbeat(&context, &request, &response);
        break;
      }
      case 2: {
        v1::RemoveNodesRequest request;
        if (!request.ParseFromString(bytes)) break;
        v1::RemoveNodesResponse response;
        (void)service.RemoveNodes(&context, &request, &response);
        break;
      }
      default:
        break;
    }
    v1::ListNodesRequest list;
    v1::ListNodesResponse listed;
    grpc::Status s = service.ListNodes(&context, &list, &listed);
    Expect(s.ok(), "the registry stays readable", bytes);
    for (const auto& node : listed.nodes()) {
      Expect(NameIsValid(node.inventory().node_name()) && WithinCaps(node.inventory()),
             "only inventories within the contract are stored", bytes);
    }
  }
}

void FuzzSweepRequests(uint64_t runs) {
  const v1::Config config = DefaultConfig();
  v1::SweepRequest seed;
  seed.add_nodes("node-1");
  seed.add_nodes("node-2");
  seed.add_probes(v1::TCP_BW);
  seed.add_probes(v1::RDMA_WRITE_LAT);
  seed.mutable_measurement()->add_sizes_bytes(65536);
  seed.mutable_measurement()->set_iterations(100);
  seed.set_pairing(v1::PAIRING_FILE);
  seed.set_pairing_file("node-1:node-2 node-3:node-4\n# comment\nnode-1:node-3\n");
  seed.set_allreduce_backend("nccl");
  const std::vector<std::string> seeds = {seed.SerializeAsString()};
  const std::vector<std::string> nodes = {"node-1", "node-2", "node-3", "node-4"};
  std::mt19937_64 random(20261124);
  for (uint64_t i = 0; i < runs; ++i) {
    const std::string bytes = Mutate(seeds[0], seeds, random);
    v1::SweepRequest request;
    if (!request.ParseFromString(bytes)) continue;
    auto specs = sweep::ResolveSpecs(request, config);
    if (specs.ok()) Expect(!specs->kinds.empty() || specs->allreduce, "specs name a probe", bytes);
    auto rounds = FileRounds(request.pairing_file(), nodes);
    if (rounds.ok()) Expect(CheckRounds(*rounds, 4).ok(), "file rounds are disjoint pairs", bytes);
  }
}

// The Sweep handler itself, over an in-process gRPC channel, with four registered nodes behind
// fake agents: every mutated request ends (no hang) with a report or an error that says why, and
// a report speaks only of registered nodes.
uint64_t sweeps_ok = 0;

// A report speaks of the registered nodes and of those the request named (a node asked for that
// never registered is reported, not silently left out), of no other.
void CheckSweepReport(const v1::SweepRequest& request, const v1::Report& report,
                      std::set<std::string> known, const std::string& bytes) {
  known.insert(request.nodes().begin(), request.nodes().end());
  for (const auto& node : report.sweep().nodes()) {
    Expect(known.count(node) > 0, "a report's nodes are registered or asked for", bytes);
  }
  for (const auto& f : report.findings()) {
    Expect(f.node().empty() || known.count(f.node()) > 0, "a finding names a known node", bytes);
    Expect(f.peer().empty() || known.count(f.peer()) > 0, "a finding's peer is a known node",
           bytes);
  }
  for (const auto& node : report.summary().drain()) {
    Expect(known.count(node) > 0, "only known nodes are drained", bytes);
  }
  Expect(report.sweep().state() == v1::SWEEP_COMPLETED, "a delivered report is of a finished sweep",
         bytes);
}

void SweepOnce(v1::ControllerService::Stub& stub, const v1::SweepRequest& request,
               const std::set<std::string>& registered, const std::string& bytes) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto reader = stub.Sweep(&context, request);
  report::ReportAssembler assembler;
  v1::SweepEvent event;
  bool chunks_ok = true;
  while (reader->Read(&event)) {
    if (event.has_chunk()) chunks_ok &= assembler.Add(event.chunk()).ok();
  }
  const grpc::Status status = reader->Finish();
  Expect(status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED, "a sweep request ends", bytes);
  if (!status.ok()) {
    Expect(!status.error_message().empty(), "a refused sweep says why", bytes);
    return;
  }
  ++sweeps_ok;
  auto report = assembler.Take();
  Expect(chunks_ok && report.ok(), "an accepted sweep delivers its report whole", bytes);
  if (report.ok()) CheckSweepReport(request, *report, registered, bytes);
}

// A sweep request built field by field from plausible and awkward values: registered, unknown
// and malformed node names; every pairing; probes the fake agents run and ones they cannot;
// measurement sizes from none to huge; rails, backends, a baseline that does not exist.
v1::SweepRequest AwkwardSweep(std::mt19937_64& random) {
  auto pick = [&](const std::vector<std::string>& v) { return v[random() % v.size()]; };
  v1::SweepRequest request;
  const int nodes = static_cast<int>(random() % 6);
  for (int i = 0; i < nodes; ++i)
    request.add_nodes(pick({"node-1", "node-2", "node-3", "node-4", "node-9", "a b", ""}));
  request.set_pairing(static_cast<v1::Pairing>(random() % 7));
  if (request.pairing() == v1::PAIRING_FILE)
    request.set_pairing_file(pick({"node-1:node-2\n", "node-1:node-1\n", "x", ""}));
  request.set_sample_rounds(static_cast<uint32_t>(random() % 5));
  const v1::ProbeKind kinds[] = {v1::TCP_BW,
                                 v1::TCP_LAT,
                                 v1::RDMA_WRITE_BW,
                                 v1::RDMA_WRITE_LAT,
                                 v1::ALLREDUCE,
                                 v1::GPU_COPY,
                                 static_cast<v1::ProbeKind>(99)};
  const int probes = static_cast<int>(random() % 3);
  for (int i = 0; i < probes; ++i) request.add_probes(kinds[random() % 7]);
  if (random() % 2)
    request.mutable_measurement()->add_sizes_bytes(random() % 3 ? 65536 : (1ull << 40));
  if (random() % 4 == 0) request.set_baseline_sweep_id(static_cast<int64_t>(random() % 3));
  if (random() % 4 == 0) request.add_rails(pick({"rail0", "", "r"}));
  request.set_allreduce_backend(pick({"", "auto", "tcp", "nccl", "bogus"}));
  request.set_audits(random() % 2);
  return request;
}

void FuzzSweepHandler(uint64_t runs) {
  const std::string db = testing::FreshDbPath("fuzz-sweep.db");
  auto store = Store::Open(db);
  if (!store.ok()) std::exit(1);
  const std::set<std::string> registered = {"node-1", "node-2", "node-3", "node-4"};
  auto agents = std::make_unique<sweep::FakeAgents>();
  for (const auto& name : registered) agents->Add(name);
  SweepOptions options;
  options.config = DefaultConfig();
  options.measure_load = false;  // fake agents: their overlaps are the scheduler's (sweeps.h)
  SweepRunner runner(store->get(), std::move(agents), options);
  ControllerServiceImpl service(store->get(), RegistryOptions{}, &runner);
  grpc::ServerContext context;
  for (const auto& name : registered) {
    v1::RegisterRequest request;
    request.mutable_inventory()->set_node_name(name);
    request.mutable_inventory()->set_agent_address(sweep::FakeAgents::AddressOf(name));
    v1::RegisterResponse response;
    if (!service.Register(&context, &request, &response).ok()) std::exit(1);
  }
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  auto stub = v1::ControllerService::NewStub(server->InProcessChannel(grpc::ChannelArguments()));

  v1::SweepRequest seed;
  seed.add_nodes("node-1");
  seed.add_nodes("node-3");
  seed.add_nodes("node-4");
  seed.add_probes(v1::TCP_BW);
  seed.set_pairing(v1::PAIRING_QUICK);
  v1::SweepRequest file = seed;
  file.set_pairing(v1::PAIRING_FILE);
  file.set_pairing_file("node-1:node-3\nnode-3:node-4\n");
  file.add_rails("rail0");
  const std::vector<std::string> seeds = {seed.SerializeAsString(), file.SerializeAsString()};
  std::mt19937_64 random(20261126);
  for (uint64_t i = 0; i < runs; ++i) {
    // Half built from awkward field values, half mutated wire bytes.
    const std::string bytes = random() % 2 == 0
                                  ? AwkwardSweep(random).SerializeAsString()
                                  : Mutate(seeds[random() % seeds.size()], seeds, random);
    v1::SweepRequest request;
    if (!request.ParseFromString(bytes)) continue;
    request.mutable_wait()->Clear();  // one sweep at a time: none waits behind another
    SweepOnce(*stub, request, registered, bytes);
  }
  server->Shutdown();
}

}  // namespace
}  // namespace fabricctl::controller

int main(int argc, char** argv) {
  const uint64_t runs = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 20000;
  fabricctl::controller::FuzzRegistry(runs);
  fabricctl::controller::FuzzSweepRequests(runs);
  const uint64_t sweeps = std::max<uint64_t>(1, runs / 20);
  fabricctl::controller::FuzzSweepHandler(sweeps);
  if (fabricctl::controller::failures > 0) {
    std::printf("handlers_fuzz: %d invariants broken\n0 passed, 1 failed\n",
                fabricctl::controller::failures);
    return 1;
  }
  std::printf(
      "handlers_fuzz: %llu registry requests (%llu registrations parsed, %llu stored) and "
      "%llu sweep requests, %llu through the Sweep handler (%llu swept), no invariant "
      "broken\n",
      static_cast<unsigned long long>(runs),
      static_cast<unsigned long long>(fabricctl::controller::parsed),
      static_cast<unsigned long long>(fabricctl::controller::accepted),
      static_cast<unsigned long long>(runs), static_cast<unsigned long long>(sweeps),
      static_cast<unsigned long long>(fabricctl::controller::sweeps_ok));
  std::printf("1 passed, 0 failed\n");  // the closing line scripts/test.sh counts
  return 0;
}
