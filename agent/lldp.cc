#include "agent/lldp.h"

#include <dlfcn.h>
#include <lldpctl.h>

#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/mutex.h"

namespace fabricctl::agent {
namespace {

constexpr char kLibrary[] = "liblldpctl.so.4";
// At most this many neighbours are read (one per interface is kept).
constexpr int kMaxNeighbors = 4096;

// liblldpctl's functions, resolved once from the library.
struct Lldpctl {
  decltype(&lldpctl_get_default_transport) default_transport = nullptr;
  decltype(&lldpctl_new_name) new_name = nullptr;
  decltype(&lldpctl_release) release = nullptr;
  decltype(&lldpctl_last_error) last_error = nullptr;
  decltype(&lldpctl_strerror) strerror = nullptr;
  decltype(&lldpctl_get_interfaces) get_interfaces = nullptr;
  decltype(&lldpctl_get_port) get_port = nullptr;
  decltype(&lldpctl_atom_get) get = nullptr;
  decltype(&lldpctl_atom_get_str) get_str = nullptr;
  decltype(&lldpctl_atom_dec_ref) dec_ref = nullptr;
  decltype(&lldpctl_atom_iter) iter = nullptr;
  decltype(&lldpctl_atom_iter_next) iter_next = nullptr;
  decltype(&lldpctl_atom_iter_value) iter_value = nullptr;
  std::string error;  // why the library is unusable; empty when it is
};

template <typename F>
void Resolve(void* handle, const char* name, F* out, std::string* error) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  if (*out == nullptr && error->empty()) error->assign(absl::StrCat(kLibrary, " has no ", name));
}

const Lldpctl& Library() {
  static const Lldpctl* const lib = [] {
    auto* l = new Lldpctl;
    void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      l->error = absl::StrCat(kLibrary, " not found (Debian's lldpd is not installed)");
      return l;
    }
    Resolve(handle, "lldpctl_get_default_transport", &l->default_transport, &l->error);
    Resolve(handle, "lldpctl_new_name", &l->new_name, &l->error);
    Resolve(handle, "lldpctl_release", &l->release, &l->error);
    Resolve(handle, "lldpctl_last_error", &l->last_error, &l->error);
    Resolve(handle, "lldpctl_strerror", &l->strerror, &l->error);
    Resolve(handle, "lldpctl_get_interfaces", &l->get_interfaces, &l->error);
    Resolve(handle, "lldpctl_get_port", &l->get_port, &l->error);
    Resolve(handle, "lldpctl_atom_get", &l->get, &l->error);
    Resolve(handle, "lldpctl_atom_get_str", &l->get_str, &l->error);
    Resolve(handle, "lldpctl_atom_dec_ref", &l->dec_ref, &l->error);
    Resolve(handle, "lldpctl_atom_iter", &l->iter, &l->error);
    Resolve(handle, "lldpctl_atom_iter_next", &l->iter_next, &l->error);
    Resolve(handle, "lldpctl_atom_iter_value", &l->iter_value, &l->error);
    return l;
  }();
  return *lib;
}

// Owns an atom's reference.
struct AtomRef {
  const Lldpctl& lib;
  lldpctl_atom_t* atom;
  ~AtomRef() {
    if (atom != nullptr) lib.dec_ref(atom);
  }
};

std::string Str(const Lldpctl& lib, lldpctl_atom_t* atom, lldpctl_key_t key) {
  const char* value = atom == nullptr ? nullptr : lib.get_str(atom, key);
  return value == nullptr ? "" : value;
}

// Every value of an iterable atom, each passed to `visit` (which must not keep it).
template <typename Visit>
void ForEach(const Lldpctl& lib, lldpctl_atom_t* list, Visit visit) {
  if (list == nullptr) return;
  int seen = 0;
  for (lldpctl_atom_iter_t* it = lib.iter(list); it != nullptr && seen < kMaxNeighbors;
       it = lib.iter_next(list, it), ++seen) {
    AtomRef value{lib, lib.iter_value(list, it)};
    if (value.atom != nullptr) visit(value.atom);
  }
}

