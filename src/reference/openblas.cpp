#include "reference/openblas.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <string>

#include "ir/error.h"

namespace tilefuse::reference::openblas {

namespace {

// Debian's libopenblas0 installs the first; the -dev package adds the second.
constexpr const char* kLibraryNames[] = {"libopenblas.so.0", "libopenblas.so"};

struct Library {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  decltype(&openblas_set_num_threads) set_num_threads = nullptr;
};

std::atomic<bool> g_loaded{false};

template <typename Fn>
Fn symbol(void* handle, const char* library, const char* name) {
  void* address = dlsym(handle, name);
  if (address == nullptr) fail_user("OpenBLAS: {} has no symbol {}", library, name);
  return reinterpret_cast<Fn>(address);
}

Library load() {
  std::string tried;
  for (const char* name : kLibraryNames) {
    // Never closed: the library's threads and the pointers below live as long as the process.
    void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      tried += fmt::format("\n  {}: {}", name, why != nullptr ? why : "not found");
      continue;
    }
    Library lib{symbol<decltype(Library::sgemm)>(handle, name, "cblas_sgemm"),
                symbol<decltype(Library::dgemm)>(handle, name, "cblas_dgemm"),
                symbol<decltype(Library::set_num_threads)>(handle, name, "openblas_set_num_threads")};
    g_loaded = true;
    return lib;
  }
  fail_user("OpenBLAS could not be loaded (install Debian's libopenblas0); tried:{}", tried);
}

const Library& library() {
  static std::once_flag once;
  static Library lib;
  std::call_once(once, [] { lib = load(); });  // a failed load throws and is tried again next time
  return lib;
}

int blas_int(int64_t v) { return static_cast<int>(v); }

}  // namespace

void sgemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  library().sgemm(CblasRowMajor, trans_a, trans_b, blas_int(m), blas_int(n), blas_int(k), alpha, a, blas_int(lda), b,
                  blas_int(ldb), beta, c, blas_int(ldc));
}

void dgemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int64_t m, int64_t n, int64_t k, double alpha,
           const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  library().dgemm(CblasRowMajor, trans_a, trans_b, blas_int(m), blas_int(n), blas_int(k), alpha, a, blas_int(lda), b,
                  blas_int(ldb), beta, c, blas_int(ldc));
}

void use_one_thread() { library().set_num_threads(1); }

bool loaded() { return g_loaded; }

}  // namespace tilefuse::reference::openblas
