// The GEMM/convolution engine shoot-out: every engine on the real-model suite's shapes, in one
// process, at the thread counts asked for, against the machine's register-only FMA peak.
//
//   gemm_shootout [--threads 1,2] [--quick] > results.jsonl
//   gemm_shootout --only SUBSTRING ...  only the shapes whose name contains SUBSTRING
//   gemm_shootout --shape BxMxNxK[w] ...  one product of that size instead (w: B is a weight, packed once)
//   gemm_shootout --list [--quick]      the shapes, one JSON object each (run_gemm.py times ONNX
//                                       Runtime on them)
//
// Engines (each with the weight packed or reordered once, outside the timed loop, as a
// compiled model would have it):
//   tilefuse  our sgemm (runtime/sgemm.h) on our thread team; convolutions through the same
//             LibraryCall the executor runs (im2col + sgemm, depthwise direct)
//   openblas  cblas_sgemm (Debian's build; it picks its kernels from the CPU model)
//   blis      bli_sgemm from Debian's libblis (OpenMP build), loaded with dlopen so its BLAS
//             symbols do not clash with OpenBLAS's
//   onednn    the matmul and convolution primitives of Debian's libdnnl 2.6 (OpenMP), weights
//             reordered to the layout the primitive asks for (format_tag::any); convolution
//             activations are given in the primitive's own layout, as a network-wide blocked
//             layout would give them
// Each line printed is one JSON object: shape, engine, threads, median ms, GFLOP/s, peak share.
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <cblas.h>
#include <immintrin.h>

#include <dnnl.hpp>

#include "ir/graph.h"
#include "runtime/cpu_isa.h"
#include "runtime/library_call.h"
#include "runtime/sgemm.h"
#include "runtime/thread_team.h"
#include "tiling/hardware_model.h"

