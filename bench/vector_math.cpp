// Throughput of the generated kernels' vector math (src/codegen/support/tilefuse_vector_math.h)
// next to what kernels used before it (xsimd 8.1's functions; erf as tilefuse_kernel.h had it),
// on inputs in L1 so that only compute is measured. Built like a generated kernel, by hand:
//   g++ -std=c++20 -O3 -march=native -Isrc -Iinclude bench/vector_math.cpp -o build/vector_math
// Prints ns of thread CPU time per vector (kLanes floats) for each function, old and new, and
// their ratio. With SLEEF (Debian's libsleef-dev) on an AVX2 or AVX-512 machine, a second table sets
// tilefuse's functions against SLEEF's 1.0-ulp (u10) and 3.5-ulp (u35) vector functions:
//   g++ -std=c++20 -O3 -march=native -Isrc -Iinclude -DTF_WITH_SLEEF bench/vector_math.cpp -lsleef -o build/vector_math
#include <time.h>

#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <random>
#include <vector>

#include "codegen/support/tilefuse_kernel.h"
#if defined(TF_WITH_SLEEF)
#include <sleef.h>
// SLEEF's function for one vector of this build: Sleef_expf16_u10 on AVX-512, Sleef_expf8_u10 on AVX2.
#if defined(__AVX512F__)
#define SLEEF_F(fn, bound) Sleef_##fn##f16_##bound
#elif defined(__AVX2__)
#define SLEEF_F(fn, bound) Sleef_##fn##f8_##bound
#else
#error "the SLEEF comparison needs AVX2 or AVX-512"
#endif
#endif

namespace {

using tf::VF;

// xsimd's erf without its branches: tilefuse_kernel.h's erf before tilefuse_vector_math.h.
VF xsimd_erf_branch_free(VF a) {
  using kernel = xsimd::kernel::detail::erf_kernel<VF>;
  const VF x = xsimd::abs(a);
  const VF small = a * kernel::erf1(x * x);
  const VF z = x / (VF(1.0f) + x) - VF(0.4f);
  const VF large = VF(1.0f) - xsimd::exp(-x * x) * kernel::erfc2(z);
  const VF r = xsimd::select(x < VF(2.0f / 3.0f), small, xsimd::select(a < VF(0.0f), -large, large));
  return xsimd::select(xsimd::isinf(a), xsimd::sign(a), r);
}

// The 12-op elementwise chain of bench/make_bench_models.py on one vector, with its row and
// column operands fixed to typical values, over the given math functions.
template <typename Exp, typename Log, typename Tanh, typename Sigmoid>
VF chain(VF x, Exp exp, Log log, Tanh tanh, Sigmoid sigmoid) {
  VF t = sigmoid(x * VF(0.75f) + VF(0.1f)) - VF(0.5f);
  t = tf::max(tanh(t * x), VF(-0.5f));
  return log(exp(t) / VF(1.5f) + VF(1.0f)) * VF(0.9f);
}

// CPU time of this thread in ns: unlike wall time, it does not count time-slices given to other
// processes on a shared machine.
double thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

// ns per vector of fn over xs, best of several timed passes.
template <typename Fn> double ns_per_vector(const std::vector<float>& xs, Fn fn) {
  constexpr int kPasses = 7, kRepeats = 2000;
  VF sink(0.0f);
  double best = 1e30;
  for (int pass = 0; pass < kPasses; ++pass) {
    const double start = thread_cpu_ns();
    for (int rep = 0; rep < kRepeats; ++rep) {
      for (size_t i = 0; i < xs.size(); i += tf::kLanes) sink += fn(VF::load_unaligned(&xs[i]));
    }
    best = std::min(best, (thread_cpu_ns() - start) / (double(kRepeats) * double(xs.size() / tf::kLanes)));
  }
  alignas(64) float out[tf::kLanes];
  sink.store_aligned(out);
  if (out[0] == 12345.0f) std::puts("");  // keeps the work observable
  return best;
}

std::vector<float> uniform(float lo, float hi) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> xs(4096);  // 16 KiB: stays in L1
  for (float& x : xs) x = dist(rng);
  return xs;
}

template <typename Old, typename New> void report(const char* name, const std::vector<float>& xs, Old old_fn, New new_fn) {
  const double old_ns = ns_per_vector(xs, old_fn), new_ns = ns_per_vector(xs, new_fn);
  std::printf("%-11s %9.2f %10.2f %8.2fx\n", name, old_ns, new_ns, old_ns / new_ns);
}

}  // namespace

