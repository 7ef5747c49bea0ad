// Gathered and strided loads in vectors (tilefuse_kernel.h: one gather instruction where the
// target has one) read what a lane-by-lane read gives, on every target generated kernels may be
// compiled for: int32 and int64 indices, negative ones wrapped, every lane position of an index
// out of range (recorded, that lane reading the axis's first element), steps across lanes of 0,
// 1 and more, negative strides, stride 2's shuffled loads (never past the last element), offsets
// too wide for 32 bits.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "codegen/gather_lanes_eval.h"
#include "codegen/probe_library.h"
#include "codegen/probe_targets.h"

namespace {

using Gather = std::function<void(const float*, int64_t, const void*, int, int64_t, int64_t, float*, int64_t, int64_t*)>;
using Strided = std::function<void(const float*, int64_t, float*, int64_t)>;

struct Evals {
  Gather gather;
  Strided strided;
};

// gather_lanes_eval.h compiled as generated kernels are, for `march`.
class Probe {
 public:
  explicit Probe(const std::string& march)
      : library_("#include \"codegen/gather_lanes_eval.h\"\n"
                 "extern \"C\" void tf_gather(const float* d, int64_t s, const void* x, int b, int64_t st, int64_t e,"
                 " float* o, int64_t n, int64_t* err) { tf_test::eval_gather(d, s, x, b, st, e, o, n, err); }\n"
                 "extern \"C\" void tf_strided(const float* p, int64_t st, float* o, int64_t n) {"
                 " tf_test::eval_strided(p, st, o, n); }\n",
                 "-march=" + march) {}
  Evals evals() const {
    return {library_.symbol<void (*)(const float*, int64_t, const void*, int, int64_t, int64_t, float*, int64_t, int64_t*)>(
                "tf_gather"),
            library_.symbol<void (*)(const float*, int64_t, float*, int64_t)>("tf_strided")};
  }

 private:
  tf_test::ProbeLibrary library_;
};

constexpr int64_t kCount = 100;  // packs, vectors and a tail at every vector width

// Lane i reads data[i * step + wrapped(index[i]) * stride]; an index out of range reads
// data[i * step] and is the one error[] names.
template <typename I>
void expect_gathers(const Gather& gather, int64_t step, int64_t stride, int64_t extent, int64_t bad_lane,
                    const std::string& target) {
  std::mt19937 rng(static_cast<uint32_t>(step * 1000 + stride * 10 + bad_lane + 7));
  std::vector<I> index(kCount);
  for (I& k : index) k = static_cast<I>(std::uniform_int_distribution<int64_t>(-extent, extent - 1)(rng));
  if (bad_lane >= 0) index[static_cast<size_t>(bad_lane)] = static_cast<I>(bad_lane % 2 == 0 ? extent : -extent - 1);
  std::vector<float> data(static_cast<size_t>(kCount * step + extent * stride + 1));
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) + 0.25f;
  std::vector<float> out(kCount, -1.0f);
  int64_t error[2] = {0, 0};
  gather(data.data(), step, index.data(), sizeof(I), stride, extent, out.data(), kCount, error);
  const std::string where = target + ", " + std::to_string(sizeof(I) * 8) + "-bit indices, step " + std::to_string(step) +
                            ", stride " + std::to_string(stride) + ", extent " + std::to_string(extent);
  for (int64_t i = 0; i < kCount; ++i) {
    const int64_t k = index[static_cast<size_t>(i)], wrapped = k < 0 ? k + extent : k;
    const int64_t at = i * step + (i == bad_lane ? 0 : wrapped * stride);
    ASSERT_EQ(out[static_cast<size_t>(i)], data[static_cast<size_t>(at)]) << where << ": lane " << i << ", index " << k;
  }
  if (bad_lane >= 0) {
    EXPECT_EQ(error[0], 1) << where;
    EXPECT_EQ(error[1], index[static_cast<size_t>(bad_lane)]) << where;
  } else {
    EXPECT_EQ(error[0], 0) << where << ": an index in range was reported";
  }
}

