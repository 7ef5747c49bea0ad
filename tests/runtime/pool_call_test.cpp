// The direct MaxPool and AveragePool against the reference kernel: 1-D and 2-D, strides 1-3,
// asymmetric and SAME padding, dilations, ceil_mode, rows wide enough for the vector paths, and
// NaN inputs (which propagate), on 1 and 2 workers; AveragePool with and without
// count_include_pad, where ceil_mode reaches beyond the pads; MaxPool's Indices (ties, NaN, both
// storage orders), with and without its values read.
#include "runtime/pool_call.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/tensor_compare.h"
#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

struct PoolCase {
  std::string name;
  std::vector<int64_t> x;
  AttributeMap attrs;
  bool nans = false;
};

class MaxPoolCall : public ::testing::TestWithParam<PoolCase> {};
class AveragePoolCall : public ::testing::TestWithParam<PoolCase> {};

// The call's output for `op` and its reference's, on 1 and 2 workers.
void expect_pool_matches(const std::string& op, const PoolCase& c, double tolerance) {
  Graph g;
  Node* pool = g.add_node(op, "pool", {g.add_input("x", DType::f32, shape_of(c.x))}, {"y"}, c.attrs);
  g.infer_shapes();
  ASSERT_TRUE(pool_call_supports(*pool));
  Tensor x(DType::f32, c.x);
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.data<float>()[i] = c.nans && i % 17 == 3 ? std::numeric_limits<float>::quiet_NaN()
                                                : static_cast<float>(((i * 29) % 41) / 7.0 - 3.0);
  }
  Tensor expected = reference::evaluate_node(*pool, {x}).at(0);
  std::unique_ptr<LibraryCall> call = prepare_pool_call(*pool);
  for (int workers : {1, 2}) {
    ThreadTeam team(workers);
    std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
    call->run(team, {x}, outs);
    for (int64_t i = 0; i < expected.numel(); ++i) {
      const float want = expected.data<float>()[i], got = outs[0].data<float>()[i];
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << c.name << " at " << i << " on " << workers << " workers";
      } else {
        EXPECT_NEAR(got, want, tolerance) << c.name << " at " << i << " on " << workers << " workers";
      }
    }
  }
}

TEST_P(MaxPoolCall, MatchesReference) { expect_pool_matches("MaxPool", GetParam(), 0.0); }

// Sums in f32 in another order than the reference's double: a few ulp of values below 4.
TEST_P(AveragePoolCall, MatchesReference) { expect_pool_matches("AveragePool", GetParam(), 2e-6); }

using Ints = std::vector<int64_t>;

