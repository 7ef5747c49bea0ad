// Concats in place (fusion/concat_in_place.h) against the reference interpreter, in the
// SuperKernel region with every step split (the parts of one result are written by different
// steps at once): rows of kernel results, channels of convolutions at batch 1, unequal parts,
// a result and a part that are graph outputs, a part read again later, a Concat of a Concat
// (both in place: the inner result is a block of the outer), a graph input among the parts,
// strided parts stored by their kernels at the result's strides (two by one kernel), DenseNet
// blocks (each layer's Concat a run of the block's last one, parts written by pools run as host
// steps), and a U-Net level (a ConvTranspose's upsampled map and the encoder's skip features in
// one Concat).
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

// A DenseNet layer: relu, then a 3x3 convolution to `grow` channels.
Value* dense_layer(Graph& g, Value* features, int64_t channels, int64_t grow, int salt) {
  Value* w = g.add_constant("w" + std::to_string(g.num_nodes()), filled({grow, channels, 3, 3}, salt));
  return node(g, "Conv", {node(g, "Relu", {features}), w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
}

// Two DenseNet blocks of three layers at batch 1: layer k reads the Concat of the block's input
// and the k - 1 layers before it. The first block's input is a MaxPool's, the second's an
// AveragePool's (both run beside the library calls, not as kernels). Outputs: the second block's
// Concat, and a Concat of two middle layers (a run inside the first block's last Concat).
std::vector<Value*> dense_blocks(Graph& g, Value* x) {
  Value* stem = node(g, "MaxPool", {x}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  std::vector<Value*> parts = {stem};
  for (int k = 0; k < 3; ++k) parts.push_back(dense_layer(g, cat(g, parts, 1), 3 + 2 * k, 2, 16 + k));
  Value* middle = cat(g, {parts[1], parts[2]}, 1);
  Value* block = cat(g, parts, 1);
  Value* pooled = node(g, "AveragePool", {node(g, "Relu", {block})},
                       {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  parts = {pooled};
  for (int k = 0; k < 3; ++k) parts.push_back(dense_layer(g, cat(g, parts, 1), 9 + 3 * k, 3, 20 + k));
  return {cat(g, parts, 1), node(g, "Neg", {middle})};
}

// One U-Net level at batch 1: encoder features, pooled and convolved, upsampled by a strided
// ConvTranspose and concatenated with the skip features, then convolved.
std::vector<Value*> unet_level(Graph& g, Value* x) {
  auto small = [](Tensor t) {  // weights in [-0.4, 0.4): sums that do not cancel to a few ulp of f32
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, t.get_f64(i) * 0.2);
    return t;
  };
  auto conv = [&](Value* in, int64_t maps, int64_t channels, int salt) {
    Value* w = g.add_constant("w" + std::to_string(g.num_nodes()), small(filled({maps, channels, 3, 3}, salt)));
    return node(g, "Relu", {node(g, "Conv", {in, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})});
  };
  Value* skip = conv(x, 4, 3, 25);
  Value* deep = conv(node(g, "MaxPool", {skip}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}),
                     6, 4, 26);
  Value* up = node(g, "ConvTranspose", {deep, g.add_constant("up_w", small(filled({6, 4, 2, 2}, 27))), g.add_constant("up_b", filled({4}, 28))},
                   {{"strides", std::vector<int64_t>{2, 2}}});
  return {conv(cat(g, {up, skip}, 1), 2, 8, 29)};
}

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
  out.push_back(on_input("graph_input_among_the_parts", filled({3, 4, 5}, 10), [](Graph& g, Value* x) {
    return std::vector<Value*>{node(g, "Sqrt", {node(g, "Abs", {cat(g, {node(g, "Exp", {x}), x}, 1)})})};
  }));
  // Both parts from one kernel (siblings reading x), each stored through its own access.
  out.push_back(on_input("one_kernel_two_strided_parts", filled({16, 40}, 25), [](Graph& g, Value* x) {
    return std::vector<Value*>{node(g, "Mul", {cat(g, {node(g, "Exp", {x}), node(g, "Neg", {x})}, -1), scalar(g, 2.0f)})};
  }));
  // The same under a symbolic batch, run at two batch sizes.
  out.push_back({"strided_parts_symbolic_batch",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim(5), Dim(40)});
                   g.add_output(node(g, "Mul", {cat(g, {node(g, "Exp", {x}), node(g, "Neg", {x})}, -1), scalar(g, 2.0f)}));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({3, 5, 40}, 26)}}, {{"x", filled({1, 5, 40}, 27)}}};
                 },
                 1, true});
  // Strided parts: each kernel stores its part at the result's strides (a last axis, a middle
  // one with a tail of 1, three parts, and a part that is a column reduction's input too).
  auto two_inputs = [](std::string name, std::vector<int64_t> a_shape, std::vector<int64_t> b_shape, int64_t axis,
                       bool extra_part) {
    return Case{std::move(name),
                [=](Graph& g) {
                  Value* a = g.add_input("a", DType::f32, std::vector<Dim>(a_shape.begin(), a_shape.end()));
                  Value* b = g.add_input("b", DType::f32, std::vector<Dim>(b_shape.begin(), b_shape.end()));
                  std::vector<Value*> parts = {node(g, "Mul", {a, scalar(g, 3.0f)}), node(g, "Add", {b, scalar(g, 1.0f)})};
                  if (extra_part) parts.push_back(node(g, "Tanh", {node(g, "Neg", {a})}));
                  Value* c = cat(g, parts, axis);
                  g.add_output(node(g, "Mul", {c, scalar(g, 0.5f)}));
                  return std::vector<std::map<std::string, Tensor>>{{{"a", filled(a_shape, 11)}, {"b", filled(b_shape, 12)}}};
                }};
  };
  out.push_back(two_inputs("strided_parts_last_axis", {16, 40}, {16, 24}, -1, false));
  out.push_back(two_inputs("strided_parts_middle_axis", {3, 5, 7}, {3, 1, 7}, 1, false));
  out.push_back(two_inputs("three_strided_parts", {6, 33}, {6, 17}, 1, true));
  // A part that its kernel also reduces (a softmax-like row sum next to the stored exp).
  out.push_back({"strided_part_of_a_reducing_kernel", [](Graph& g) {
                   Value* a = g.add_input("a", DType::f32, {Dim(8), Dim(48)});
                   Value* b = g.add_input("b", DType::f32, {Dim(8), Dim(16)});
                   Value* e = node(g, "Exp", {a});
                   Value* sum = g.add_node("ReduceSum", "row_sum", {e}, {"row_sum"}, {{"keepdims", int64_t{1}},
                                           {"axes", std::vector<int64_t>{1}}})->outputs[0];
                   g.add_output(node(g, "Abs", {cat(g, {e, node(g, "Neg", {b})}, 1)}));
                   g.add_output(sum);
                   return std::vector<std::map<std::string, Tensor>>{{{"a", filled({8, 48}, 13)}, {"b", filled({8, 16}, 14)}}};
                 }});
  out.push_back(on_input("dense_blocks", filled({1, 3, 12, 12}, 15), dense_blocks));
  out.push_back(on_input("unet_level", filled({1, 3, 12, 12}, 24), unet_level));
  return out;
}

INSTANTIATE_TEST_SUITE_P(Graphs, ConcatInPlace, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace tilefuse
