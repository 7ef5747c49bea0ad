// One product as a convolution's 1x1 layer runs it: a weight packed ahead as A (M maps x K
// channels), B the input planes read as rows (K x N positions), a row bias and ReLU, and with
// RES=1 in the environment a residual of C's shape; on one worker (sgemm_rows), the machine's
// default blocking unless NB is given. Best of 7 rounds, in us and GFLOP/s. The shapes of
// bench/README.md's AVX2 section: 256 64 3136 (ResNet-50's first 64 -> 256 layer, 56 x 56),
// 72 24 3136 (MobileNetV3's 24 -> 72 expansion), 64 256 3136.
// After `cmake --build build`:
//   g++ -std=c++20 -O2 -Isrc -Iinclude bench/gemm/sgemm_rows.cpp build/libtilefuse_tiling.a \
//       build/libtilefuse_runtime.a build/libtilefuse_ir.a -o build/sgemm_rows -lfmt -lspdlog -lhwloc -lpthread
//   RES=1 build/sgemm_rows 256 64 3136
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/sgemm.h"
#include "tiling/hardware_model.h"

using namespace tilefuse::runtime;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: sgemm_rows M K N [NB]   (RES=1: with a residual)\n");
    return 2;
  }
  const int64_t m = std::atoll(argv[1]), k = std::atoll(argv[2]), n = std::atoll(argv[3]);
  const tilefuse::tiling::HardwareModel hw = tilefuse::tiling::detect_hardware();
  GemmBlocking blocking = default_blocking(hw.l1d_bytes, hw.l2_bytes);
  if (argc > 4) blocking.nb = std::atoll(argv[4]);
  std::vector<float> w(m * k, 0.01f), x(k * n, 0.5f), c(m * n), bias(m, 0.1f), residual(m * n, 0.25f);
  const PackedOperand a = PackedOperand::pack_a({w.data(), k, 1}, m, k);
  const tilefuse::FusedActivation relu{.lo = 0.0f};
  GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.a.view = {w.data(), k, 1}, p.a.packed = &a;
  p.b.view = {x.data(), n, 1};
  p.c = c.data(), p.ldc = n, p.row_bias = bias.data(), p.activation = &relu;
  if (std::getenv("RES") != nullptr) p.residual = residual.data();
  double best = 1e30;
  for (int round = 0; round < 7; ++round) {
    constexpr int kCalls = 40;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) sgemm_rows(p, 0, m, blocking);
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / kCalls);
  }
  std::printf("M %ld K %ld N %ld nb %ld%s: %.1f us, %.1f GFLOP/s\n", m, k, n, blocking.nb,
              p.residual != nullptr ? " residual" : "", best, 2.0 * m * n * k / best / 1e3);
}
