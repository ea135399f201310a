#include "controller/metrics_http.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fabricctl::controller {
namespace {

constexpr absl::Duration kConnectionDeadline = absl::Seconds(2);
constexpr size_t kMaxRequestBytes = 8192;

std::string Response(const char* status, const std::string& type, const std::string& body) {
  return absl::StrCat("HTTP/1.0 ", status, "\r\nContent-Type: ", type,
                      "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", body);
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const std::string& host, uint16_t port, std::function<std::string()> render) {
  auto listener = net::ListenTcp(host, port);
  if (!listener.ok()) {
    return absl::Status(listener.status().code(),
                        absl::StrCat("--metrics-listen: ", listener.status().message()));
  }
  std::unique_ptr<MetricsServer> server(new MetricsServer(*std::move(listener), std::move(render)));
  server->thread_ = std::thread([s = server.get()] { s->Serve(); });
  return server;
}

MetricsServer::MetricsServer(net::Listener listener, std::function<std::string()> render)
    : listener_(std::move(listener)),
      render_(std::move(render)),
      wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

MetricsServer::~MetricsServer() {
  uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
}

void MetricsServer::Serve() {
  for (;;) {
    pollfd fds[2] = {{listener_.fd.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents & POLLIN) return;
    auto connection = net::AcceptTcp(listener_, absl::ZeroDuration());
    if (!connection.ok()) continue;
    const absl::Time deadline = absl::Now() + kConnectionDeadline;
    // Read the request head (up to the blank line), bounded in size and time.
    std::string request;
    char byte;
    while (request.size() < kMaxRequestBytes &&
           request.find("\r\n\r\n") == std::string::npos &&
           request.find("\n\n") == std::string::npos) {
      if (!net::RecvAll(connection->get(), &byte, 1, deadline).ok()) break;
      request += byte;
    }
    std::string reply;
    if (request.rfind("GET /metrics ", 0) == 0 || request.rfind("GET /metrics?", 0) == 0) {
      reply = Response("200 OK", "text/plain; version=0.0.4; charset=utf-8", render_());
    } else if (request.rfind("GET ", 0) == 0) {
      reply = Response("404 Not Found", "text/plain", "only /metrics is served here\n");
    } else {
      reply = Response("405 Method Not Allowed", "text/plain", "GET /metrics\n");
    }
    (void)net::SendAll(connection->get(), reply.data(), reply.size(), deadline);
  }
}

}  // namespace fabricctl::controller
