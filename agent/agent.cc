#include "agent/agent.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "agent/inventory.h"
#include "base/grpc_status.h"
#include "base/logging.h"
#include "base/net_address.h"
#include "base/profiles.h"
#include "base/status_macros.h"
#include "google/protobuf/util/time_util.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/server_builder.h"
#include "probes/audit/audit.h"
#include "probes/audit/fec_stats.h"

namespace fabricctl::agent {
namespace {

bool IsWildcard(const std::string& host) { return host == "0.0.0.0" || host == "::"; }

std::chrono::system_clock::time_point Deadline(absl::Duration timeout) {
  return std::chrono::system_clock::now() + absl::ToChronoMicroseconds(timeout);
}

// Every address the agent's TLS names must cover: where it listens, the controllers it dials,
// where it is advertised.
absl::StatusOr<std::vector<std::string>> TlsHosts(const AgentOptions& options,
                                                  const HostPort& listen) {
  std::vector<std::string> hosts = {listen.host};
  if (!options.controller.empty()) {
    ASSIGN_OR_RETURN(const std::vector<HostPort> controllers,
                     ParseHostPorts(options.controller, "--controller"));
    for (const HostPort& c : controllers) hosts.push_back(c.host);
  }
  if (!options.advertise.empty()) {
    ASSIGN_OR_RETURN(HostPort advertise, ParseHostPort(options.advertise, "--advertise"));
    hosts.push_back(advertise.host);
  }
  return hosts;
}

// Audits read through the agent's SysfsRoot, against the node's expectations and the agent's
// own environment (the NCCL variables jobs on this node inherit).
probes::AuditContext AuditsFor(const probes::SysfsRoot* sysfs, const v1::Expectations& expect,
                               const std::string& node, const v1::Config& config,
                               const GpuInventory& gpus) {
  probes::AuditContext audits;
  audits.root = sysfs;
  audits.expect = expect;
  audits.node = node;
  audits.max_counter_increase = config.thresholds().max_counter_increase();
  audits.environment = probes::NcclEnvironment();
  audits.driver_gpus = gpus.gpus;
  audits.driver_gpus_reason = gpus.unavailable_reason;
  return audits;
}

// gRPC's default reconnect backoff grows to two minutes while the controller is down, and every
// RPC fails at once meanwhile; capped at a second, a restarted controller hears from its
// agents within one heartbeat. gRPC also takes the "minimum backoff" as the time a connection
// attempt may take (its handshake included): a controller that a thousand agents reach at once
// answers some handshakes after more than 200 ms, and agents that gave up on them then backed
// off in step (300 agents started at once on 2 cores: 217 failed a first attempt); 5 s lets
// the handshake finish, and the RPC's own deadline still bounds the wait. A controller's host
// that drops connections silently costs an attempt those 5 s; a refused one fails at once.
std::unique_ptr<v1::ControllerService::Stub> ControllerStub(
    const std::string& address, std::shared_ptr<grpc::ChannelCredentials> credentials) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 5000);  // the connection attempt's timeout
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  return v1::ControllerService::NewStub(grpc::CreateCustomChannel(address, credentials, args));
}

absl::Duration ToDuration(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

// The links this node's inventory reports, watched from the start (the first sample is the
// baseline) and looked for again as the watch runs, or none when watch.interval is 0s.
std::unique_ptr<LinkWatch> StartWatch(const AgentOptions& options, const probes::SysfsRoot* sysfs,
                                      const std::string& node, const GpuInventory& gpus) {
  const v1::Config& config = options.config;
  if (ToDuration(config.watch().interval()) <= absl::ZeroDuration()) return nullptr;
  InventoryOptions inventory;
  inventory.node_name = node;
  inventory.labels = options.labels;
  inventory.lldp_socket = options.lldp_socket;
  inventory.gpus = gpus;
  LinkWatchSettings settings;
  settings.interval = ToDuration(config.watch().interval());
  settings.window = ToDuration(config.watch().window());
  settings.recovery = ToDuration(config.watch().recovery());
  settings.max_errors = config.watch().max_errors();
  // FEC counts come from the kernel, not from files: only where the agent reads the real /sys.
  if (sysfs->root().empty()) settings.fec = probes::ReadFecCounts;
  // A NIC that comes up or is added later is watched from the next look (every 30 samples).
  settings.discover = [inventory, sysfs] {
    return WatchedLinks::ToWatch(CollectInventory(inventory, *sysfs));
  };
  auto watch =
      std::make_unique<LinkWatch>(sysfs, WatchedLinks::ToWatch(CollectInventory(inventory, *sysfs)),
                                  settings, inventory.node_name);
  watch->Sample(absl::Now());
  return watch;
}

// The link_watch audit as the controller asks it: the watch's verdict now, or why there is none.
std::function<v1::AuditResult()> WatchAudit(const LinkWatch* watch) {
  if (watch == nullptr) {
    return [] {
      v1::AuditResult r;
      r.set_audit("link_watch");
      r.set_outcome(v1::AUDIT_SKIPPED);
      r.set_reason("the agent's link watch is off (watch.interval 0s)");
      return r;
    };
  }
  return [watch] { return watch->Result(absl::Now()); };
}

}  // namespace

