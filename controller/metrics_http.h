#ifndef FABRICCTL_CONTROLLER_METRICS_HTTP_H_
#define FABRICCTL_CONTROLLER_METRICS_HTTP_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

struct mg_context;
struct mg_connection;

namespace fabricctl::controller {

// The Prometheus endpoint, served by civetweb (Debian's libcivetweb): GET and HEAD /metrics
// answer `render()` as text/plain (exposition format 0.0.4); another method is 405 with an
// Allow header, another path 404. Requests are served by a pool of worker threads, each
// request bounded in size (8 KiB of head) and time (request_timeout), so slow or idle clients
// cannot hold up a scrape.
class MetricsServer {
 public:
  static constexpr int kWorkerThreads = 16;
  static constexpr int kRequestTimeoutMs = 2000;

  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& host,
                                                              uint16_t port,
                                                              std::function<std::string()> render);
  ~MetricsServer();
  uint16_t port() const { return port_; }

 private:
  explicit MetricsServer(std::function<std::string()> render) : render_(std::move(render)) {}
  static int Handle(::mg_connection* connection, void* self);

  std::function<std::string()> render_;
  mg_context* context_ = nullptr;
  uint16_t port_ = 0;
};

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_METRICS_HTTP_H_
