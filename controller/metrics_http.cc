#include "controller/metrics_http.h"

#include <civetweb.h>

#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"

namespace fabricctl::controller {
namespace {

// civetweb's library-wide set-up, once per process.
void InitCivetweb() {
  static std::once_flag once;
  std::call_once(once, [] { mg_init_library(0); });
}

// An HTTP response: its status line, type and body, and any header more.
struct Response {
  int status;
  const char* reason;
  const char* type;
  std::string body;
  const char* extra_header = "";
};

// Sends `r` (its headers only, to a HEAD).
void Reply(mg_connection* c, const Response& r, bool head) {
  mg_printf(
      c, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
      r.status, r.reason, r.type, r.body.size(), r.extra_header);
  if (!head) mg_write(c, r.body.data(), r.body.size());
}

}  // namespace

int MetricsServer::Handle(mg_connection* connection, void* self) {
  const mg_request_info* request = mg_get_request_info(connection);
  const char* method = request->request_method;
  const bool get = std::strcmp(method, "GET") == 0, head = std::strcmp(method, "HEAD") == 0;
  if (!get && !head) {
    Reply(
        connection,
        {405, "Method Not Allowed", "text/plain", "GET or HEAD /metrics\n", "Allow: GET, HEAD\r\n"},
        false);
    return 405;
  }
  if (std::strcmp(request->local_uri, "/metrics") != 0) {
    Reply(connection, {404, "Not Found", "text/plain", "only /metrics is served here\n"}, head);
    return 404;
  }
  Reply(connection,
        {200, "OK", "text/plain; version=0.0.4; charset=utf-8",
         static_cast<MetricsServer*>(self)->render_()},
        head);
  return 200;
}

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const std::string& host, uint16_t port, std::function<std::string()> render) {
  InitCivetweb();
  std::unique_ptr<MetricsServer> server(new MetricsServer(std::move(render)));
  // IPv6 literals go in brackets ("[::1]:9400"); civetweb takes the address and port as one.
  const std::string where = host.find(':') != std::string::npos
                                ? absl::StrCat("[", host, "]:", port)
                                : absl::StrCat(host, ":", port);
  const std::string threads = absl::StrCat(kWorkerThreads);
  const std::string timeout = absl::StrCat(kRequestTimeoutMs);
  const char* options[] = {"listening_ports",
                           where.c_str(),
                           "num_threads",
                           threads.c_str(),
                           "request_timeout_ms",
                           timeout.c_str(),
                           "enable_keep_alive",
                           "no",
                           "max_request_size",
                           "8192",
                           nullptr};
  mg_callbacks callbacks{};
  mg_init_data init{};
  init.callbacks = &callbacks;
  init.configuration_options = options;
  mg_error_data error{};
  char message[256] = {};
  error.text = message;
  error.text_buffer_size = sizeof(message);
  server->context_ = mg_start2(&init, &error);
  if (server->context_ == nullptr) {
    return absl::UnavailableError(absl::StrCat("--metrics-listen: cannot serve on ", where, ": ",
                                               message[0] ? message : "civetweb failed to start"));
  }
  mg_set_request_handler(server->context_, "/", &MetricsServer::Handle, server.get());
  mg_server_port ports[1];
  if (mg_get_server_ports(server->context_, 1, ports) < 1) {
    return absl::InternalError("--metrics-listen: civetweb reports no listening port");
  }
  server->port_ = static_cast<uint16_t>(ports[0].port);
  return server;
}

MetricsServer::~MetricsServer() {
  if (context_ != nullptr) mg_stop(context_);
}

}  // namespace fabricctl::controller
