#ifndef FABRICCTL_PROBES_GPU_RUNTIME_LIBRARY_H_
#define FABRICCTL_PROBES_GPU_RUNTIME_LIBRARY_H_

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace fabricctl::probes {

// Opens a library loaded at run time (the CUDA driver, NCCL): the file $`env` names, else
// `soname` from the loader's path; `*path` says which. NotFound "<what> (<dlerror>)" when it
// cannot be opened. The caller owns the handle (dlclose).
inline absl::StatusOr<void*> OpenRuntimeLibrary(const char* env, const char* soname,
                                                const char* what, std::string* path) {
  const char* override_path = std::getenv(env);
  *path = override_path != nullptr && *override_path ? override_path : soname;
  void* library = ::dlopen(path->c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    return absl::NotFoundError(absl::StrCat(what, " (", why ? why : *path, ")"));
  }
  return library;
}

// Resolves `name` into the function pointer *out; false when the library lacks it.
template <typename Fn>
bool Resolve(void* library, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(::dlsym(library, name));
  return *out != nullptr;
}

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_GPU_RUNTIME_LIBRARY_H_
