// Layout (Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Expand) and selection (Concat, Split,
// Slice, Gather) kernels, with expected element orders worked out by hand.
#include <limits>

#include "reference_test_util.h"

namespace tilefuse::testing {
namespace {

Tensor iota(DType dtype, std::vector<int64_t> shape) {
  std::vector<double> v(static_cast<size_t>(product(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return make(dtype, std::move(shape), v);
}

TEST(LayoutKernels, Transpose) {
  expect_tensor(run1("Transpose", {f32({2, 3}, {1, 2, 3, 4, 5, 6})}), DType::f32, {3, 2}, {1, 4, 2, 5, 3, 6});
  // out[i, j, k] = x[j, k, i]
  expect_tensor(run1("Transpose", {iota(DType::i64, {2, 2, 2})}, {{"perm", std::vector<int64_t>{2, 0, 1}}}), DType::i64,
                {2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7});
  expect_tensor(run1("Transpose", {iota(DType::f16, {1, 2, 3})}, {{"perm", std::vector<int64_t>{0, 2, 1}}}),
                DType::f16, {1, 3, 2}, {0, 3, 1, 4, 2, 5});
  EXPECT_NE(user_error([] { run1("Transpose", {iota(DType::f32, {2, 2})}, {{"perm", std::vector<int64_t>{0, 0}}}); })
                .find("permutation"),
            std::string::npos);
}

TEST(LayoutKernels, ReshapeInfersAndCopiesDims) {
  Tensor x = iota(DType::f32, {2, 3});
  expect_tensor(run1("Reshape", {x, i64s({3, -1})}), DType::f32, {3, 2}, {0, 1, 2, 3, 4, 5});
  expect_tensor(run1("Reshape", {x, i64s({0, -1})}), DType::f32, {2, 3}, {0, 1, 2, 3, 4, 5});
  expect_tensor(run1("Reshape", {f32({0, 3}, {}), i64s({3, 0})}, {{"allowzero", int64_t{1}}}), DType::f32, {3, 0}, {});
}

TEST(LayoutKernels, ReshapeErrors) {
  Tensor x = iota(DType::f32, {2, 3});
  std::string message = user_error([&] { run1("Reshape", {x, i64s({7})}); });
  EXPECT_NE(message.find("node 'n' (Reshape)"), std::string::npos) << message;
  EXPECT_NE(message.find("6 elements"), std::string::npos) << message;
  EXPECT_NE(user_error([&] { run1("Reshape", {x, i64s({4, -1})}); }).find("-1"), std::string::npos);
  EXPECT_NE(user_error([&] { run1("Reshape", {x, i64s({-1, -1})}); }).find("more than one -1"), std::string::npos);
}

TEST(LayoutKernels, ReshapeOutputDoesNotAliasItsInput) {
  Tensor x = iota(DType::f32, {4});
  Tensor y = run1("Reshape", {x, i64s({2, 2})});
  y.data<float>()[0] = 42;
  EXPECT_EQ(x.data<float>()[0], 0);
}

TEST(LayoutKernels, Flatten) {
  Tensor x = iota(DType::f32, {2, 3, 4});
  EXPECT_EQ(run1("Flatten", {x}).shape(), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(run1("Flatten", {x}, {{"axis", int64_t{2}}}).shape(), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(run1("Flatten", {x}, {{"axis", int64_t{0}}}).shape(), (std::vector<int64_t>{1, 24}));
  EXPECT_EQ(run1("Flatten", {x}, {{"axis", int64_t{-1}}}).shape(), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(run1("Flatten", {x}, {{"axis", int64_t{3}}}).shape(), (std::vector<int64_t>{24, 1}));
  EXPECT_NE(user_error([&] { run1("Flatten", {x}, {{"axis", int64_t{4}}}); }).find("axis 4"), std::string::npos);
}

TEST(LayoutKernels, SqueezeAndUnsqueeze) {
  Tensor x = iota(DType::f32, {1, 3, 1});
  EXPECT_EQ(run1("Squeeze", {x}).shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(run1("Squeeze", {x, i64s({-1})}).shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_NE(user_error([&] { run1("Squeeze", {x, i64s({1})}); }).find("not 1"), std::string::npos);
  EXPECT_EQ(run1("Unsqueeze", {iota(DType::f32, {3}), i64s({0, -1})}).shape(), (std::vector<int64_t>{1, 3, 1}));
  expect_tensor(run1("Unsqueeze", {iota(DType::i32, {2, 3}), i64s({1})}), DType::i32, {2, 1, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_NE(user_error([] { run1("Unsqueeze", {iota(DType::f32, {3}), i64s({2})}); }).find("axis 2"),
            std::string::npos);
}

TEST(LayoutKernels, ExpandBroadcastsBothWays) {
  expect_tensor(run1("Expand", {f32({3, 1}, {1, 2, 3}), i64s({2, 1, 2})}), DType::f32, {2, 3, 2},
                {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  expect_tensor(run1("Expand", {make(DType::boolean, {3}, {1, 0, 1}), i64s({1})}), DType::boolean, {3}, {1, 0, 1});
  EXPECT_NE(user_error([] { run1("Expand", {f32({2}, {1, 2}), i64s({3})}); }).find("broadcast"), std::string::npos);
}

TEST(SelectionKernels, Concat) {
  Tensor a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2, 1}, {5, 6});
  expect_tensor(run1("Concat", {a, b}, {{"axis", int64_t{1}}}), DType::f32, {2, 3}, {1, 2, 5, 3, 4, 6});
  expect_tensor(run1("Concat", {a, a}, {{"axis", int64_t{-2}}}), DType::f32, {4, 2}, {1, 2, 3, 4, 1, 2, 3, 4});
  expect_tensor(run1("Concat", {i64s({1}), i64s({}), i64s({2, 3})}, {{"axis", int64_t{0}}}), DType::i64, {3}, {1, 2, 3});
  std::string message = user_error([&] { run1("Concat", {a, b}, {{"axis", int64_t{0}}}); });
  EXPECT_NE(message.find("input 1"), std::string::npos) << message;
}

TEST(SelectionKernels, SplitEqualAndBySizes) {
  auto parts = run_node("Split", {iota(DType::f32, {6})}, {}, 3);
  ASSERT_EQ(parts.size(), 3u);
  expect_tensor(parts[2], DType::f32, {2}, {4, 5});
  parts = run_node("Split", {iota(DType::f32, {2, 3}), i64s({2, 1})}, {{"axis", int64_t{1}}}, 2);
  expect_tensor(parts[0], DType::f32, {2, 2}, {0, 1, 3, 4});
  expect_tensor(parts[1], DType::f32, {2, 1}, {2, 5});
  // Opset 18's num_outputs: parts of ceil(7 / 3) = 3, the last one smaller.
  parts = run_node("Split", {iota(DType::i64, {7})}, {{"num_outputs", int64_t{3}}}, 3);
  expect_tensor(parts[2], DType::i64, {1}, {6});
  EXPECT_NE(user_error([] { run_node("Split", {iota(DType::f32, {7})}, {}, 3); }).find("equal parts"),
            std::string::npos);
  EXPECT_NE(user_error([] { run_node("Split", {iota(DType::f32, {7}), i64s({3, 3})}, {}, 2); }).find("summing"),
            std::string::npos);
}

TEST(SelectionKernels, SliceForwardAndClamped) {
  Tensor x = iota(DType::f32, {10});
  expect_tensor(run1("Slice", {x, i64s({2}), i64s({5})}), DType::f32, {3}, {2, 3, 4});
  expect_tensor(run1("Slice", {x, i64s({-3}), i64s({100})}), DType::f32, {3}, {7, 8, 9});
  expect_tensor(run1("Slice", {x, i64s({1}), i64s({8}), i64s({0}), i64s({3})}), DType::f32, {3}, {1, 4, 7});
  EXPECT_EQ(run1("Slice", {x, i64s({5}), i64s({2})}).shape(), (std::vector<int64_t>{0}));
}

TEST(SelectionKernels, SliceNegativeSteps) {
  Tensor x = iota(DType::f32, {5});
  expect_tensor(run1("Slice", {x, i64s({4}), i64s({0}), i64s({0}), i64s({-2})}), DType::f32, {2}, {4, 2});
  // End at INT64_MIN (numpy's x[::-1]) clamps to -1: everything, reversed.
  expect_tensor(run1("Slice", {x, i64s({-1}), i64s({std::numeric_limits<int64_t>::min()}), i64s({0}), i64s({-1})}),
                DType::f32, {5}, {4, 3, 2, 1, 0});
  expect_tensor(run1("Slice", {x, i64s({100}), i64s({-100}), i64s({0}), i64s({-3})}), DType::f32, {2}, {4, 1});
}

TEST(SelectionKernels, SliceAlongChosenAxes) {
  Tensor x = iota(DType::i32, {2, 4});
  expect_tensor(run1("Slice", {x, i64s({1}), i64s({3}), i64s({1})}), DType::i32, {2, 2}, {1, 2, 5, 6});
  expect_tensor(run1("Slice", {x, i64s({1}), i64s({2}), i64s({-2})}), DType::i32, {1, 4}, {4, 5, 6, 7});
  EXPECT_NE(user_error([&] { run1("Slice", {x, i64s({0}), i64s({1}), i64s({1}), i64s({0})}); }).find("step 0"),
            std::string::npos);
  EXPECT_NE(user_error([&] { run1("Slice", {x, i64s({0, 0}), i64s({1})}); }).find("equal lengths"), std::string::npos);
}

TEST(SelectionKernels, Gather) {
  Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  expect_tensor(run1("Gather", {data, i64s({0, 2})}), DType::f32, {2, 2}, {1, 2, 5, 6});
  expect_tensor(run1("Gather", {data, i64({1, 2}, {1, -2})}, {{"axis", int64_t{1}}}), DType::f32, {3, 1, 2},
                {2, 1, 4, 3, 6, 5});
  expect_tensor(run1("Gather", {data, Tensor::scalar_i64(-1)}), DType::f32, {2}, {5, 6});
  expect_tensor(run1("Gather", {data, make(DType::i32, {1}, {1})}), DType::f32, {1, 2}, {3, 4});
}

TEST(SelectionKernels, GatherIndexOutOfRange) {
  std::string message = user_error([] { run1("Gather", {f32({3}, {1, 2, 3}), i64s({3})}); });
  EXPECT_NE(message.find("node 'n' (Gather)"), std::string::npos) << message;
  EXPECT_NE(message.find("index 3"), std::string::npos) << message;
  EXPECT_NE(user_error([] { run1("Gather", {f32({3}, {1, 2, 3}), i64s({-4})}); }).find("index -4"), std::string::npos);
  EXPECT_NE(user_error([] { run1("Gather", {f32({3}, {1, 2, 3}), f32({1}, {0})}); }).find("indices"),
            std::string::npos);
}

}  // namespace
}  // namespace tilefuse::testing
