#include "runtime/input_binding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tilefuse::runtime {
namespace {

using ::testing::HasSubstr;

const Dim N = SymExpr::symbol("N");

// x: f32[N, 128], mask: bool[N, 4], idx: i64[3]
Graph three_input_graph() {
  Graph g;
  g.add_input("x", DType::f32, {N, 128});
  g.add_input("mask", DType::boolean, {N, 4});
  g.add_input("idx", DType::i64, {3});
  return g;
}

Tensor ones(DType dtype, std::vector<int64_t> dims) {
  Tensor t(dtype, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_i64(i, 1);
  return t;
}

std::string bind_error(const Graph& graph, const std::map<std::string, Tensor>& given, BindOptions options = {}) {
  try {
    bind_inputs(graph, given, options);
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UserError";
  return "";
}

TEST(InputBinding, BindsSymbolsAndKeepsGraphInputOrder) {
  Graph g = three_input_graph();
  BoundInputs bound = bind_inputs(g, {{"idx", ones(DType::i64, {3})}, {"mask", ones(DType::boolean, {5, 4})},
                                      {"x", ones(DType::f32, {5, 128})}});
  EXPECT_EQ(bound.symbols.at("N"), 5);
  ASSERT_EQ(bound.inputs.size(), 3u);
  EXPECT_EQ(bound.inputs[0].name, "x");
  EXPECT_EQ(bound.inputs[2].name, "idx");
  EXPECT_FALSE(bound.inputs[1].random);
}

TEST(InputBinding, ConstantDimMismatchNamesInputExpectedAndActual) {
  EXPECT_EQ(bind_error(three_input_graph(), {{"x", ones(DType::f32, {4, 64})}}),
            "input 'x': expected f32[N, 128], got f32[4, 64] (dim 1 is 64, expected 128)");
}

TEST(InputBinding, DtypeMismatch) {
  EXPECT_EQ(bind_error(three_input_graph(), {{"idx", ones(DType::i32, {3})}}),
            "input 'idx': expected i64[3], got i32[3] (dtype is i32, expected i64)");
}

TEST(InputBinding, RankMismatch) {
  EXPECT_EQ(bind_error(three_input_graph(), {{"x", ones(DType::f32, {2, 128, 1})}}),
            "input 'x': expected f32[N, 128], got f32[2, 128, 1] (rank is 3, expected 2)");
}

TEST(InputBinding, SymbolBoundToTwoValuesNamesBothInputs) {
  std::string message = bind_error(three_input_graph(), {{"x", ones(DType::f32, {4, 128})},
                                                         {"mask", ones(DType::boolean, {6, 4})}});
  // Inputs are bound in graph order, so x fixes N first.
  EXPECT_EQ(message, "input 'mask': expected bool[N, 4], got bool[6, 4] (dim 0 is 6, but N is 4 from input 'x')");
}

TEST(InputBinding, UnknownInputListsTheModelsInputs) {
  std::string message = bind_error(three_input_graph(), {{"y", ones(DType::f32, {1})}});
  EXPECT_THAT(message, HasSubstr("unknown input 'y'"));
  EXPECT_THAT(message, HasSubstr("'x' f32[N, 128]"));
}

TEST(InputBinding, MissingInputIsAnErrorWithoutRandomFill) {
  std::string message = bind_error(three_input_graph(), {{"x", ones(DType::f32, {2, 128})},
                                                         {"mask", ones(DType::boolean, {2, 4})}});
  EXPECT_THAT(message, HasSubstr("input 'idx' (i64[3]) is missing"));
}

TEST(InputBinding, RandomFillUsesSymbolsFixedByGivenInputs) {
  BoundInputs bound = bind_inputs(three_input_graph(), {{"x", ones(DType::f32, {7, 128})}},
                                  {.fill_missing_randomly = true, .seed = 3});
  EXPECT_EQ(bound.inputs[1].tensor.shape(), (std::vector<int64_t>{7, 4}));
  EXPECT_EQ(bound.inputs[1].tensor.dtype(), DType::boolean);
  EXPECT_TRUE(bound.inputs[1].random);
  EXPECT_EQ(bound.inputs[2].tensor.shape(), (std::vector<int64_t>{3}));
}

TEST(InputBinding, SymbolicDimWithoutAGivenInputAsksForTheNpyFile) {
  std::string message = bind_error(three_input_graph(), {}, {.fill_missing_randomly = true});
  EXPECT_THAT(message, HasSubstr("input 'x' (f32[N, 128]) was not given"));
  EXPECT_THAT(message, HasSubstr("symbolic dim N"));
  EXPECT_THAT(message, HasSubstr("--input x=FILE.npy"));
}

TEST(InputBinding, ExpressionDimsAreCheckedAfterSymbolsAreBound) {
  Graph g;
  g.add_input("padded", DType::f32, {N + 1});  // listed first: N comes from a later input
  g.add_input("x", DType::f32, {N});
  EXPECT_NO_THROW(bind_inputs(g, {{"padded", ones(DType::f32, {5})}, {"x", ones(DType::f32, {4})}}));
  EXPECT_THAT(bind_error(g, {{"padded", ones(DType::f32, {6})}, {"x", ones(DType::f32, {4})}}),
              HasSubstr("dim 0 is 6, expected N + 1 = 5"));
}

TEST(InputBinding, SameSymbolTwiceInOneInput) {
  Graph g;
  g.add_input("square", DType::f32, {N, N});
  EXPECT_THAT(bind_error(g, {{"square", ones(DType::f32, {2, 3})}}), HasSubstr("dim 1 is 3, but N is 2 from input 'square'"));
}

}  // namespace
}  // namespace tilefuse::runtime
