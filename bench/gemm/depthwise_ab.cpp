// A depthwise convolution two ways, alternating call by call in one process (the only
// comparison this VM's noise allows): across channels (depthwise_across_channels.h, AVX-512)
// and plane by plane (depthwise_planes). Prints the fastest of each in ms, and which one
// depthwise_conv picks for the shape. With no arguments, the depthwise layers of MobileNetV3,
// ConvNeXt and EfficientNet-like shapes that chose the rule in depthwise_across_channels_suits.
//
//   cmake --build build --target depthwise_ab
//   build/depthwise_ab [CHANNELS SIZE KERNEL STRIDE] [calls]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/cpu_isa.h"
#include "runtime/depthwise_across_channels.h"
#include "runtime/depthwise_conv.h"

using namespace tilefuse::runtime;

namespace {

struct Layer {
  int64_t channels, size, kernel, stride;
};

// A square layer with SAME padding, one image.
ConvShape shape_of(const Layer& l) {
  const int64_t pad = l.kernel / 2, out = (l.size + 2 * pad - l.kernel) / l.stride + 1;
  return {1, l.channels, l.size, l.size, l.channels, l.channels, l.kernel, l.kernel, out, out,
          l.stride, l.stride, 1, 1, pad, pad};
}

void compare(const Layer& l, int calls) {
  const ConvShape s = shape_of(l);
  std::vector<float> x(static_cast<size_t>(l.channels * l.size * l.size)), y(static_cast<size_t>(l.channels * s.positions()));
  std::vector<float> w(static_cast<size_t>(l.channels * l.kernel * l.kernel)), bias(static_cast<size_t>(l.channels), 0.1f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.1f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.05f;
  double across = 1e30, planes = 1e30;
  for (int call = 0; call < calls; ++call) {
    for (int way = 0; way < 2; ++way) {
      const auto start = std::chrono::steady_clock::now();
      if (way == 0) {
        depthwise_across_channels(s, x.data(), w.data(), bias.data(), y.data(), 0, l.channels);
      } else {
        depthwise_planes(s, x.data(), w.data(), bias.data(), y.data(), 0, l.channels);
      }
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      (way == 0 ? across : planes) = std::min(way == 0 ? across : planes, ms);
    }
  }
  std::printf("%4ld x %3ld x %3ld, %ldx%ld stride %ld: across channels %.4f ms, planes %.4f ms (%.2fx); picked: %s\n",
              l.channels, l.size, l.size, l.kernel, l.kernel, l.stride, across, planes, planes / across,
              depthwise_across_channels_suits(s) ? "across" : "planes");
}

}  // namespace

int main(int argc, char** argv) {
  if (vector_isa() != VectorIsa::avx512) {
    std::fprintf(stderr, "depthwise_ab: the across-channels kernel needs AVX-512, which this CPU (or TILEFUSE_MAX_CPU_ISA) lacks\n");
    return 2;
  }
  if (argc >= 5) {
    const Layer l{std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4])};
    if (l.channels < 1 || l.size < 1 || l.kernel < 1 || l.stride < 1) {
      std::fprintf(stderr, "depthwise_ab: CHANNELS, SIZE, KERNEL and STRIDE must be positive\n");
      return 2;
    }
    compare(l, argc > 5 ? std::max(1, std::atoi(argv[5])) : 200);
    return 0;
  }
  const Layer layers[] = {{16, 112, 3, 1}, {64, 112, 3, 2}, {72, 56, 5, 2},  {72, 28, 3, 1},  {120, 28, 5, 1},
                          {240, 28, 3, 2}, {480, 14, 3, 1}, {672, 14, 3, 1}, {672, 7, 5, 1},  {960, 7, 5, 1},
                          {96, 56, 7, 1},  {192, 28, 7, 1}, {384, 14, 7, 1}, {768, 7, 7, 1},  {144, 56, 3, 1}};
  for (const Layer& l : layers) compare(l, argc > 1 ? std::max(1, std::atoi(argv[1])) : 200);
  return 0;
}
