#include "runtime/stream_probe.h"

#include <algorithm>
#include <chrono>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ir/error.h"
#include "runtime/memory_planner.h"

namespace tilefuse::runtime {
namespace {

// Work is split in blocks of this many floats (16 KiB): every slice starts 64-byte aligned, as
// aligned vector loads and non-temporal stores need, and blocks are many, so slices are even.
constexpr size_t kBlockFloats = 4096;
constexpr float kScalar = 3.0f;  // STREAM's scalar

// The kernels are compiled for AVX-512 here and picked at run time, because this library is
// built for the baseline ISA while generated kernels use the host's (-march=native): the probe
// must not lose to them by instruction width.
#if defined(__x86_64__)
__attribute__((target("avx512f"))) void triad_avx512(float* a, const float* b, const float* c, size_t n) {
  const __m512 s = _mm512_set1_ps(kScalar);
  for (size_t i = 0; i < n; i += 16) {
    _mm512_store_ps(a + i, _mm512_fmadd_ps(s, _mm512_load_ps(c + i), _mm512_load_ps(b + i)));
  }
}

__attribute__((target("avx512f"))) void copy_nt_avx512(float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; i += 16) _mm512_stream_ps(a + i, _mm512_load_ps(b + i));
  _mm_sfence();  // non-temporal stores are weakly ordered: finish them before the slice ends
}

void copy_nt_sse(float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; i += 4) _mm_stream_ps(a + i, _mm_load_ps(b + i));
  _mm_sfence();
}

bool has_avx512() { return __builtin_cpu_supports("avx512f"); }
#else
bool has_avx512() { return false; }
#endif

void triad_portable(float* __restrict a, const float* __restrict b, const float* __restrict c, size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] = b[i] + kScalar * c[i];
}

void triad(float* a, const float* b, const float* c, size_t n) {
#if defined(__x86_64__)
  if (has_avx512()) return triad_avx512(a, b, c, n);
#endif
  triad_portable(a, b, c, n);
}

void copy_nt(float* a, const float* b, size_t n) {
#if defined(__x86_64__)
  if (has_avx512()) return copy_nt_avx512(a, b, n);
  copy_nt_sse(a, b, n);
#else
  std::copy(b, b + n, a);  // no portable non-temporal store: an ordinary copy is the ceiling
#endif
}

struct Arrays {
  runtime::Arena storage[3];  // pre-faulted, huge-page backed when large
  float* a;
  float* b;
  float* c;
  size_t n;  // floats per array, a multiple of kBlockFloats
};

Arrays allocate(size_t array_bytes) {
  const size_t n = std::max<size_t>(array_bytes / sizeof(float) / kBlockFloats, 1) * kBlockFloats;
  Arrays arrays{{runtime::Arena(n * sizeof(float)), runtime::Arena(n * sizeof(float)), runtime::Arena(n * sizeof(float))},
                nullptr, nullptr, nullptr, n};
  arrays.a = reinterpret_cast<float*>(arrays.storage[0].data());
  arrays.b = reinterpret_cast<float*>(arrays.storage[1].data());
  arrays.c = reinterpret_cast<float*>(arrays.storage[2].data());
  return arrays;
}

// Runs fn(offset, count) over every worker's slice of the arrays; returns the wall time in s.
template <typename Fn> double timed_slices(ThreadTeam& team, size_t n, Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  team.run(static_cast<int64_t>(n / kBlockFloats), [&](int, int64_t first, int64_t end) {
    fn(static_cast<size_t>(first) * kBlockFloats, static_cast<size_t>(end - first) * kBlockFloats);
  });
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A wrong slice split would measure less work than it counts: check what the kernels wrote.
void check(const Arrays& x, float expected, const char* probe) {
  for (size_t i : {size_t{0}, x.n / 2, x.n - 1}) {
    if (x.a[i] != expected) fail_internal("stream probe: {} wrote {} at {}, expected {}", probe, x.a[i], i, expected);
  }
}

}  // namespace

StreamResult measure_stream(ThreadTeam& team, const StreamOptions& options) {
  Arrays x = allocate(options.array_bytes);
  // Each worker first touches the slice it will stream (STREAM's initialisation).
  timed_slices(team, x.n, [&](size_t i, size_t count) {
    std::fill_n(x.a + i, count, 0.0f);
    std::fill_n(x.b + i, count, 1.0f);
    std::fill_n(x.c + i, count, 2.0f);
  });
  double best_triad = std::numeric_limits<double>::infinity();
  double best_copy = std::numeric_limits<double>::infinity();
  for (int rep = 0; rep < std::max(options.repetitions, 1); ++rep) {
    best_triad = std::min(best_triad, timed_slices(team, x.n, [&](size_t i, size_t count) {
                            triad(x.a + i, x.b + i, x.c + i, count);
                          }));
    check(x, 1.0f + kScalar * 2.0f, "triad");
    best_copy = std::min(best_copy, timed_slices(team, x.n, [&](size_t i, size_t count) {
                           copy_nt(x.a + i, x.c + i, count);
                         }));
    check(x, 2.0f, "copy_nt");
  }
  const double bytes = static_cast<double>(x.n * sizeof(float));
  StreamResult result;
  result.triad_gbps = 3 * bytes / best_triad / 1e9;
  result.copy_nt_gbps = 2 * bytes / best_copy / 1e9;
  result.array_bytes = x.n * sizeof(float);
  result.threads = team.size();
  return result;
}

}  // namespace tilefuse::runtime