namespace {

using Clock = std::chrono::steady_clock;
using tilefuse::runtime::ThreadTeam;

struct GemmShape {
  std::string name, family;
  int64_t batch, m, n, k;
  bool b_constant;  // a weight (packed once) or an activation (packed every run)
};

struct ConvShape {
  std::string name, family;
  int64_t c, h, w, maps, kernel, stride, pad, groups;
  int64_t out_h() const { return (h + 2 * pad - kernel) / stride + 1; }
  int64_t out_w() const { return (w + 2 * pad - kernel) / stride + 1; }
  double flops() const { return 2.0 * maps * out_h() * out_w() * (c / groups) * kernel * kernel; }
};

std::vector<GemmShape> gemm_shapes(bool quick) {
  std::vector<GemmShape> s;
  // BERT-base-sized layers: d 768, MLP 3072, 12 heads of 64; tokens = batch x sequence.
  for (auto [b, seq] : {std::pair{1, 128}, std::pair{8, 128}, std::pair{1, 512}, std::pair{8, 512}}) {
    if (quick && b * seq > 1024) continue;
    const std::string tag = "b" + std::to_string(b) + "s" + std::to_string(seq);
    const int64_t t = b * seq;
    s.push_back({"proj_" + tag, "projection", 1, t, 768, 768, true});
    s.push_back({"mlp_up_" + tag, "mlp", 1, t, 3072, 768, true});
    s.push_back({"mlp_down_" + tag, "mlp", 1, t, 768, 3072, true});
    s.push_back({"attn_qk_" + tag, "attention", 12 * b, seq, seq, 64, false});
    s.push_back({"attn_pv_" + tag, "attention", 12 * b, seq, 64, seq, false});
  }
  // Whisper's encoder as the real-model suite has it, two sequences: 2 x 6 heads of 64 over 1500 frames.
  if (!quick) {
    s.push_back({"attn_qk_whisper", "attention", 12, 1500, 1500, 64, false});
    s.push_back({"attn_pv_whisper", "attention", 12, 1500, 64, 1500, false});
  }
  s.push_back({"square_1024", "square", 1, 1024, 1024, 1024, true});
  s.push_back({"convnext_pw_56", "conv as matmul", 1, 3136, 384, 96, true});
  // ConvNeXt-Tiny's last stage: its MLP over 7 x 7 = 49 tokens, weights of 9 MiB read once.
  s.push_back({"convnext_mlp_up_7", "conv as matmul", 1, 49, 3072, 768, true});
  s.push_back({"convnext_mlp_down_7", "conv as matmul", 1, 49, 768, 3072, true});
  return s;
}

std::vector<ConvShape> conv_shapes(bool quick) {
  std::vector<ConvShape> s = {
      {"resnet_stem_7x7s2", "resnet50", 3, 224, 224, 64, 7, 2, 3, 1},
      {"resnet_3x3_64_56", "resnet50", 64, 56, 56, 64, 3, 1, 1, 1},
      {"resnet_1x1_64to256_56", "resnet50", 64, 56, 56, 256, 1, 1, 0, 1},
      {"resnet_1x1_256to64_56", "resnet50", 256, 56, 56, 64, 1, 1, 0, 1},
      {"resnet_3x3_128_28", "resnet50", 128, 28, 28, 128, 3, 1, 1, 1},
      {"resnet_3x3_256_14", "resnet50", 256, 14, 14, 256, 3, 1, 1, 1},
      {"resnet_3x3_512_7", "resnet50", 512, 7, 7, 512, 3, 1, 1, 1},
      {"resnet_1x1s2_256to512_56", "resnet50", 256, 56, 56, 512, 1, 2, 0, 1},
      {"resnet_3x3s2_128_56", "resnet50", 128, 56, 56, 128, 3, 2, 1, 1},
      {"resnet_3x3s2_256_28", "resnet50", 256, 28, 28, 256, 3, 2, 1, 1},
      {"resnet_3x3s2_512_14", "resnet50", 512, 14, 14, 512, 3, 2, 1, 1},
      {"resnet_1x1_2048to512_7", "resnet50", 2048, 7, 7, 512, 1, 1, 0, 1},
      {"resnet_1x1_1024to256_14", "resnet50", 1024, 14, 14, 256, 1, 1, 0, 1},
      {"resnet_1x1_256to1024_14", "resnet50", 256, 14, 14, 1024, 1, 1, 0, 1},
      {"mobilenet_1x1_16to64_112", "mobilenet_v3", 16, 112, 112, 64, 1, 1, 0, 1},
      {"mobilenet_1x1_16to16_112", "mobilenet_v3", 16, 112, 112, 16, 1, 1, 0, 1},
      {"mobilenet_dw3x3_16_112", "mobilenet_v3", 16, 112, 112, 16, 3, 1, 1, 16},
      {"mobilenet_1x1_40to120_28", "mobilenet_v3", 40, 28, 28, 120, 1, 1, 0, 1},
      {"mobilenet_1x1_160to960_7", "mobilenet_v3", 160, 7, 7, 960, 1, 1, 0, 1},
      {"mobilenet_dw3x3_64_112s2", "mobilenet_v3", 64, 112, 112, 64, 3, 2, 1, 64},
      {"mobilenet_dw5x5_72_56s2", "mobilenet_v3", 72, 56, 56, 72, 5, 2, 2, 72},
      {"mobilenet_dw5x5_120_28", "mobilenet_v3", 120, 28, 28, 120, 5, 1, 2, 120},
      {"convnext_stem_4x4s4", "convnext_tiny", 3, 224, 224, 96, 4, 4, 0, 1},
      {"convnext_dw7x7_96_56", "convnext_tiny", 96, 56, 56, 96, 7, 1, 3, 96},
      {"convnext_dw7x7_384_14", "convnext_tiny", 384, 14, 14, 384, 7, 1, 3, 384},
  };
  if (quick) s.resize(4);
  return s;
}

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(((i * 2654435761u + seed * 97) % 1000) / 1000.0 - 0.5);
  return v;
}

// Median of at least `reps` timed calls, in ms: as many as fill 50 ms for a short shape, after
// warm-up calls that fill 20 ms (at least two). It first waits for the thread pools of the
// engine measured before to go to sleep: OpenBLAS's threads spin for about 2^28 cycles after a
// call and libgomp's (oneDNN) for a while too, and on two cores a spinning pool halves whatever
// runs next. The warm-up is timed rather than counted because after that wait the core's clock
// takes milliseconds to come back up: two calls of a 0.1 ms convolution measured it at half
// speed.
double median_ms(const std::function<void()>& fn, int reps) {
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto elapsed_ms = [](Clock::time_point since) {
    return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
  };
  const auto warm = Clock::now();
  for (int i = 0; i < 2 || elapsed_ms(warm) < 20.0; ++i) fn();
  std::vector<double> t;
  const auto timed = Clock::now();
  while (static_cast<int>(t.size()) < reps || elapsed_ms(timed) < 50.0) {
    const auto start = Clock::now();
    fn();
    t.push_back(elapsed_ms(start));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The blocking the executor uses on this machine.
tilefuse::runtime::GemmBlocking machine_blocking() {
  const tilefuse::tiling::HardwareModel hw = tilefuse::tiling::detect_hardware();
  return tilefuse::runtime::default_blocking(hw.l1d_bytes, hw.l2_bytes);
}

// ---- the machine's peak: independent FMA chains on registers only ----

__attribute__((target("avx512f,fma"), noinline)) float fma_chains_avx512(int64_t iters) {
  __m512 acc[24];
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 1e-9f);
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < 24; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
  }
  __m512 s = acc[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

// The same on AVX2's 16 registers: 12 chains of 8 lanes.
__attribute__((target("avx2,fma"), noinline)) float fma_chains_avx2(int64_t iters) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i) * 1e-9f);
  const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
  }
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, s);
  return lanes[0] + lanes[7];
}