absl::StatusOr<std::unique_ptr<Agent>> Agent::Start(AgentOptions options) {
  ASSIGN_OR_RETURN(const HostPort listen, ParseHostPort(options.listen, "--listen"));
  ASSIGN_OR_RETURN(const std::vector<std::string> hosts, TlsHosts(options, listen));
  ASSIGN_OR_RETURN(TransportSecurity security, TransportSecurity::Create(options.tls, hosts));
  auto log = Logger("agent");
  if (security.insecure_override()) {
    log->warn("--insecure: plain text on {}; the controller is not authenticated", options.listen);
  }
  std::unique_ptr<Agent> agent(new Agent());
  agent->sysfs_ = std::make_unique<probes::SysfsRoot>(options.sysfs_root);
  agent->started_unix_ms_ = absl::ToUnixMillis(absl::Now());
  agent->gpus_ = CollectGpus(*agent->sysfs_);  // before the server's threads exist
  agent->node_name_ = options.node_name.empty() ? Hostname() : options.node_name;
  // Probe servers listen where the agent listens and are dialled where it is advertised.
  std::string advertise_host = listen.host;
  if (!options.advertise.empty()) {
    advertise_host = ParseHostPort(options.advertise, "--advertise")->host;
  } else if (IsWildcard(listen.host)) {
    advertise_host = Hostname();
  }
  agent->probes_ = std::make_unique<ProbeRunner>(listen.host, advertise_host,
                                                 probes::ServeContext(options.limits, {}),
                                                 agent->node_name_, options.nccl_log_dir);
  // What this node is held to: its profile's expectations (a CPU-only node's), else the
  // configuration's.
  std::string profile;
  const v1::Expectations& expect =
      ExpectationsFor(options.config, agent->node_name_, options.labels, &profile);
  if (!profile.empty()) log->info("node {} is held to profile {}", agent->node_name_, profile);
  agent->probes_->SetNcclExpectation({probes::RdmaExpectedBecause(*agent->sysfs_, expect)});
  agent->probes_->SetGpus(agent->gpus_.gpus);
  agent->watch_ = StartWatch(options, agent->sysfs_.get(), agent->node_name_, agent->gpus_);
  probes::AuditContext audits =
      AuditsFor(agent->sysfs_.get(), expect, agent->node_name_, options.config, agent->gpus_);
  const absl::Duration watch_interval = ToDuration(options.config.watch().interval());
  audits.link_watch = WatchAudit(agent->watch_.get());
  // The inventory callback reads address_ after the server has bound it.
  Agent* self = agent.get();
  agent->service_ = std::make_unique<AgentService>(
      options.controller_identity,
      [self] {
        InventoryOptions inventory;
        inventory.node_name = self->node_name_;
        inventory.agent_address = self->address_;
        inventory.labels = self->options_.labels;
        inventory.lldp_socket = self->options_.lldp_socket;
        inventory.gpus = self->gpus_;
        if (self->sysfs_->root().empty()) inventory.netdev_firmware = ReadNetdevFirmware;
        return CollectInventory(inventory, *self->sysfs_);
      },
      agent->probes_.get(), std::move(audits));
  RETURN_IF_ERROR(agent->Serve(options, listen, advertise_host, security));
  if (!options.controller.empty()) {
    ASSIGN_OR_RETURN(const std::vector<HostPort> controllers,
                     ParseHostPorts(options.controller, "--controller"));
    for (const HostPort& c : controllers) {
      agent->controller_addresses_.push_back(c.ToString());
      agent->controllers_.push_back(ControllerStub(c.ToString(), security.ChannelCredentials()));
    }
  }
  agent->options_ = std::move(options);
  if (agent->options_.watch_file.empty()) {
    agent->options_.watch_file = agent->options_.config.watch().file();
  }
  if (agent->watch_) {
    agent->watching_ = std::thread([self, watch_interval] { self->WatchLoop(watch_interval); });
  }
  if (agent->options_.on_listening) agent->options_.on_listening(agent->address_);
  if (!agent->controllers_.empty())
    agent->registration_ = std::thread([self] { self->RegistrationLoop(); });
  return agent;
}

