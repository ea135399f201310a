#ifndef FABRICCTL_CONTROLLER_METRICS_HTTP_H_
#define FABRICCTL_CONTROLLER_METRICS_HTTP_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "base/socket.h"

namespace fabricctl::controller {

// A minimal HTTP/1.0 server for Prometheus scrapes: GET /metrics answers `render()` as
// text/plain (exposition format 0.0.4); anything else is 404 or 405. One connection at a time,
// each bounded by a 2-second deadline, so a slow client cannot hold it long.
class MetricsServer {
 public:
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& host,
                                                             uint16_t port,
                                                             std::function<std::string()> render);
  ~MetricsServer();
  uint16_t port() const { return listener_.port; }

 private:
  MetricsServer(net::Listener listener, std::function<std::string()> render);
  void Serve();

  net::Listener listener_;
  std::function<std::string()> render_;
  net::UniqueFd wake_;
  std::thread thread_;
};

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_METRICS_HTTP_H_
