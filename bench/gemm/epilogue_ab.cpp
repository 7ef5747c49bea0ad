// GELU after a GEMM, three ways on one shape, alternating call by call in one process (the only
// comparison this VM's noise allows): the plain GEMM, GELU in the micro-kernels' store
// (FusedMatMul's activation), and the GEMM followed by a separate GELU pass over C. Prints the
// fastest of each in ms. The weight is packed ahead of time and the bias added in the store, as
// in a transformer MLP.
//
//   cmake --build build --target gemm_epilogue_ab
//   build/gemm_epilogue_ab 3136 96 384 [threads] [calls]   (ConvNeXt-Tiny's first MLP product)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/epilogue.h"
#include "runtime/sgemm.h"
#include "runtime/thread_team.h"
#include "tiling/hardware_model.h"

using namespace tilefuse;

namespace {

std::vector<float> values(int64_t count, float scale) {
  std::vector<float> v(static_cast<size_t>(count));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 17) - 8);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: gemm_epilogue_ab M K N [threads] [calls]\n");
    return 2;
  }
  const int64_t m = std::atoll(argv[1]), k = std::atoll(argv[2]), n = std::atoll(argv[3]);
  const int threads = argc > 4 ? std::atoi(argv[4]) : 1, calls = argc > 5 ? std::atoi(argv[5]) : 200;
  if (m < 1 || k < 1 || n < 1 || threads < 1 || calls < 1) {
    std::fprintf(stderr, "gemm_epilogue_ab: M, K, N, threads and calls must be positive\n");
    return 2;
  }
  if (!runtime::microkernel_supported()) {
    std::fprintf(stderr, "gemm_epilogue_ab: this CPU has neither AVX-512 nor AVX2\n");
    return 2;
  }
  runtime::ThreadTeam team(threads);
  const tiling::HardwareModel hw = tiling::detect_hardware();
  const runtime::GemmBlocking blocking = runtime::default_blocking(hw.l1d_bytes, hw.l2_bytes);
  const std::vector<float> a = values(m * k, 0.05f), b = values(k * n, 0.05f), bias = values(n, 0.1f);
  std::vector<float> c(static_cast<size_t>(m * n));
  const runtime::PackedOperand packed = runtime::PackedOperand::pack_b({b.data(), n, 1}, k, n);
  const FusedActivation gelu{.form = FusedActivation::Form::gelu};
  runtime::GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.a.view = {a.data(), k, 1};
  p.b.packed = &packed;
  p.c = c.data(), p.ldc = n;
  p.col_bias = bias.data();
  double best[3] = {1e30, 1e30, 1e30};
  for (int call = 0; call < calls; ++call) {
    for (int way = 0; way < 3; ++way) {
      const auto start = std::chrono::steady_clock::now();
      p.activation = way == 1 ? &gelu : nullptr;
      runtime::sgemm(team, {&p, 1}, blocking);
      if (way == 2) {
        team.run(m * n, [&](int, int64_t first, int64_t end) { runtime::apply_epilogue(c.data() + first, nullptr, end - first, gelu); });
      }
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      best[way] = std::min(best[way], ms);
    }
  }
  std::printf("%lld x %lld x %lld, %d thread(s), best of %d: gemm %.3f ms, gelu in the store %.3f ms, gemm then a gelu pass %.3f ms\n",
              static_cast<long long>(m), static_cast<long long>(k), static_cast<long long>(n), threads, calls, best[0], best[1],
              best[2]);
}