absl::Status Agent::Serve(const AgentOptions& options, const HostPort& listen,
                          const std::string& advertise_host, const TransportSecurity& security) {
  grpc::ServerBuilder builder;
  int port = 0;
  // One daemon per address: without SO_REUSEPORT a second one on a busy port fails to start
  // instead of taking half the connections at random.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(listen.ToString(), security.ServerCredentials(), &port);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_ || port == 0) {
    return absl::UnavailableError(absl::StrCat("--listen: cannot listen on ", options.listen,
                                               " (is the address in use, or not this host's?)"));
  }
  if (!options.advertise.empty()) {
    auto advertise = ParseHostPort(options.advertise, "--advertise");
    address_ = advertise->port == 0
                   ? HostPort{advertise->host, static_cast<uint16_t>(port)}.ToString()
                   : advertise->ToString();
  } else {
    address_ = HostPort{advertise_host, static_cast<uint16_t>(port)}.ToString();
  }
  Logger("agent")->info("node {} serving on {} ({})", node_name_, address_,
                        security.tls() ? "mutual TLS" : "plain text");
  return absl::OkStatus();
}

bool Agent::WaitFor(absl::Duration d) {
  MutexLock lock(&mu_);
  return !mu_.AwaitWithTimeout(&stopping_, d);
}

void Agent::WatchLoop(absl::Duration interval) {
  auto log = Logger("agent");
  bool failing = false;  // log a failure to write once, and the recovery once
  for (;;) {
    v1::AuditResult verdict = watch_->Result(absl::Now());
    // Only on a verdict that ran: `fabricctl check` holds those to their freshness (a file a
    // stopped agent left behind says nothing).
    if (verdict.outcome() == v1::AUDIT_RAN) {
      MutexLock lock(&mu_);
      if (known_good_) {
        probes::NoteKnownGood(known_good_->has_value() ? &**known_good_ : nullptr, &verdict);
      }
    }
    if (!options_.watch_file.empty()) {
      absl::Status written = WriteWatchVerdict(options_.watch_file, verdict);
      if (!written.ok() && !failing) {
        log->warn("{}; fabricctl check will not see the link watch",
                  std::string(written.message()));
      } else if (written.ok() && failing) {
        log->info("link watch written to {} again", options_.watch_file);
      }
      failing = !written.ok();
    }
    if (!WaitFor(interval)) return;
    watch_->Sample(absl::Now());
  }
}