// GFLOP/s of `threads` threads each running FMA chains, best of 5: AVX-512's where the CPU has
// it, else AVX2's.
double fma_peak(ThreadTeam& team) {
  const int64_t iters = 4'000'000;
  const bool avx512 = tilefuse::runtime::vector_isa() == tilefuse::runtime::VectorIsa::avx512;
  const double flops_per_iter = avx512 ? 24.0 * 32.0 : 12.0 * 16.0;
  volatile float sink = 0;
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = Clock::now();
    team.run(team.size(), [&](int, int64_t, int64_t) {
      sink = sink + (avx512 ? fma_chains_avx512(iters) : fma_chains_avx2(iters));
    });
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::max(best, iters * flops_per_iter * team.size() / s / 1e9);
  }
  return best;
}

// ---- BLIS through dlopen ----

struct Blis {
  using Sgemm = void (*)(int, int, int64_t, int64_t, int64_t, const float*, const float*, int64_t, int64_t,
                         const float*, int64_t, int64_t, const float*, float*, int64_t, int64_t);
  using SetThreads = void (*)(int64_t);
  Sgemm sgemm = nullptr;
  SetThreads set_threads = nullptr;
  Blis() {
    void* lib = dlopen("/usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return;
    sgemm = reinterpret_cast<Sgemm>(dlsym(lib, "bli_sgemm"));
    set_threads = reinterpret_cast<SetThreads>(dlsym(lib, "bli_thread_set_num_threads"));
  }
  bool ok() const { return sgemm != nullptr && set_threads != nullptr; }
};

// ---- one engine on one GEMM shape ----

struct GemmData {
  std::vector<float> a, b, c;
  explicit GemmData(const GemmShape& s)
      : a(random_floats(s.batch * s.m * s.k, 1)),
        b(random_floats((s.b_constant ? 1 : s.batch) * s.k * s.n, 2)),
        c(static_cast<size_t>(s.batch * s.m * s.n)) {}
  const float* b_of(const GemmShape& s, int64_t i) const { return b.data() + (s.b_constant ? 0 : i * s.k * s.n); }
};

std::function<void()> tilefuse_gemm(const GemmShape& s, GemmData& d, ThreadTeam& team,
                                    std::vector<tilefuse::runtime::PackedOperand>& packed) {
  using namespace tilefuse::runtime;
  if (s.b_constant) packed.push_back(PackedOperand::pack_b({d.b.data(), s.n, 1}, s.k, s.n));
  auto problems = std::make_shared<std::vector<GemmProblem>>();
  for (int64_t i = 0; i < s.batch; ++i) {
    GemmProblem p;
    p.m = s.m, p.n = s.n, p.k = s.k;
    p.a.view = {d.a.data() + i * s.m * s.k, s.k, 1};
    p.b.view = {d.b_of(s, i), s.n, 1};
    if (s.b_constant) p.b.packed = &packed.back();
    p.c = d.c.data() + i * s.m * s.n, p.ldc = s.n;
    problems->push_back(p);
  }
  const GemmBlocking blocking = machine_blocking();
  return [problems, blocking, &team] { sgemm(team, *problems, blocking); };
}

std::function<void()> openblas_gemm(const GemmShape& s, GemmData& d) {
  return [&s, &d] {
    for (int64_t i = 0; i < s.batch; ++i) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, d.a.data() + i * s.m * s.k, s.k,
                  d.b_of(s, i), s.n, 0.0f, d.c.data() + i * s.m * s.n, s.n);
    }
  };
}

