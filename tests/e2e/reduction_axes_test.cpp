// Reductions over every kind of axis set run fused and must match the reference interpreter:
// row reductions (innermost axis reduced), column reductions (innermost axis kept: sums down
// columns of [R, C], NHWC channel statistics), mixed sets, chains that need several passes (a
// variance and the normalised tensor), every reduction op, NaN and infinities, f16 storage,
// column counts that leave vector and tile tails, symbolic dims that take the jit path, and
// sibling reductions and elementwise ops that read the same tensor in one kernel.
#include <limits>

#include <gtest/gtest.h>

#include "e2e/fused_vs_reference.h"

namespace tilefuse {
namespace {

using e2e::filled;
using e2e::node;
using e2e::on_input;
using Case = e2e::GraphCase;

class ReductionAxes : public ::testing::TestWithParam<Case> {};

TEST_P(ReductionAxes, FusedMatchesReference) { e2e::expect_fused_matches_reference(GetParam()); }

Value* reduce(Graph& g, const std::string& op, Value* x, std::vector<int64_t> axes, bool keepdims = true) {
  return node(g, op, {x}, {{"axes", axes}, {"keepdims", int64_t{keepdims ? 1 : 0}}});
}

// Mean, variance and the normalised tensor over `axes`: three passes over the reduced axes.
std::vector<Value*> normalise(Graph& g, Value* x, std::vector<int64_t> axes) {
  Value* mean = reduce(g, "ReduceMean", x, axes);
  Value* d = node(g, "Sub", {x, mean});
  Value* var = reduce(g, "ReduceMean", node(g, "Mul", {d, d}), axes);
  Value* sd = node(g, "Sqrt", {node(g, "Add", {var, g.add_constant("eps", Tensor::scalar_f32(1e-5f))})});
  return {mean, var, node(g, "Div", {d, sd})};
}

Tensor with_specials(Tensor t) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const int64_t cols = t.shape().back();
  t.set_f64(5 * cols + 3, nan);    // column 3 has a NaN in row 5
  t.set_f64(7 * cols + 17, inf);   // column 17 has +inf
  t.set_f64(2 * cols + 18, -inf);  // column 18 has -inf
  return t;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const std::string op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}) {
    // Long columns, a column count that is no multiple of a vector or of any tile.
    out.push_back(on_input(op + "_axis0_long", filled({2053, 37}, 1, 0.5),
                           [op](Graph& g, Value* x) { return std::vector<Value*>{reduce(g, op, x, {0}, false)}; }));
    // Many columns: several column tiles, one of them partial.
    out.push_back(on_input(op + "_axis0_wide", filled({33, 1100}, 2, 0.5),
                           [op](Graph& g, Value* x) { return std::vector<Value*>{reduce(g, op, x, {0})}; }));
  }
  out.push_back(on_input("ReduceProd_axis0", filled({12, 40}, 3, 2.4),
                         [](Graph& g, Value* x) { return std::vector<Value*>{reduce(g, "ReduceProd", x, {0})}; }));
  out.push_back(on_input("ReduceMax_axis0_nan_and_inf", with_specials(filled({40, 35}, 4)), [](Graph& g, Value* x) {
    return std::vector<Value*>{reduce(g, "ReduceMax", x, {0}), reduce(g, "ReduceMin", x, {0}),
                               reduce(g, "ReduceSum", x, {0})};
  }));
  // Reduced axes in the middle: a kept outer axis and a kept inner one.
  out.push_back(on_input("ReduceSum_middle_axis", filled({4, 300, 40}, 5, 0.5),
                         [](Graph& g, Value* x) { return std::vector<Value*>{reduce(g, "ReduceSum", x, {1}, false)}; }));
  // NHWC channel statistics: batch and spatial axes around the kept channels.
  out.push_back(on_input("nhwc_channel_norm", filled({3, 7, 9, 24}, 6),
                         [](Graph& g, Value* x) { return normalise(g, x, {0, 1, 2}); }));
  // NCHW channel statistics: the innermost axis is reduced (a row reduction with a strided outer).
  out.push_back(on_input("nchw_channel_norm", filled({3, 24, 7, 9}, 7),
                         [](Graph& g, Value* x) { return normalise(g, x, {0, 2, 3}); }));
  // Both ends reduced, the middle kept.
  out.push_back(on_input("ReduceMean_outer_and_inner", filled({6, 50, 20}, 8),
                         [](Graph& g, Value* x) { return std::vector<Value*>{reduce(g, "ReduceMean", x, {0, 2})}; }));
  // A column softmax: max, exp and sum, divide; exp is computed again in the last pass.
  out.push_back(on_input("softmax_axis0", filled({70, 45}, 9), [](Graph& g, Value* x) {
    return std::vector<Value*>{node(g, "Softmax", {x}, {{"axis", int64_t{0}}})};
  }));
  // Row-level work after a column reduction, with a row-level input that differs per column.
  out.push_back(on_input("column_mean_plus_bias", filled({90, 52}, 10), [](Graph& g, Value* x) {
    Value* bias = g.add_constant("bias", filled({1, 52}, 11));
    Value* mean = reduce(g, "ReduceMean", node(g, "Mul", {x, x}), {0});
    return std::vector<Value*>{node(g, "Sqrt", {node(g, "Add", {mean, bias})})};
  }));
  // A masked column sum: a bool input selects what is summed.
  out.push_back({"masked_column_sum", [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim(64), Dim(33)});
                   Value* keep = g.add_input("keep", DType::boolean, {Dim(64), Dim(33)});
                   Value* zero = g.add_constant("zero", Tensor::scalar_f32(0.0f));
                   g.add_output(reduce(g, "ReduceSum", node(g, "Where", {keep, x, zero}), {0}));
                   Tensor k(DType::boolean, {64, 33});
                   for (int64_t i = 0; i < k.numel(); ++i) k.set_f64(i, (i * 7) % 3 != 0 ? 1.0 : 0.0);
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({64, 33}, 12)}, {"keep", k}}};
                 }});
  // Long reductions with few results, split into 16 slabs and a combine (reduction_splitting.h):
  // the producer stays in the partial kernel through the slab view.
  out.push_back(on_input("split_full_mean_of_squares", filled({1024, 512}, 20), [](Graph& g, Value* x) {
    return std::vector<Value*>{reduce(g, "ReduceMean", node(g, "Mul", {x, x}), {0, 1}, false)};
  }, 2));
  out.push_back(on_input("split_narrow_column_max", filled({262144, 4}, 21), [](Graph& g, Value* x) {
    return std::vector<Value*>{reduce(g, "ReduceMax", x, {0}), reduce(g, "ReduceMin", x, {0})};
  }, 3));  // the partial max and min as siblings, and the two combines
    // Siblings: readers of the same x in one kernel (fusion/planner.h).
  out.push_back(on_input("siblings_column_sum_mean_max", filled({500, 70}, 18, 0.5), [](Graph& g, Value* x) {
    Value* shifted = node(g, "Add", {x, g.add_constant("shift", Tensor::scalar_f32(1.5f))});
    return std::vector<Value*>{reduce(g, "ReduceSum", shifted, {0}, false), reduce(g, "ReduceMean", x, {0}, false),
                               reduce(g, "ReduceMax", x, {0})};
  }, 1));
  out.push_back(on_input("siblings_row_sum_and_exp", filled({30, 300}, 19), [](Graph& g, Value* x) {
    return std::vector<Value*>{reduce(g, "ReduceSum", x, {1}), node(g, "Exp", {x}), node(g, "Relu", {x})};
  }, 1));
  // f16 storage, f32 arithmetic.
  out.push_back(on_input("f16_column_sum", filled(DType::f16, {200, 48}, 13, 0.5),
                         [](Graph& g, Value* x) { return std::vector<Value*>{reduce(g, "ReduceSum", x, {0})}; }));
  // Symbolic rows and columns (the jit path), run at two sizes each.
  out.push_back({"symbolic_column_mean", [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim::symbol("C")});
                   g.add_output(reduce(g, "ReduceMean", x, {0}, false));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({1000, 70}, 14)}},
                                                                     {{"x", filled({3, 600}, 15)}}};
                 }});
  out.push_back({"symbolic_nhwc_channel_norm", [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim(5), Dim(5), Dim(40)});
                   for (Value* v : normalise(g, x, {0, 1, 2})) g.add_output(v);
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({4, 5, 5, 40}, 16)}},
                                                                     {{"x", filled({1, 5, 5, 40}, 17)}}};
                 }});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ReductionAxes, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace tilefuse