absl::StatusOr<absl::Duration> Agent::Register() {
  v1::RegisterRequest request;
  InventoryOptions inventory;
  inventory.node_name = node_name_;
  inventory.agent_address = address_;
  inventory.labels = options_.labels;
  inventory.lldp_socket = options_.lldp_socket;
  inventory.gpus = gpus_;
  // Firmware versions come from the kernel, not from files: only where the agent reads /sys.
  if (sysfs_->root().empty()) inventory.netdev_firmware = ReadNetdevFirmware;
  *request.mutable_inventory() = CollectInventory(inventory, *sysfs_);
  request.mutable_inventory()->set_agent_started_unix_ms(started_unix_ms_);
  watched_ = WatchedLinks::Of(request.inventory());
  v1::RegisterResponse response;
  grpc::ClientContext context;
  context.set_deadline(Deadline(options_.rpc_timeout));
  grpc::Status status = controllers_[current_]->Register(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  absl::Duration heartbeat = absl::Microseconds(
      google::protobuf::util::TimeUtil::DurationToMicroseconds(response.heartbeat_interval()));
  return heartbeat > absl::ZeroDuration() ? heartbeat : absl::Seconds(10);
}

// The watch's findings a heartbeat carries at most (HeartbeatRequest.watch).
constexpr int kMaxWatchFindings = 64;

absl::StatusOr<bool> Agent::Heartbeat() {
  v1::HeartbeatRequest request;
  request.set_node_name(node_name_);
  request.set_link_state(LinkState(*sysfs_, watched_));
  if (watch_) {
    // What the watch sees beyond the registration: links that came up since, counters that
    // went back (a NIC reset), and its findings now; each ends the node's pass at the controller.
    const WatchedLinks now_watched = watch_->Links();
    std::string state = LinkState(*sysfs_, now_watched);
    if (const uint64_t resets = watch_->Resets(); resets > 0)
      absl::StrAppend(&state, "; counter resets ", resets);
    request.set_link_state(std::move(state));
    const v1::AuditResult verdict = watch_->Result(absl::Now());
    for (const v1::Finding& f : verdict.findings()) {
      if (f.severity() < v1::SEVERITY_WARNING || request.watch_size() >= kMaxWatchFindings)
        continue;
      v1::Finding* sent = request.add_watch();
      sent->set_kind(f.kind());
      sent->set_severity(f.severity());
      sent->set_device(f.device());
    }
  }
  v1::HeartbeatResponse response;
  grpc::ClientContext context;
  context.set_deadline(Deadline(options_.rpc_timeout));
  grpc::Status status = controllers_[current_]->Heartbeat(&context, request, &response);
  MutexLock lock(&mu_);
  if (!status.ok()) {
    known_good_.reset();
    return FromGrpcStatus(status);
  }
  known_good_ = response.has_known_good() ? std::optional<v1::KnownGood>(response.known_good())
                                          : std::nullopt;
  return response.known();
}

void Agent::RegistrationLoop() {
  auto log = Logger("agent");
  // With a standby, a controller that fails hands over to the next: the agent registers there.
  auto next = [&] {
    if (controllers_.size() < 2) return false;
    current_ = (current_ + 1) % controllers_.size();
    return true;
  };
  std::string controller = controller_addresses_[current_];
  constexpr absl::Duration kFirstBackoff = absl::Milliseconds(200);
  bool registered = false;
  bool announced = false;
  bool failing = false;  // log a failure once, and the recovery once
  absl::Duration heartbeat = absl::Seconds(10);
  absl::Duration backoff = kFirstBackoff;
  for (;;) {
    absl::Duration wait = heartbeat;
    if (!registered) {
      auto interval = Register();
      if (interval.ok()) {
        registered = true;
        failing = false;
        heartbeat = wait = *interval;
        backoff = kFirstBackoff;
        log->info("registered with controller {} as {} (heartbeat every {})", controller,
                  node_name_, absl::FormatDuration(heartbeat));
        if (!announced && options_.on_registered) options_.on_registered();
        announced = true;
      } else {
        if (!failing) {
          log->warn("cannot register with controller {}: {}; retrying", controller,
                    std::string(interval.status().message()));
        }
        failing = true;
        wait = backoff;
        backoff = std::min(backoff * 2, options_.max_retry_backoff);
        // The next controller may be up already; once every one has failed, the backoff.
        if (next()) {
          controller = controller_addresses_[current_];
          if (current_ != 0) wait = std::min(wait, absl::Seconds(1));
        }
      }
    } else {
      auto known = Heartbeat();
      if (!known.ok()) {
        if (!failing) {
          log->warn("heartbeat to controller {} failed: {}", controller,
                    std::string(known.status().message()));
          backoff = kFirstBackoff;
        }
        failing = true;
        // Tried again sooner than a heartbeat (never later), so that the controller is back in
        // touch within one interval of its restart.
        wait = std::min(backoff, heartbeat);
        backoff = std::min(backoff * 2, options_.max_retry_backoff);
        if (next()) {
          log->info("trying controller {} instead", controller_addresses_[current_]);
          controller = controller_addresses_[current_];
          registered = false;
          wait = absl::ZeroDuration();
        }
      } else {
        if (failing) log->info("controller {} reachable again", controller);
        failing = false;
        if (!*known) {
          log->info("controller {} does not know this node; registering again", controller);
          registered = false;
          wait = absl::ZeroDuration();
        }
      }
    }
    if (!WaitFor(wait)) return;
  }
}

void Agent::Shutdown() {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (service_) service_->Shutdown();
  if (registration_.joinable()) registration_.join();
  if (watching_.joinable()) watching_.join();
  if (server_) server_->Shutdown(Deadline(absl::Seconds(2)));
}

Agent::~Agent() { Shutdown(); }

}  // namespace fabricctl::agent
