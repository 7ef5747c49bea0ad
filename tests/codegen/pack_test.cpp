// Packs (tilefuse_pack.h) and the kernel helpers for them (tilefuse_kernel.h): a pack must give
// exactly what its vectors give one at a time, and the compiler must keep what kernels ask of it.
#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "codegen/kernel_compiler.h"
#include "codegen/support/tilefuse_kernel.h"

namespace {

using tf::kLanes;
using tf::kPackVectors;
using tf::VF;
using tf::VP;

constexpr int64_t kPackFloats = kPackVectors * kLanes;

float first_lane(VF v) {
  alignas(64) float lanes[kLanes];
  v.store_aligned(lanes);
  return lanes[0];
}

std::vector<float> ramp(int64_t n, float start, float step) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + step * float(i);
  return v;
}

TEST(Pack, OperatorsGiveWhatEachVectorGives) {
  const std::vector<float> a = ramp(kPackFloats, -3.0f, 0.37f), b = ramp(kPackFloats, 1.5f, -0.11f);
  const VP pa = tf::load<VP>(a.data()), pb = tf::load<VP>(b.data());
  std::vector<float> packed(kPackFloats), single(kPackFloats);
  tf::store(packed.data(), tf::select(pa < pb, pa * pb + VP(1.0f), pa / pb - pb));
  for (int64_t k = 0; k < kPackVectors; ++k) {
    const VF x = tf::load<VF>(a.data() + k * kLanes), y = tf::load<VF>(b.data() + k * kLanes);
    tf::store(single.data() + k * kLanes, tf::select(x < y, x * y + VF(1.0f), x / y - y));
  }
  for (int64_t i = 0; i < kPackFloats; ++i) EXPECT_EQ(std::bit_cast<uint32_t>(packed[i]), std::bit_cast<uint32_t>(single[i])) << i;
}

TEST(Pack, FoldCombinesNeighboursFirst) {
  tf::PackF<4> p;
  for (int k = 0; k < 4; ++k) p.v[k] = VF(float(k + 1));
  // (v0 . v1) . (v2 . v3) with x . y = 10x + y: 12 . 34 = 154, where a left-to-right chain gives 1234.
  const VF r = tf::fold([](VF x, VF y) { return x * VF(10.0f) + y; }, p);
  EXPECT_EQ(first_lane(r), 154.0f);
  tf::PackF<3> q;
  for (int k = 0; k < 3; ++k) q.v[k] = VF(float(k + 1));
  EXPECT_EQ(first_lane(tf::fold([](VF x, VF y) { return x * VF(10.0f) + y; }, q)), 123.0f);  // (1 . 2) . 3
}

TEST(Pack, AccumulatorsTakePacks) {
  const std::vector<float> xs = ramp(3 * kPackFloats + kLanes + 3, -20.0f, 0.25f);
  tf::SumAcc sum;
  tf::MaxAcc max;
  tf::MinAcc min;
  tf::for_lanes_packed(int64_t(xs.size()), [&](auto tag, int64_t i) {
    using V = decltype(tag);
    const V v = tf::load<V>(xs.data() + i);
    sum.add(v);
    max.add(v);
    min.add(v);
  });
  double want = 0;
  for (float x : xs) want += x;
  EXPECT_FLOAT_EQ(sum.result(), float(want));
  EXPECT_EQ(max.result(), xs.back());
  EXPECT_EQ(min.result(), xs.front());
}

TEST(Pack, ExtremaPropagateNaNFromAnyVectorOfAPack) {
  for (int64_t at : {int64_t{0}, kLanes + 1, kPackFloats - 1}) {
    std::vector<float> xs = ramp(kPackFloats, 0.0f, 1.0f);
    xs[at] = std::numeric_limits<float>::quiet_NaN();
    tf::MaxAcc max;
    tf::MinAcc min;
    max.add(tf::load<VP>(xs.data()));
    min.add(tf::load<VP>(xs.data()));
    EXPECT_TRUE(std::isnan(max.result())) << "NaN at " << at;
    EXPECT_TRUE(std::isnan(min.result())) << "NaN at " << at;
  }
}

TEST(Pack, ForLanesPackedVisitsEveryElementOnceInOrder) {
  for (int64_t n : {int64_t{0}, int64_t{5}, kLanes, kPackFloats - 1, kPackFloats, 2 * kPackFloats + kLanes + 1}) {
    std::vector<int> visits(n, 0);
    std::vector<int64_t> starts;
    tf::for_lanes_packed(n, [&](auto tag, int64_t i) {
      using V = decltype(tag);
      const int64_t width = std::is_same_v<V, float> ? 1 : std::is_same_v<V, VF> ? kLanes : kPackFloats;
      starts.push_back(i);
      for (int64_t j = i; j < i + width; ++j) ++visits.at(j);
    });
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(visits[i], 1) << "n = " << n << ", i = " << i;
    for (size_t s = 1; s < starts.size(); ++s) EXPECT_LT(starts[s - 1], starts[s]);
  }
}

// Kernels rely on the software prefetches of a pack step being emitted. GCC 12 silently drops a
// __builtin_prefetch written in a generic lambda inside a template (what tf::prefetch once did),
// so the helper is compiled here as kernels are, and its assembly must hold a prefetch per vector.
TEST(Pack, PrefetchOfAPackIsEmittedByTheKernelCompiler) {
  const auto dir = std::filesystem::temp_directory_path() / ("tilefuse_pack_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string source = (dir / "prefetch.cpp").string(), assembly = (dir / "prefetch.s").string();
  std::ofstream(source) << "#include \"codegen/support/tilefuse_kernel.h\"\n"
                           "template <typename T> void touch(const T* p) { tf::prefetch<tf::VP>(p); }\n"
                           "extern \"C\" void probe(const float* p) { touch(p); }\n";
  const std::string command = tf_test::kernel_compiler_command("-S " + source + " -o " + assembly);
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::stringstream text;
  text << std::ifstream(assembly).rdbuf();
  int prefetches = 0;
  for (std::string line; std::getline(text, line);) prefetches += line.find("prefetcht0") != std::string::npos ? 1 : 0;
  EXPECT_EQ(prefetches, kPackVectors);
  std::filesystem::remove_all(dir);
}

}  // namespace
