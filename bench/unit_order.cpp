// Split attention heads, out[b, h, s, :] = tanh(x[b, s, h, :] * 0.125 + 1) over x f32[8, 512, 8, 64],
// with its units (rows of 64) numbered three ways, on 2 threads, caches flushed before each run:
// in the output's order (each row's load lands 2 KiB past the last, a new page every other row),
// the same with a software prefetch of the row 8 units ahead, and in the input's order (loads
// stream, stores scatter in 256-byte runs; ordinary and non-temporal stores). What made
// fusion/loop_nest.cpp number an elementwise kernel's units in its largest input's order.
// Built like a generated kernel, by hand:
//   g++ -std=c++20 -O3 -march=native -Isrc -Iinclude bench/unit_order.cpp -o build/unit_order -lpthread && build/unit_order
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "codegen/support/tilefuse_kernel.h"

namespace {

constexpr int64_t kUnits = 8 * 8 * 512, kRow = 64;

template <typename V> V head_math(V x) { return tf::tanh(x * V(0.125f) + V(1.0f)); }

// Units in the output's order (b, h, s); `prefetch_ahead` > 0 fetches that unit's input row early.
template <int prefetch_ahead>
void output_order(const float* x, float* y, int64_t u0, int64_t u1) {
  auto input_row = [&](int64_t unit) { return x + (unit / 4096 * 262144 + unit / 512 % 8 * 64 + unit % 512 * 512); };
  for (int64_t unit = u0; unit < u1; ++unit) {
    if constexpr (prefetch_ahead > 0) {
      const float* next = input_row(std::min(unit + prefetch_ahead, u1 - 1));
      for (int64_t k = 0; k < kRow; k += 16) __builtin_prefetch(next + k);
    }
    const float* in = input_row(unit);
    float* out = y + unit * kRow;
    tf::for_lanes_packed(kRow, [&](auto tag, int64_t i) { tf::store(out + i, head_math(tf::load<decltype(tag)>(in + i))); });
  }
}

// Units in the input's order (b, s, h).
template <bool stream_stores>
void input_order(const float* x, float* y, int64_t u0, int64_t u1) {
  for (int64_t unit = u0; unit < u1; ++unit) {
    const float* in = x + unit * kRow;
    float* out = y + (unit / 4096 * 262144 + unit % 8 * 32768 + unit / 8 % 512 * 64);
    tf::for_lanes_packed(kRow, [&](auto tag, int64_t i) {
      tf::store_output<stream_stores>(out + i, head_math(tf::load<decltype(tag)>(in + i)));
    });
  }
  if constexpr (stream_stores) tf::stream_fence();
}

// Best of 15 two-thread runs, ms, each after a pass over 64 MiB that evicts x and y.
template <typename Fn> double best_ms(Fn fn, std::vector<float>& x, std::vector<float>& y, std::vector<float>& flush) {
  double best = 1e30;
  for (int rep = 0; rep < 15; ++rep) {
    for (float& f : flush) f += 1.0f;
    const auto start = std::chrono::steady_clock::now();
    std::thread other([&] { fn(x.data(), y.data(), 0, kUnits / 2); });
    fn(x.data(), y.data(), kUnits / 2, kUnits);
    other.join();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main() {
  std::vector<float> x(kUnits * kRow, 0.5f), y(x.size()), flush(size_t{64} << 20 >> 2);
  std::printf("ms, best of 15: output order | + prefetch 8 ahead | input order | input order, non-temporal\n");
  for (int round = 0; round < 3; ++round) {
    std::printf("%.3f | %.3f | %.3f | %.3f\n", best_ms(output_order<0>, x, y, flush), best_ms(output_order<8>, x, y, flush),
                best_ms(input_order<false>, x, y, flush), best_ms(input_order<true>, x, y, flush));
  }
}
