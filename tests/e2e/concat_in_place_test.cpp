// Concats in place (fusion/concat_in_place.h) against the reference interpreter, in the
// SuperKernel region with every step split (the parts of one result are written by different
// steps at once): rows of kernel results, channels of convolutions at batch 1, unequal parts,
// a result and a part that are graph outputs, a part read again later, a Concat of a Concat
// (the outer one stays a copy: its input is a view), and a Concat that must stay a copy.
#include <gtest/gtest.h>

#include "e2e/fused_vs_reference.h"

namespace tilefuse {
namespace {

using e2e::filled;
using e2e::node;
using e2e::on_input;
using Case = e2e::GraphCase;

class ConcatInPlace : public ::testing::TestWithParam<Case> {};

TEST_P(ConcatInPlace, FusedMatchesReference) { e2e::expect_fused_matches_reference(GetParam()); }

Value* cat(Graph& g, std::vector<Value*> parts, int64_t axis) {
  return g.add_node("Concat", "cat" + std::to_string(g.num_nodes()), std::move(parts), {"cat_out" + std::to_string(g.num_nodes())},
                    {{"axis", axis}})->outputs[0];
}

Value* scalar(Graph& g, float v) { return g.add_constant("s" + std::to_string(g.num_nodes()), Tensor::scalar_f32(v)); }

std::vector<Case> cases() {
  std::vector<Case> out;
  Case rows = on_input("rows_of_kernel_results", filled({40, 24}, 1), [](Graph& g, Value* x) {
    Value* c = cat(g, {node(g, "Sigmoid", {x}), node(g, "Mul", {x, scalar(g, 2.0f)})}, 0);
    return std::vector<Value*>{node(g, "Add", {node(g, "Relu", {c}), scalar(g, 1.0f)})};
  }, 3);
  rows.kernels_only = true;  // the Concat is a view, not a copy
  out.push_back(rows);
  out.push_back(on_input("channels_of_convolutions", filled({1, 3, 9, 9}, 2), [](Graph& g, Value* x) {
    Value* a = node(g, "Conv", {x, g.add_constant("wa", filled({5, 3, 3, 3}, 3)), g.add_constant("ba", filled({5}, 4))},
                    {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    Value* b = node(g, "Conv", {x, g.add_constant("wb", filled({7, 3, 1, 1}, 5))});
    return std::vector<Value*>{node(g, "Relu", {cat(g, {a, b}, 1)})};
  }));
  out.push_back(on_input("unequal_parts_of_a_vector", filled({13}, 6), [](Graph& g, Value* x) {
    Value* c = cat(g, {node(g, "Exp", {x}), node(g, "Neg", {x}), node(g, "Abs", {x})}, 0);
    return std::vector<Value*>{node(g, "Mul", {c, c})};
  }));
  out.push_back(on_input("result_and_part_are_outputs", filled({1, 6, 10}, 7), [](Graph& g, Value* x) {
    Value* e = node(g, "Exp", {x});
    return std::vector<Value*>{cat(g, {e, node(g, "Tanh", {x})}, 1), e};
  }));
  out.push_back(on_input("part_read_again_later", filled({8, 16}, 8), [](Graph& g, Value* x) {
    Value* e = node(g, "Exp", {x});
    Value* c = node(g, "ReduceSum", {cat(g, {e, node(g, "Neg", {x})}, 0)}, {{"keepdims", int64_t{1}}});
    return std::vector<Value*>{node(g, "Add", {e, c})};
  }));
  out.push_back(on_input("concat_of_a_concat", filled({4, 5}, 9), [](Graph& g, Value* x) {
    Value* inner = cat(g, {node(g, "Exp", {x}), node(g, "Neg", {x})}, 0);
    return std::vector<Value*>{node(g, "Sin", {cat(g, {inner, node(g, "Cos", {x})}, 0)})};
  }));
  out.push_back(on_input("leading_dim_above_one_stays_a_copy", filled({3, 4, 5}, 10), [](Graph& g, Value* x) {
    return std::vector<Value*>{node(g, "Sqrt", {node(g, "Abs", {cat(g, {node(g, "Exp", {x}), x}, 1)})})};
  }));
  return out;
}

INSTANTIATE_TEST_SUITE_P(Graphs, ConcatInPlace, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace tilefuse