std::function<void()> blis_gemm(const GemmShape& s, GemmData& d, const Blis& blis) {
  return [&s, &d, &blis] {
    const float one = 1.0f, zero = 0.0f;
    for (int64_t i = 0; i < s.batch; ++i) {
      blis.sgemm(0, 0, s.m, s.n, s.k, &one, d.a.data() + i * s.m * s.k, s.k, 1, d.b_of(s, i), s.n, 1, &zero,
                 d.c.data() + i * s.m * s.n, s.n, 1);
    }
  };
}

// oneDNN's matmul: weights in the layout it chooses (reordered once), batch as a leading dim.
struct OneDnnMatmul {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul prim;
  dnnl::memory a, b, c;

  OneDnnMatmul(const GemmShape& s, GemmData& d) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const dnnl::memory::dims ad = {s.batch, s.m, s.k}, cd = {s.batch, s.m, s.n};
    const dnnl::memory::dims bd = {s.b_constant ? 1 : s.batch, s.k, s.n};
    dnnl::memory::desc a_md(ad, dt::f32, tag::abc), c_md(cd, dt::f32, tag::abc);
    dnnl::memory::desc b_md(bd, dt::f32, s.b_constant ? tag::any : tag::abc);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), engine);
    prim = dnnl::matmul(pd);
    a = dnnl::memory(a_md, engine, d.a.data());
    c = dnnl::memory(c_md, engine, d.c.data());
    dnnl::memory plain(dnnl::memory::desc(bd, dt::f32, tag::abc), engine, d.b.data());
    if (pd.weights_desc() == plain.get_desc()) {
      b = plain;
    } else {
      b = dnnl::memory(pd.weights_desc(), engine);
      dnnl::reorder(plain, b).execute(stream, plain, b);
      stream.wait();
    }
  }
  void operator()() {
    prim.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    stream.wait();
  }
};

// ---- convolutions ----

// A Conv node for the executor's LibraryCall, with a constant weight and bias.
struct ConvGraph {
  tilefuse::Graph g;
  tilefuse::Node* node = nullptr;
  explicit ConvGraph(const ConvShape& s) {
    using namespace tilefuse;
    Tensor w(DType::f32, {s.maps, s.c / s.groups, s.kernel, s.kernel});
    Tensor bias(DType::f32, {s.maps});
    for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = static_cast<float>((i % 7) * 0.01);
    for (int64_t i = 0; i < s.maps; ++i) bias.data<float>()[i] = 0.1f;
    std::vector<Value*> in = {g.add_input("x", DType::f32, shape_of({1, s.c, s.h, s.w})), g.add_constant("w", w),
                              g.add_constant("b", bias)};
    AttributeMap attrs = {{"kernel_shape", std::vector<int64_t>{s.kernel, s.kernel}},
                          {"strides", std::vector<int64_t>{s.stride, s.stride}},
                          {"pads", std::vector<int64_t>{s.pad, s.pad, s.pad, s.pad}},
                          {"group", s.groups}};
    node = g.add_node("Conv", "conv", in, {"y"}, attrs);
    g.infer_shapes();
  }
};

struct OneDnnConv {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::convolution_forward prim;
  dnnl::memory src, weights, bias, dst;

  explicit OneDnnConv(const ConvShape& s) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const dnnl::memory::dims src_d = {1, s.c, s.h, s.w}, dst_d = {1, s.maps, s.out_h(), s.out_w()};
    const dnnl::memory::dims w_d = s.groups == 1 ? dnnl::memory::dims{s.maps, s.c, s.kernel, s.kernel}
                                                 : dnnl::memory::dims{s.groups, s.maps / s.groups, s.c / s.groups,
                                                                      s.kernel, s.kernel};
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        dnnl::memory::desc(src_d, dt::f32, tag::any), dnnl::memory::desc(w_d, dt::f32, tag::any),
        dnnl::memory::desc({s.maps}, dt::f32, tag::a), dnnl::memory::desc(dst_d, dt::f32, tag::any),
        {s.stride, s.stride}, {s.pad, s.pad}, {s.pad, s.pad});
    dnnl::convolution_forward::primitive_desc pd(desc, engine);
    prim = dnnl::convolution_forward(pd);
    src = filled(pd.src_desc());
    weights = filled(pd.weights_desc());
    bias = filled(pd.bias_desc());
    dst = dnnl::memory(pd.dst_desc(), engine);
  }
  dnnl::memory filled(const dnnl::memory::desc& md) {
    dnnl::memory m(md, engine);
    auto* p = static_cast<float*>(m.get_data_handle());
    for (size_t i = 0; i < md.get_size() / sizeof(float); ++i) p[i] = static_cast<float>((i % 7) * 0.01);
    return m;
  }
  void operator()() {
    prim.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}});
    stream.wait();
  }
};