INSTANTIATE_TEST_SUITE_P(
    Geometry, MaxPoolCall,
    ::testing::Values(
        PoolCase{"ResNetStem", {1, 3, 40, 40}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}},
        PoolCase{"Wide2x2", {2, 2, 6, 70}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}},
        PoolCase{"StrideOne", {1, 2, 9, 37}, {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}},
        PoolCase{"StrideThree", {1, 2, 11, 23}, {{"kernel_shape", Ints{3, 2}}, {"strides", Ints{3, 3}}}},
        PoolCase{"AsymmetricPadsDilated", {1, 1, 12, 30},
                 {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{0, 2, 1, 0}}, {"dilations", Ints{2, 2}}}},
        PoolCase{"SameUpperCeil", {1, 2, 7, 19},
                 {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}},
        PoolCase{"CeilMode", {1, 2, 8, 35}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}},
        PoolCase{"OneD", {2, 3, 50}, {{"kernel_shape", Ints{4}}, {"strides", Ints{2}}, {"pads", Ints{1, 2}}}},
        PoolCase{"NaNsPropagate", {1, 2, 10, 40}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{1, 1}}}, true},
        PoolCase{"NaNsStrided", {1, 2, 10, 41}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}, true},
        // Rows of several groups of the vectors a pass carries at once (four), and a partial group.
        PoolCase{"ManyVectorsStrideOne", {1, 2, 5, 150}, {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}},
        PoolCase{"ManyVectorsStrideTwo", {1, 2, 7, 230}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}}, true},
        // Output as large as the input (runtime/same_size_pool.h): NaNs, an even window padded
        // at its end, one row, a window longer than the plane.
        PoolCase{"SameSizeNaNs", {1, 3, 11, 29}, {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}, true},
        PoolCase{"SameSizeEvenWindow", {1, 2, 7, 33}, {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{0, 0, 1, 1}}}},
        PoolCase{"SameSizeOneRow", {2, 2, 1, 40}, {{"kernel_shape", Ints{1, 5}}, {"pads", Ints{0, 2, 0, 2}}}},
        PoolCase{"SameSizeTallWindow", {1, 2, 3, 18}, {{"kernel_shape", Ints{7, 3}}, {"pads", Ints{3, 1, 3, 1}}}}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Geometry, AveragePoolCall,
    ::testing::Values(
        PoolCase{"InceptionBranch", {1, 4, 9, 9}, {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}},
        PoolCase{"InceptionBranchCountingPads", {1, 4, 9, 9},
                 {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}, {"count_include_pad", int64_t{1}}}},
        PoolCase{"DenseNetTransition", {2, 3, 8, 40}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}},
        PoolCase{"CeilModeBeyondThePads", {1, 2, 8, 11},
                 {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}},
                  {"ceil_mode", int64_t{1}}, {"count_include_pad", int64_t{1}}}},
        PoolCase{"SameUpperCountingPads", {1, 2, 7, 19},
                 {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")},
                  {"count_include_pad", int64_t{1}}}},
        PoolCase{"AsymmetricPadsDilated", {1, 1, 12, 30},
                 {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{0, 2, 1, 0}}, {"dilations", Ints{2, 2}}}},
        PoolCase{"OneD", {2, 3, 50}, {{"kernel_shape", Ints{4}}, {"strides", Ints{2}}, {"pads", Ints{1, 2}}}},
        PoolCase{"WideRowsStrideTwo", {1, 2, 5, 70}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}},
        PoolCase{"FiveByFiveAcrossVectors", {1, 2, 6, 37}, {{"kernel_shape", Ints{5, 5}}, {"pads", Ints{2, 2, 2, 2}}}},
        PoolCase{"NaNsPropagate", {1, 2, 10, 40}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{1, 1}}}, true},
        PoolCase{"ManyVectorsStrideOne", {1, 2, 5, 150},
                 {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}, {"count_include_pad", int64_t{1}}}},
        PoolCase{"ManyVectorsStrideTwo", {1, 2, 7, 230}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}}},
        PoolCase{"SameSizeEvenWindow", {1, 2, 7, 33}, {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{0, 0, 1, 1}}}},
        PoolCase{"SameSizeTallWindowCountingPads", {1, 2, 3, 18},
                 {{"kernel_shape", Ints{7, 3}}, {"pads", Ints{3, 1, 3, 1}}, {"count_include_pad", int64_t{1}}}}),
    [](const auto& info) { return info.param.name; });

// Few distinct values, so that windows hold ties (the first maximum's index wins), and NaN.
Tensor tied_values(const Ints& shape) {
  Tensor x(DType::f32, shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.data<float>()[i] = i % 23 == 5 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>((i * 7) % 4);
  }
  return x;
}

TEST(MaxPoolWithIndices, MatchesReferenceExactly) {
  const std::vector<PoolCase> cases = {
      {"SegNet2x2", {1, 3, 8, 20}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}},
      {"PaddedDilatedCeil", {2, 2, 9, 13},
       {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 1, 2}}, {"dilations", Ints{2, 1}},
        {"ceil_mode", int64_t{1}}}},
      {"ColumnMajor", {1, 2, 6, 7}, {{"kernel_shape", Ints{2, 3}}, {"storage_order", int64_t{1}}}},
      {"OneD", {2, 3, 17}, {{"kernel_shape", Ints{3}}, {"strides", Ints{2}}, {"pads", Ints{1, 1}}}}};
  for (const PoolCase& c : cases) {
    Graph g;
    Node* pool = g.add_node("MaxPool", "pool", {g.add_input("x", DType::f32, shape_of(c.x))}, {"y", "i"}, c.attrs);
    g.infer_shapes();
    ASSERT_TRUE(pool_call_supports(*pool)) << c.name;
    const Tensor x = tied_values(c.x);
    const std::vector<Tensor> expected = reference::evaluate_node(*pool, {x});
    std::unique_ptr<LibraryCall> call = prepare_pool_call(*pool);
    for (int workers : {1, 2}) {
      for (bool values_read : {true, false}) {
        ThreadTeam team(workers);
        std::vector<Tensor> outs = {values_read ? Tensor(DType::f32, expected[0].shape()) : Tensor(),
                                    Tensor(DType::i64, expected[1].shape())};
        call->run(team, {x}, outs);
        const std::string where = c.name + " on " + std::to_string(workers) + " workers";
        EXPECT_TRUE(outs[1].same_bytes(expected[1])) << "indices, " << where;
        if (values_read) EXPECT_TRUE(outs[0].same_bytes(expected[0])) << "values, " << where;
      }
    }
  }
}

}  // namespace
}  // namespace tilefuse::runtime
