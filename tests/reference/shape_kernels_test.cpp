// Constant, ConstantOfShape, Shape and Range.
#include "reference_test_util.h"

namespace tilefuse::testing {
namespace {

TEST(ShapeKernels, ConstantForms) {
  expect_tensor(run1("Constant", {}, {{"value", f32({2}, {1.5, 2})}}), DType::f32, {2}, {1.5, 2});
  expect_tensor(run1("Constant", {}, {{"value_float", 2.5}}), DType::f32, {}, {2.5});
  expect_tensor(run1("Constant", {}, {{"value_int", int64_t{7}}}), DType::i64, {}, {7});
  expect_tensor(run1("Constant", {}, {{"value_ints", std::vector<int64_t>{1, 2}}}), DType::i64, {2}, {1, 2});
  expect_tensor(run1("Constant", {}, {{"value_floats", std::vector<double>{0.5}}}), DType::f32, {1}, {0.5});
  EXPECT_NE(user_error([] { run1("Constant", {}); }).find("exactly one"), std::string::npos);
  EXPECT_NE(user_error([] { run1("Constant", {}, {{"value_string", std::string("a")}}); }).find("value_string"),
            std::string::npos);
}

TEST(ShapeKernels, ConstantOfShape) {
  expect_tensor(run1("ConstantOfShape", {i64s({2, 3})}), DType::f32, {2, 3}, {0, 0, 0, 0, 0, 0});
  expect_tensor(run1("ConstantOfShape", {i64s({2})}, {{"value", i64s({7})}}), DType::i64, {2}, {7, 7});
  expect_tensor(run1("ConstantOfShape", {i64s({0})}, {{"value", make(DType::f16, {1}, {1})}}), DType::f16, {0}, {});
  EXPECT_NE(user_error([] { run1("ConstantOfShape", {i64s({-1})}); }).find("negative"), std::string::npos);
}

TEST(ShapeKernels, ShapeWithStartAndEnd) {
  Tensor x = f32({2, 3, 4}, std::vector<double>(24, 0));
  expect_tensor(run1("Shape", {x}), DType::i64, {3}, {2, 3, 4});
  expect_tensor(run1("Shape", {x}, {{"start", int64_t{1}}}), DType::i64, {2}, {3, 4});
  expect_tensor(run1("Shape", {x}, {{"end", int64_t{-1}}}), DType::i64, {2}, {2, 3});
  expect_tensor(run1("Shape", {x}, {{"start", int64_t{-10}}, {"end", int64_t{10}}}), DType::i64, {3}, {2, 3, 4});
  expect_tensor(run1("Shape", {x}, {{"start", int64_t{2}}, {"end", int64_t{1}}}), DType::i64, {0}, {});
  expect_tensor(run1("Shape", {f32({}, {1})}), DType::i64, {0}, {});
}

TEST(ShapeKernels, Range) {
  expect_tensor(run1("Range", {f32({}, {1}), f32({}, {5}), f32({}, {2})}), DType::f32, {2}, {1, 3});
  expect_tensor(run1("Range", {f32({}, {0}), f32({}, {1}), f32({}, {0.25})}), DType::f32, {4}, {0, 0.25, 0.5, 0.75});
  Tensor ten = make(DType::i32, {}, {10}), six = make(DType::i32, {}, {6}), minus3 = make(DType::i32, {}, {-3});
  expect_tensor(run1("Range", {ten, six, minus3}), DType::i32, {2}, {10, 7});
  expect_tensor(run1("Range", {Tensor::scalar_i64(0), Tensor::scalar_i64(10), Tensor::scalar_i64(3)}), DType::i64, {4},
                {0, 3, 6, 9});
  expect_tensor(run1("Range", {Tensor::scalar_i64(5), Tensor::scalar_i64(0), Tensor::scalar_i64(1)}), DType::i64, {0},
                {});
}

TEST(ShapeKernels, RangeErrors) {
  EXPECT_NE(user_error([] {
              run1("Range", {Tensor::scalar_i64(0), Tensor::scalar_i64(1), Tensor::scalar_i64(0)});
            }).find("delta"),
            std::string::npos);
  EXPECT_NE(user_error([] { run1("Range", {Tensor::scalar_i64(0), f32({}, {1}), Tensor::scalar_i64(1)}); })
                .find("same element type"),
            std::string::npos);
  EXPECT_NE(user_error([] { run1("Range", {i64s({0, 1}), i64s({1}), i64s({1})}); }).find("scalar"), std::string::npos);
}

}  // namespace
}  // namespace tilefuse::testing