// im2col + cblas_sgemm, as the executor ran convolutions before its own engine.
std::function<void()> openblas_conv(const ConvShape& s, std::vector<float>& x, std::vector<float>& w,
                                    std::vector<float>& cols, std::vector<float>& y) {
  return [&s, &x, &w, &cols, &y] {
    const int64_t oh = s.out_h(), ow = s.out_w(), gc = s.c / s.groups, gm = s.maps / s.groups;
    const int64_t rows = gc * s.kernel * s.kernel;
    for (int64_t g = 0; g < s.groups; ++g) {
      for (int64_t c = 0; c < gc; ++c) {
        for (int64_t i = 0; i < s.kernel; ++i) {
          for (int64_t j = 0; j < s.kernel; ++j) {
            float* row = cols.data() + ((c * s.kernel + i) * s.kernel + j) * oh * ow;
            for (int64_t oy = 0; oy < oh; ++oy) {
              for (int64_t ox = 0; ox < ow; ++ox) {
                const int64_t yy = oy * s.stride - s.pad + i, xx = ox * s.stride - s.pad + j;
                row[oy * ow + ox] = yy < 0 || yy >= s.h || xx < 0 || xx >= s.w
                                        ? 0.0f
                                        : x[((g * gc + c) * s.h + yy) * s.w + xx];
              }
            }
          }
        }
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, gm, oh * ow, rows, 1.0f, w.data() + g * gm * rows, rows,
                  cols.data(), oh * ow, 0.0f, y.data() + g * gm * oh * ow, oh * ow);
    }
  };
}