absl::StatusOr<std::map<std::string, v1::LldpNeighbor>> ReadNeighbors(const std::string& socket) {
  const Lldpctl& lib = Library();
  if (!lib.error.empty()) return absl::FailedPreconditionError(lib.error);
  const std::string path = socket.empty() ? lib.default_transport() : socket;
  lldpctl_conn_t* conn = lib.new_name(path.c_str(), nullptr, nullptr, nullptr);
  if (conn == nullptr) return absl::FailedPreconditionError("lldpctl: out of memory");
  std::unique_ptr<lldpctl_conn_t, decltype(lib.release)> owner(conn, lib.release);
  AtomRef interfaces{lib, lib.get_interfaces(conn)};
  if (interfaces.atom == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("lldpd at ", path, ": ", lib.strerror(lib.last_error(conn))));
  }
  std::map<std::string, v1::LldpNeighbor> out;
  ForEach(lib, interfaces.atom, [&](lldpctl_atom_t* interface) {
    const std::string name = Str(lib, interface, lldpctl_k_interface_name);
    AtomRef port{lib, lib.get_port(interface)};
    AtomRef neighbors{
        lib, port.atom == nullptr ? nullptr : lib.get(port.atom, lldpctl_k_port_neighbors)};
    ForEach(lib, neighbors.atom, [&](lldpctl_atom_t* neighbor) {
      if (out.count(name) > 0) return;
      AtomRef chassis{lib, lib.get(neighbor, lldpctl_k_port_chassis)};
      v1::LldpNeighbor& n = out[name];
      n.set_system_name(Str(lib, chassis.atom, lldpctl_k_chassis_name));
      n.set_port_id(Str(lib, neighbor, lldpctl_k_port_id));
      n.set_port_description(Str(lib, neighbor, lldpctl_k_port_descr));
    });
  });
  return out;
}

}  // namespace

absl::StatusOr<std::map<std::string, v1::LldpNeighbor>> ReadLldpNeighbors(const std::string& socket,
                                                                          absl::Duration timeout) {
  // A read's result, shared with its thread, which may outlive the calls that wait for it.
  struct Read {
    std::string socket;
    absl::Time started;
    bool done = false;
    absl::StatusOr<std::map<std::string, v1::LldpNeighbor>> result = absl::UnknownError("");
  };
  // One read at a time: a call while one is running waits for that one (of the same socket);
  // a read that never returns holds its one thread, and calls after its timeout say so at once.
  // (Never destroyed: a detached read may still finish while the process exits.)
  static auto* const mu = new Mutex;
  static auto* const running = new std::shared_ptr<Read>;
  MutexLock lock(mu);
  std::shared_ptr<Read> read = *running;
  if (read == nullptr || read->done) {
    read = std::make_shared<Read>();
    read->socket = socket;
    read->started = absl::Now();
    std::thread([read] {
      auto result = ReadNeighbors(read->socket);
      MutexLock guard(mu);
      read->result = std::move(result);
      read->done = true;
    }).detach();
    *running = read;  // once its thread runs
  } else if (read->socket != socket) {
    return absl::UnavailableError("a read of another lldpd socket is running");
  } else if (absl::Now() - read->started > timeout) {
    return absl::DeadlineExceededError(absl::StrCat(
        "lldpd has not answered a read for ", absl::FormatDuration(absl::Now() - read->started)));
  }
  if (!mu->AwaitWithTimeout(
          +[](Read* r) { return r->done; }, read.get(), timeout)) {
    return absl::DeadlineExceededError(
        absl::StrCat("lldpd at ", socket.empty() ? "its default socket" : socket,
                     " did not answer within ", absl::FormatDuration(timeout)));
  }
  return read->result;
}

}  // namespace fabricctl::agent
