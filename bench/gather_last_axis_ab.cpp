// torch.gather along the last axis: 128 picks at random from each of 4096 rows of 512 floats
// (memory_bound.py's gather_along_last, f32[8, 512, 512] with int64 indices [8, 512, 128]), one
// thread, the next row prefetched as runtime/strided_copy_call.cpp does. The scalar loop the
// runtime ran before against runtime/gather_last_axis_avx2.cpp; best of 50 passes each, in
// alternating rounds (a noisy host moves both alike).
//   ninja -C build gather_last_axis_ab && build/gather_last_axis_ab
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "runtime/cpu_isa.h"
#include "runtime/gather_last_axis.h"

namespace {

using tilefuse::runtime::VectorIsa;

bool scalar_picks(const uint32_t* row, const int64_t* indices, uint32_t* out, int64_t count, int64_t n) {
  bool ok = true;
  for (int64_t e = 0; e < count; ++e) {
    int64_t k = indices[e];
    k += k < 0 ? n : 0;
    const bool inside = k >= 0 && k < n;
    ok &= inside;
    out[e] = row[inside ? k : 0];
  }
  return ok;
}

template <typename Pick>
double best_ms(const std::vector<uint32_t>& data, const std::vector<int64_t>& indices, std::vector<uint32_t>& out,
               int64_t rows, int64_t n, int64_t picks, Pick pick) {
  double best = 1e30;
  for (int pass = 0; pass < 50; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    for (int64_t r = 0; r < rows; ++r) {
      if (r + 1 < rows) {
        const auto* next = reinterpret_cast<const char*>(data.data() + (r + 1) * n);
        for (int64_t b = 0; b < n * 4; b += 64) __builtin_prefetch(next + b, 0, 3);
      }
      pick(data.data() + r * n, indices.data() + r * picks, out.data() + r * picks, picks, n);
    }
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main() {
  if (tilefuse::runtime::vector_isa() == VectorIsa::scalar) {
    std::puts("this CPU has no AVX2: nothing to compare");
    return 0;
  }
  const int64_t rows = 8 * 512, n = 512, picks = 128;
  std::vector<uint32_t> data(rows * n), out(rows * picks);
  std::vector<int64_t> indices(rows * picks);
  std::mt19937 rng(1);
  for (auto& v : data) v = rng();
  for (auto& i : indices) i = static_cast<int64_t>(rng() % n);
  std::printf("round  scalar ms  avx2 ms\n");
  for (int round = 1; round <= 3; ++round) {
    const double scalar = best_ms(data, indices, out, rows, n, picks, scalar_picks);
    const double avx2 = best_ms(data, indices, out, rows, n, picks, [](auto... a) {
      return tilefuse::runtime::avx2::gather_last_axis(a...);
    });
    std::printf("%5d  %9.3f  %7.3f\n", round, scalar, avx2);
  }
}