int main() {
  std::printf("%lld lanes; ns per vector, best of 7 passes over 4096 floats in L1\n", static_cast<long long>(tf::kLanes));
  std::printf("%-11s %9s %10s %9s\n", "function", "xsimd", "tilefuse", "speedup");
  const std::vector<float> wide = uniform(-10.0f, 10.0f), positive = uniform(1e-3f, 100.0f), gelu = uniform(-4.0f, 4.0f);
  // |x| < 0.625 everywhere (tanh's polynomial range); [-1, 1) is how `tilefuse bench` fills inputs.
  const std::vector<float> small = uniform(-0.6f, 0.6f), unit = uniform(-1.0f, 1.0f);
  report("exp", wide, [](VF x) { return xsimd::exp(x); }, [](VF x) { return tf::exp(x); });
  // A masked softmax row: every other element is -inf (results of 0 must not cost an assist).
  std::vector<float> masked = wide;
  for (size_t i = 0; i < masked.size(); i += 2) masked[i] = -std::numeric_limits<float>::infinity();
  report("exp masked", masked, [](VF x) { return xsimd::exp(x); }, [](VF x) { return tf::exp(x); });
  report("log", positive, [](VF x) { return xsimd::log(x); }, [](VF x) { return tf::log(x); });
  report("tanh", wide, [](VF x) { return xsimd::tanh(x); }, [](VF x) { return tf::tanh(x); });
  report("tanh small", small, [](VF x) { return xsimd::tanh(x); }, [](VF x) { return tf::tanh(x); });
  report("sigmoid", wide, [](VF x) { return VF(1.0f) / (VF(1.0f) + xsimd::exp(-x)); }, [](VF x) { return tf::sigmoid(x); });
  report("erf", gelu, xsimd_erf_branch_free, [](VF x) { return tf::erf(x); });
  report("divide", wide, [](VF x) { return x / VF(1.5f); }, [](VF x) { return x * VF(1.0f / 1.5f); });
  auto old_chain = [](VF x) {
    return chain(x, [](VF v) { return xsimd::exp(v); }, [](VF v) { return xsimd::log(v); },
                 [](VF v) { return xsimd::tanh(v); }, [](VF v) { return VF(1.0f) / (VF(1.0f) + xsimd::exp(-v)); });
  };
  auto new_chain = [](VF x) {
    return chain(x, [](VF v) { return tf::exp(v); }, [](VF v) { return tf::log(v); }, [](VF v) { return tf::tanh(v); },
                 [](VF v) { return tf::sigmoid(v); });
  };
  report("chain", unit, old_chain, new_chain);
#if defined(TF_WITH_SLEEF)
  std::printf("\n%-11s %9s %10s %10s\n", "function", "tilefuse", "sleef u10", "sleef u35");
  auto versus = [](const char* name, const std::vector<float>& xs, auto own, auto u10, auto u35) {
    std::printf("%-11s %9.2f %10.2f %10s\n", name, ns_per_vector(xs, own), ns_per_vector(xs, u10),
                u35 ? std::to_string(ns_per_vector(xs, *u35)).substr(0, 5).c_str() : "-");
  };
  using Fn = VF (*)(VF);
  const std::optional<Fn> none;
  versus("exp", wide, [](VF x) { return tf::exp(x); }, [](VF x) { return VF(SLEEF_F(exp, u10)(x)); }, none);
  versus("log", positive, [](VF x) { return tf::log(x); }, [](VF x) { return VF(SLEEF_F(log, u10)(x)); },
         std::optional<Fn>([](VF x) { return VF(SLEEF_F(log, u35)(x)); }));
  versus("tanh", unit, [](VF x) { return tf::tanh(x); }, [](VF x) { return VF(SLEEF_F(tanh, u10)(x)); },
         std::optional<Fn>([](VF x) { return VF(SLEEF_F(tanh, u35)(x)); }));
  versus("tanh wide", gelu, [](VF x) { return tf::tanh(x); }, [](VF x) { return VF(SLEEF_F(tanh, u10)(x)); },
         std::optional<Fn>([](VF x) { return VF(SLEEF_F(tanh, u35)(x)); }));
  versus("erf", gelu, [](VF x) { return tf::erf(x); }, [](VF x) { return VF(SLEEF_F(erf, u10)(x)); }, none);
  versus("sigmoid", wide, [](VF x) { return tf::sigmoid(x); },
         [](VF x) { return VF(1.0f) / (VF(1.0f) + VF(SLEEF_F(exp, u10)(-x))); }, none);
#endif
}