void print(const std::string& kind, const std::string& name, const std::string& family, const std::string& engine,
           int threads, double ms, double flops, double peak) {
  const double gflops = flops / (ms * 1e6);
  std::printf(
      "{\"kind\":\"%s\",\"shape\":\"%s\",\"family\":\"%s\",\"engine\":\"%s\",\"threads\":%d,\"ms\":%.4f,"
      "\"gflops\":%.2f,\"peak_gflops\":%.2f,\"peak_share\":%.4f}\n",
      kind.c_str(), name.c_str(), family.c_str(), engine.c_str(), threads, ms, gflops, peak, gflops / peak);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> thread_counts = {1, 2};
  bool quick = false, list = false;
  std::string only;
  std::vector<GemmShape> ad_hoc;  // --shape: products timed instead of the suite's
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--list") == 0) {
      list = true;
    } else if (std::strcmp(argv[i], "--shape") == 0 && i + 1 < argc) {
      GemmShape g{"", "ad hoc", 0, 0, 0, 0, false};
      char weight = '\0';
      const int read = std::sscanf(argv[++i], "%ldx%ldx%ldx%ld%c", &g.batch, &g.m, &g.n, &g.k, &weight);
      if (read < 4 || (read == 5 && weight != 'w') || g.batch < 1 || g.m < 1 || g.n < 1 || g.k < 1) {
        std::fprintf(stderr, "gemm_shootout: --shape wants BATCHxMxNxK[w] (positive; w: B is a weight), got '%s'\n",
                     argv[i]);
        return 2;
      }
      g.b_constant = weight == 'w';
      g.name = argv[i];
      ad_hoc.push_back(g);
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      thread_counts.clear();
      for (const char* p = argv[++i]; *p != '\0';) {
        thread_counts.push_back(std::atoi(p));
        while (*p != '\0' && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    } else {
      std::fprintf(stderr, "usage: gemm_shootout [--threads 1,2] [--quick] [--only SUBSTRING | --shape BxMxNxK[w]] [--list]\n");
      return 2;
    }
  }
  if (list) {
    for (const GemmShape& s : gemm_shapes(quick)) {
      std::printf("{\"kind\":\"gemm\",\"shape\":\"%s\",\"family\":\"%s\",\"batch\":%ld,\"m\":%ld,\"n\":%ld,"
                  "\"k\":%ld,\"b_constant\":%s,\"flops\":%.0f}\n",
                  s.name.c_str(), s.family.c_str(), s.batch, s.m, s.n, s.k, s.b_constant ? "true" : "false",
                  2.0 * s.batch * s.m * s.n * s.k);
    }
    for (const ConvShape& s : conv_shapes(quick)) {
      std::printf("{\"kind\":\"conv\",\"shape\":\"%s\",\"family\":\"%s\",\"c\":%ld,\"h\":%ld,\"w\":%ld,"
                  "\"maps\":%ld,\"kernel\":%ld,\"stride\":%ld,\"pad\":%ld,\"groups\":%ld,\"flops\":%.0f}\n",
                  s.name.c_str(), s.family.c_str(), s.c, s.h, s.w, s.maps, s.kernel, s.stride, s.pad, s.groups,
                  s.flops());
    }
    return 0;
  }
  // Without AVX2 tilefuse's own GEMM does not run: the executor multiplies with OpenBLAS (timed
  // as such), and "tilefuse" is timed on the convolutions only, as the executor runs them.
  const bool own_gemm = tilefuse::runtime::microkernel_supported();
  if (!own_gemm) std::fprintf(stderr, "gemm_shootout: this CPU has no AVX2; tilefuse's own GEMM is not timed\n");
  const Blis blis;
  const int reps = quick ? 5 : 15;
  for (int threads : thread_counts) {
    ThreadTeam team(threads);
    openblas_set_num_threads(threads);
    omp_set_num_threads(threads);
    if (blis.ok()) blis.set_threads(threads);
    const double peak = fma_peak(team);
    print("peak", "fma_registers", "peak", "fma", threads, 1.0, peak * 1e6, peak);
    // Ours first, over every shape, before any other engine at this thread count has started a
    // pool: a pool that still spins (OpenMP's, OpenBLAS's) took up to half of the two cores in
    // the round measured engine by engine per shape.
    for (bool ours : {true, false}) {
      for (const GemmShape& s : ad_hoc.empty() ? gemm_shapes(quick) : ad_hoc) {
        if (s.name.find(only) == std::string::npos) continue;
        const double flops = 2.0 * s.batch * s.m * s.n * s.k;
        GemmData d(s);
        if (ours && !own_gemm) continue;
        if (ours) {
          std::vector<tilefuse::runtime::PackedOperand> packed;
          print("gemm", s.name, s.family, "tilefuse", threads, median_ms(tilefuse_gemm(s, d, team, packed), reps), flops,
                peak);
          continue;
        }
        print("gemm", s.name, s.family, "openblas", threads, median_ms(openblas_gemm(s, d), reps), flops, peak);
        if (blis.ok()) print("gemm", s.name, s.family, "blis", threads, median_ms(blis_gemm(s, d, blis), reps), flops, peak);
        OneDnnMatmul dnnl_mm(s, d);
        print("gemm", s.name, s.family, "onednn", threads, median_ms([&] { dnnl_mm(); }, reps), flops, peak);
      }
      for (const ConvShape& s : conv_shapes(quick)) {
        if (!ad_hoc.empty() || s.name.find(only) == std::string::npos) continue;
        if (ours) {
          ConvGraph cg(s);
          auto call = tilefuse::runtime::prepare_library_call(*cg.node, machine_blocking());
          std::vector<tilefuse::Tensor> ins = {tilefuse::Tensor(tilefuse::DType::f32, {1, s.c, s.h, s.w}),
                                               *cg.node->input(1)->constant, *cg.node->input(2)->constant};
          std::vector<tilefuse::Tensor> out = {
              tilefuse::Tensor(tilefuse::DType::f32, {1, s.maps, s.out_h(), s.out_w()})};
          print("conv", s.name, s.family, "tilefuse", threads, median_ms([&] { call->run(team, ins, out); }, reps),
                s.flops(), peak);
          continue;
        }
        std::vector<float> x = random_floats(s.c * s.h * s.w, 3),
                           w = random_floats(s.maps * (s.c / s.groups) * s.kernel * s.kernel, 4);
        std::vector<float> cols(static_cast<size_t>((s.c / s.groups) * s.kernel * s.kernel * s.out_h() * s.out_w()));
        std::vector<float> y(static_cast<size_t>(s.maps * s.out_h() * s.out_w()));
        print("conv", s.name, s.family, "openblas", threads, median_ms(openblas_conv(s, x, w, cols, y), reps),
              s.flops(), peak);
        OneDnnConv dnnl_conv(s);
        print("conv", s.name, s.family, "onednn", threads, median_ms([&] { dnnl_conv(); }, reps), s.flops(), peak);
      }
    }
  }
  return 0;
}
