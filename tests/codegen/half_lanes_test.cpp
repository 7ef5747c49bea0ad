// f16 and bf16 in vectors (tilefuse_half.h): widening, rounding to nearest even and
// non-temporal stores give bit for bit what the scalar conversions give, NaN payloads included,
// on every target generated kernels may be compiled for. The scalar conversions are checked
// against the reference interpreter's elsewhere (native_helpers_test.cpp); here they are the
// oracle.
#include <algorithm>
#include <bit>
#include <functional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codegen/half_lanes_eval.h"
#include "codegen/probe_library.h"
#include "codegen/probe_targets.h"

namespace {

using tf_test::HalfOp;
using tf_test::HalfType;
using Eval = std::function<void(int type, int op, const void* in, void* out, int64_t n)>;

// half_lanes_eval.h compiled as generated kernels are, for `march` (a later -march overrides
// the kernels' -march=native); its evaluator is empty where compiling or loading failed.
class Probe {
 public:
  explicit Probe(const std::string& march)
      : library_("#include \"codegen/half_lanes_eval.h\"\n"
                 "extern \"C\" void tf_half_eval(int type, int op, const void* in, void* out, int64_t n) {"
                 " tf_test::eval_half(type, op, in, out, n); }\n",
                 "-march=" + march) {}
  Eval eval() const {
    auto* fn = library_.symbol<void (*)(int, int, const void*, void*, int64_t)>("tf_half_eval");
    if (fn == nullptr) return nullptr;
    return [fn](int type, int op, const void* in, void* out, int64_t n) { fn(type, op, in, out, n); };
  }

 private:
  tf_test::ProbeLibrary library_;
};

// Every 16-bit pattern.
std::vector<uint16_t> all_halves() {
  std::vector<uint16_t> v(65536);
  for (uint32_t i = 0; i < v.size(); ++i) v[i] = uint16_t(i);
  return v;
}

// f32 values around every rounding decision: each of the 65536 high halves with low bits at and
// around both types' halfway points (bit 15 for bf16; bits 12-13 for a normal f16), then random
// bit patterns (NaNs with payloads, f16 subnormals, overflow).
std::vector<float> rounding_cases() {
  const uint32_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x2000, 0x2fff, 0x3000, 0x3001,
                           0x7fff, 0x8000, 0x8001, 0xdfff, 0xe000, 0xf000, 0xffff};
  std::vector<float> v;
  for (uint32_t high = 0; high < 65536; ++high) {
    for (uint32_t low : lows) v.push_back(std::bit_cast<float>(high << 16 | low));
  }
  std::mt19937 rng(20261205);
  for (int i = 0; i < (1 << 20); ++i) v.push_back(std::bit_cast<float>(uint32_t(rng())));
  return v;
}

template <typename T> uint16_t narrowed(float x) {
  T t;
  tf::from_f32(x, &t);
  return t.bits;
}

float widened(HalfType type, uint16_t bits) {
  return type == tf_test::kF16 ? tf::to_f32(tf::f16{bits}) : tf::to_f32(tf::bf16{bits});
}

uint16_t narrowed(HalfType type, float x) { return type == tf_test::kF16 ? narrowed<tf::f16>(x) : narrowed<tf::bf16>(x); }

const char* name(HalfType type) { return type == tf_test::kF16 ? "f16" : "bf16"; }

void expect_widening(const Eval& eval, HalfType type, const std::string& target) {
  const std::vector<uint16_t> in = all_halves();
  std::vector<float> out(in.size());
  eval(type, tf_test::kWiden, in.data(), out.data(), int64_t(in.size()));
  int wrong = 0;
  for (size_t i = 0; i < in.size() && wrong < 5; ++i) {
    const uint32_t want = std::bit_cast<uint32_t>(widened(type, in[i])), got = std::bit_cast<uint32_t>(out[i]);
    if (got != want) {
      ++wrong;
      ADD_FAILURE() << target << ": " << name(type) << " 0x" << std::hex << in[i] << " widens to 0x" << got
                    << ", the scalar conversion to 0x" << want;
    }
  }
}

// `offset` elements past a 64-byte boundary, so streamed stores meet aligned and unaligned rows.
void expect_narrowing(const Eval& eval, HalfType type, HalfOp op, int64_t offset, const std::string& target) {
  const std::vector<float> in = rounding_cases();
  std::vector<uint16_t> storage(in.size() + 64);
  const uintptr_t misaligned_bytes = reinterpret_cast<uintptr_t>(storage.data()) & 63;
  uint16_t* out = storage.data() + ((64 - misaligned_bytes) & 63) / 2 + offset;
  eval(type, op, in.data(), out, int64_t(in.size()));
  int wrong = 0;
  for (size_t i = 0; i < in.size() && wrong < 5; ++i) {
    const uint16_t want = narrowed(type, in[i]);
    if (out[i] != want) {
      ++wrong;
      ADD_FAILURE() << target << ": f32 0x" << std::hex << std::bit_cast<uint32_t>(in[i]) << " narrows to " << name(type)
                    << " 0x" << out[i] << ", the scalar conversion to 0x" << want << " (op " << int(op) << ")";
    }
  }
}

void expect_round_trip(const Eval& eval, HalfType type, const std::string& target) {
  const std::vector<float> in = rounding_cases();
  std::vector<float> out(in.size());
  eval(type, tf_test::kRoundTrip, in.data(), out.data(), int64_t(in.size()));
  int wrong = 0;
  for (size_t i = 0; i < in.size() && wrong < 5; ++i) {
    const uint32_t want = std::bit_cast<uint32_t>(widened(type, narrowed(type, in[i])));
    if (std::bit_cast<uint32_t>(out[i]) != want) {
      ++wrong;
      ADD_FAILURE() << target << ": f32 0x" << std::hex << std::bit_cast<uint32_t>(in[i]) << " rounded to " << name(type)
                    << " is 0x" << std::bit_cast<uint32_t>(out[i]) << ", the scalar conversions give 0x" << want;
    }
  }
}

void expect_all(const Eval& eval, const std::string& target) {
  for (HalfType type : {tf_test::kF16, tf_test::kBf16}) {
    expect_widening(eval, type, target);
    expect_narrowing(eval, type, tf_test::kNarrow, 3, target);
    expect_narrowing(eval, type, tf_test::kNarrowOutput, 1, target);
    expect_narrowing(eval, type, tf_test::kNarrowStreamed, 0, target);
    expect_narrowing(eval, type, tf_test::kNarrowStreamed, 5, target);
    expect_narrowing(eval, type, tf_test::kNarrowStreamed, 16, target);  // 32 bytes off: one vector, not a pair
    expect_round_trip(eval, type, target);
  }
}

TEST(HalfLanes, TestIsaConvertsAsTheScalarConversions) { expect_all(tf_test::eval_half, "test ISA"); }

class HalfLanesOnTarget : public testing::TestWithParam<tf_test::ProbeTarget> {};

TEST_P(HalfLanesOnTarget, ConvertsAsTheScalarConversions) {
  const tf_test::ProbeTarget target = GetParam();
  if (!target.runs) GTEST_SKIP() << "this CPU cannot run -march=" << target.march;
  const Probe probe(target.march);
  const Eval eval = probe.eval();
  ASSERT_TRUE(eval) << "could not compile or load the -march=" << target.march << " probe of half_lanes_eval.h";
  expect_all(eval, std::string("-march=") + target.march);
}

INSTANTIATE_TEST_SUITE_P(Targets, HalfLanesOnTarget, testing::ValuesIn(tf_test::probe_targets()), tf_test::probe_target_name);

}  // namespace
