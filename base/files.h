#ifndef FABRICCTL_BASE_FILES_H_
#define FABRICCTL_BASE_FILES_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace fabricctl {

// Reads a whole input file the user named (a configuration, TLS material, a pairing file, an
// NCCL log) with a size bound, never blocking: it must be a regular file (a FIFO, a device, a
// directory or a socket is refused without being read) no larger than `max_bytes`. Errors
// are InvalidArgument and start with `what` (the flag or key) and the path.
absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, const std::string& what,
                                            size_t max_bytes);

// The kind of a file for messages: "a directory", "a FIFO", "a character device", ...
std::string FileKind(unsigned mode);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_FILES_H_
