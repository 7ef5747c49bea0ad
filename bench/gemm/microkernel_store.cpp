// The GEMM micro-kernel alone, on one 12 x 32 tile whose operands and C stay in L1: ns per tile
// and GFLOP/s at depths of 16, 64 and 256 (a MobileNet expansion, a ResNet 1x1 layer, a deep
// product), for the stores a model asks for: plain, with a row bias and ReLU (a convolution's),
// and with alpha (attention's scale, the general store). Best of 5 rounds. At a depth of 16 the
// store is as costly as the products; what made sgemm_avx2.cpp store plain sub-tiles straight
// from their accumulators. Runs the ISA vector_isa() picks (TILEFUSE_MAX_CPU_ISA caps it).
// After `cmake --build build`:
//   g++ -std=c++20 -O2 -Isrc -Iinclude bench/gemm/microkernel_store.cpp build/libtilefuse_runtime.a \
//       build/libtilefuse_ir.a -o build/microkernel_store -lfmt -lpthread && build/microkernel_store
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "ir/ops/fused_activation.h"
#include "runtime/sgemm_microkernel.h"

namespace {

using tilefuse::FusedActivation;
using namespace tilefuse::runtime;

alignas(64) float a[kMR * 256], b[kNR * 256], c[kMR * kNR], bias[kMR];

double best_ns_per_tile(int64_t kc, const TileStore& store) {
  const int calls = static_cast<int>(4000000 / (kc + 16));
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) microkernel(kc, a, b, c, kNR, kMR, kNR, store, {});
    best = std::min(best, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / calls);
  }
  return best;
}

}  // namespace

int main() {
  std::fill(std::begin(a), std::end(a), 0.001f);
  std::fill(std::begin(b), std::end(b), 0.002f);
  std::fill(std::begin(bias), std::end(bias), 0.1f);
  const FusedActivation relu{.lo = 0.0f};
  TileStore plain, bias_relu, scaled;
  bias_relu.row_bias = bias, bias_relu.activation = &relu;
  scaled.alpha = 0.125f;
  std::printf("%-6s %-14s %10s %10s\n", "depth", "store", "ns/tile", "GFLOP/s");
  for (int64_t kc : {16, 64, 256}) {
    for (const auto& [name, store] : {std::pair{"plain", plain}, std::pair{"bias+relu", bias_relu}, std::pair{"alpha", scaled}}) {
      const double ns = best_ns_per_tile(kc, store);
      std::printf("%-6ld %-14s %10.1f %10.1f\n", kc, name, ns, 2.0 * kMR * kNR * kc / ns);
    }
  }
}