// Pages of floats whose last element ends where an inaccessible page starts: a read past the
// end faults instead of passing unseen.
class GuardedFloats {
 public:
  explicit GuardedFloats(int64_t count) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    bytes_ = (static_cast<size_t>(count) * sizeof(float) + page - 1) / page * page + page;
    base_ = static_cast<char*>(mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    mprotect(base_ + bytes_ - page, page, PROT_NONE);
    data_ = reinterpret_cast<float*>(base_ + bytes_ - page) - count;
  }
  ~GuardedFloats() { munmap(base_, bytes_); }
  GuardedFloats(const GuardedFloats&) = delete;
  GuardedFloats& operator=(const GuardedFloats&) = delete;
  float* data() const { return data_; }

 private:
  char* base_ = nullptr;
  size_t bytes_ = 0;
  float* data_ = nullptr;
};

// Lane i reads p[i * stride], and nothing past the last element read (the data ends at a guard
// page: stride 2's overlapping loads stop at the last lane).
void expect_strided(const Strided& strided, int64_t stride, const std::string& target) {
  const int64_t span = (kCount - 1) * (stride < 0 ? -stride : stride) + 1;
  GuardedFloats guarded(span);
  float* data = guarded.data();
  for (int64_t i = 0; i < span; ++i) data[i] = static_cast<float>(i) - 0.5f;
  const float* first = stride < 0 ? data + span - 1 : data;
  std::vector<float> out(kCount);
  strided(first, stride, out.data(), kCount);
  for (int64_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(out[static_cast<size_t>(i)], first[i * stride]) << target << ", stride " << stride << ": lane " << i;
  }
}

void expect_all(const Evals& evals, const std::string& target) {
  for (int64_t step : {0, 1, 3}) {
    for (int64_t stride : {1, 5}) {
      for (int64_t bad_lane : {-1, 0, 7, 8, 15, 17, 64, 99}) {
        expect_gathers<int64_t>(evals.gather, step, stride, 37, bad_lane, target);
        expect_gathers<int32_t>(evals.gather, step, stride, 37, bad_lane, target);
      }
    }
  }
  expect_gathers<int32_t>(evals.gather, 1, 1, 1, -1, target);  // an axis of one element
  for (int64_t stride : {1, 2, 3, 16, -1, -2, -7}) expect_strided(evals.strided, stride, target);
}

// An axis whose offsets pass 2^31 elements: read lane by lane (a 32-bit offset would wrap). The
// data is never touched beyond its first elements: every index is 0 or the last one, at a
// stride that puts the last one past 2^31 elements, so only index 0 is read for real.
void expect_wide_offsets_read_lane_by_lane(const Gather& gather, const std::string& target) {
  std::vector<float> data(64);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  std::vector<int64_t> index(32, 0);
  std::vector<float> out(32);
  int64_t error[2] = {0, 0};
  gather(data.data(), 1, index.data(), 8, int64_t{1} << 31, 2, out.data(), 32, error);
  for (int64_t i = 0; i < 32; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], data[static_cast<size_t>(i)]) << target;
  EXPECT_EQ(error[0], 0) << target;
}

TEST(GatherLanes, TestIsaReadsAsLaneByLane) {
  expect_all({tf_test::eval_gather, tf_test::eval_strided}, "test ISA");
  expect_wide_offsets_read_lane_by_lane(tf_test::eval_gather, "test ISA");
}

class GatherLanesOnTarget : public testing::TestWithParam<tf_test::ProbeTarget> {};

TEST_P(GatherLanesOnTarget, ReadsAsLaneByLane) {
  const tf_test::ProbeTarget target = GetParam();
  if (!target.runs) GTEST_SKIP() << "this CPU cannot run -march=" << target.march;
  const Probe probe(target.march);
  const Evals evals = probe.evals();
  ASSERT_TRUE(evals.gather && evals.strided) << "could not compile or load the -march=" << target.march << " probe";
  expect_all(evals, std::string("-march=") + target.march);
  expect_wide_offsets_read_lane_by_lane(evals.gather, std::string("-march=") + target.march);
}

INSTANTIATE_TEST_SUITE_P(Targets, GatherLanesOnTarget, testing::ValuesIn(tf_test::probe_targets()), tf_test::probe_target_name);

}  // namespace
