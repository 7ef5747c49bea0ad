// Views and index maps inside kernels. A view (Reshape, Flatten, Squeeze, Unsqueeze) between
// fused ops: the kernel's iteration space is the common refinement of the shapes on both sides
// (fusion/iteration_space.h), so the view costs nothing and the ops around it are one kernel. A
// Slice, Expand or Transpose of a kernel's input (or a chain of them) is a load through one composed
// index map. Each graph runs fused against the reference interpreter, with a bound on its
// kernels where the fusion must happen, and without one where it must not (shapes without a
// common refinement, a view's input read elsewhere, a sliced value that leaves the kernel). Split
// and Tile become Slices and Expands before fusion, and rotate_half a reversed Slice: index maps
// too.
#include <gtest/gtest.h>

#include "e2e/fused_vs_reference.h"

namespace tilefuse {
namespace {

using e2e::filled;
using e2e::node;
using e2e::on_input;
using Case = e2e::GraphCase;

class ViewFusion : public ::testing::TestWithParam<Case> {};

TEST_P(ViewFusion, FusedMatchesReference) { e2e::expect_fused_matches_reference(GetParam()); }

Value* reshape(Graph& g, Value* x, std::vector<int64_t> shape) {
  const auto n = static_cast<int64_t>(shape.size());
  return node(g, "Reshape", {x, g.add_constant("shape", Tensor::from_vector<int64_t>(DType::i64, {n}, shape))});
}

Value* ints(Graph& g, const std::string& name, std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return g.add_constant(name, Tensor::from_vector<int64_t>(DType::i64, {n}, v));
}

std::vector<Case> cases() {
  std::vector<Case> out;
  // A head split between elementwise ops, a per-head scale on the far side, and back.
  out.push_back(on_input("split_scale_merge", filled({3, 10, 64}, 1), [](Graph& g, Value* x) {
    Value* t = node(g, "Sigmoid", {node(g, "Mul", {x, g.add_constant("bias_scale", filled({64}, 2))})});
    Value* heads = reshape(g, t, {3, 10, 4, 16});
    Value* scaled = node(g, "Mul", {heads, g.add_constant("per_head", filled({4, 1}, 3))});
    return std::vector<Value*>{node(g, "Add", {reshape(g, scaled, {3, 10, 64}), x})};
  }, 1));
  // Softmax per head after the split (the reduced axis is a part of an axis before the view).
  out.push_back(on_input("softmax_per_head", filled({2, 12, 96}, 4), [](Graph& g, Value* x) {
    Value* heads = reshape(g, node(g, "Mul", {x, g.add_constant("s", Tensor::scalar_f32(0.5f))}), {2, 12, 3, 32});
    return std::vector<Value*>{node(g, "Softmax", {heads}, {{"axis", int64_t{-1}}})};
  }, 1));
  // Rows merged before a column reduction.
  out.push_back(on_input("merge_then_column_sum", filled({16, 8, 40}, 5, 0.5), [](Graph& g, Value* x) {
    Value* flat = reshape(g, node(g, "Abs", {x}), {128, 40});
    return std::vector<Value*>{node(g, "ReduceSum", {flat}, {{"axes", std::vector<int64_t>{0}}})};
  }, 1));
  // Unsqueeze, Flatten and Squeeze.
  out.push_back(on_input("unsqueeze_flatten_squeeze", filled({6, 20}, 6), [](Graph& g, Value* x) {
    Value* u = node(g, "Unsqueeze", {node(g, "Exp", {x}), ints(g, "axes", {1})});
    Value* f = node(g, "Flatten", {node(g, "Neg", {u})}, {{"axis", int64_t{1}}});
    Value* s = node(g, "Squeeze", {reshape(g, node(g, "Relu", {f}), {1, 120}), ints(g, "sq", {0})});
    return std::vector<Value*>{node(g, "Tanh", {s})};
  }, 1));
  // A sum over a size-1 axis the view adds (the property tests' case, which had summed the whole
  // row into its first element), and one over a size-1 axis and a real one (the size-1 axis
  // reduces nothing), with and without keepdims.
  out.push_back(on_input("sum_over_a_size_one_axis_after_a_view", filled({5}, 21), [](Graph& g, Value* x) {
    Value* row = reshape(g, node(g, "Exp", {x}), {1, -1});
    return std::vector<Value*>{node(g, "ReduceSum", {row, ints(g, "axes", {0})}, {{"keepdims", int64_t{0}}})};
  }));
  out.push_back(on_input("sum_over_a_size_one_and_a_real_axis", filled({6, 7}, 22), [](Graph& g, Value* x) {
    Value* r = reshape(g, node(g, "Tanh", {x}), {6, 1, 7});
    return std::vector<Value*>{node(g, "ReduceSum", {r, ints(g, "axes", {1, 2})}),
                               node(g, "ReduceMax", {r, ints(g, "axes", {0, 1})}, {{"keepdims", int64_t{0}}})};
  }));
  // [4, 6] and [6, 4] have no common refinement: two kernels around the view, still right.
  out.push_back(on_input("no_common_refinement", filled({4, 6}, 7), [](Graph& g, Value* x) {
    Value* r = reshape(g, node(g, "Exp", {x}), {6, 4});
    return std::vector<Value*>{node(g, "Mul", {r, g.add_constant("row", filled({4}, 8))})};
  }, 2));
  // The view's input is also an output: the kernel would write it twice; no merge.
  out.push_back(on_input("view_input_is_also_an_output", filled({8, 32}, 9), [](Graph& g, Value* x) {
    Value* e = node(g, "Exp", {x});
    return std::vector<Value*>{e, node(g, "Neg", {reshape(g, e, {8, 4, 8})})};
  }, 2));
  // The same external input read on both sides of the view.
  out.push_back(on_input("input_read_on_both_sides", filled({5, 48}, 10), [](Graph& g, Value* x) {
    Value* heads = reshape(g, node(g, "Sin", {x}), {5, 6, 8});
    Value* back = reshape(g, node(g, "Mul", {heads, reshape(g, x, {5, 6, 8})}), {5, 48});
    return std::vector<Value*>{node(g, "Sub", {back, x})};
  }));
  // Slices: a window of the last axis, a negative step, Slice -> Transpose and back.
  auto slice = [](Graph& g, Value* x, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                  std::vector<int64_t> steps) {
    return node(g, "Slice", {x, ints(g, "starts", starts), ints(g, "ends", ends), ints(g, "axes", axes), ints(g, "steps", steps)});
  };
  out.push_back(on_input("slice_window_then_elementwise", filled({3, 5, 64}, 13), [slice](Graph& g, Value* x) {
    Value* w = slice(g, x, {16}, {48}, {-1}, {1});
    return std::vector<Value*>{node(g, "Add", {node(g, "Mul", {w, w}), g.add_constant("one", Tensor::scalar_f32(1.0f))})};
  }, 1));
  out.push_back(on_input("slice_negative_step", filled({7, 9, 20}, 14), [slice](Graph& g, Value* x) {
    return std::vector<Value*>{node(g, "Exp", {slice(g, x, {-1, 18}, {-100, 1}, {1, 2}, {-2, -3})})};
  }, 1));
  out.push_back(on_input("slice_then_transpose", filled({4, 6, 10}, 15), [slice](Graph& g, Value* x) {
    Value* t = node(g, "Transpose", {slice(g, x, {2}, {8}, {2}, {1})}, {{"perm", std::vector<int64_t>{2, 0, 1}}});
    return std::vector<Value*>{node(g, "Sigmoid", {t})};
  }, 1));
  out.push_back(on_input("transpose_then_slice", filled({4, 6, 10}, 16), [slice](Graph& g, Value* x) {
    Value* t = node(g, "Transpose", {x}, {{"perm", std::vector<int64_t>{1, 2, 0}}});
    return std::vector<Value*>{node(g, "Neg", {slice(g, t, {1, 0}, {6, 3}, {0, 2}, {2, 1})})};
  }, 1));
  // A slice of a value the kernel computes cannot be a load: two kernels.
  out.push_back(on_input("slice_of_a_computed_value", filled({6, 32}, 17), [slice](Graph& g, Value* x) {
    return std::vector<Value*>{node(g, "Neg", {slice(g, node(g, "Exp", {x}), {0}, {16}, {1}, {1})})};
  }, 2));
  // The link between Slice and Transpose is also an output: it must be written as it is.
  out.push_back(on_input("sliced_value_is_also_an_output", filled({4, 6, 10}, 18), [slice](Graph& g, Value* x) {
    Value* s = slice(g, x, {1}, {9}, {2}, {1});
    return std::vector<Value*>{s, node(g, "Transpose", {s}, {{"perm", std::vector<int64_t>{0, 2, 1}}})};
  }));
  // The sliced value also read as it is, next to its transpose.
  out.push_back(on_input("sliced_value_read_two_ways", filled({4, 6, 10}, 19), [slice](Graph& g, Value* x) {
    Value* s = slice(g, x, {0}, {5}, {1}, {1});
    Value* t = node(g, "Transpose", {s}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
    return std::vector<Value*>{node(g, "Exp", {t}), node(g, "Abs", {s})};
  }));
  // A padding mask expanded over the query axis, cast and scaled (attention's additive mask).
  out.push_back({"expanded_mask",
                 [](Graph& g) {
                   Value* keep = g.add_input("keep", DType::boolean, {Dim(2), Dim(1), Dim(1), Dim(12)});
                   Value* e = node(g, "Expand", {keep, ints(g, "shape", {2, 1, 12, 12})});
                   Value* f = node(g, "Cast", {e}, {{"to", int64_t{1}}});
                   Value* one = g.add_constant("one", Tensor::scalar_f32(1.0f));
                   Value* big = g.add_constant("big", Tensor::scalar_f32(-10000.0f));
                   g.add_output(node(g, "Mul", {node(g, "Sub", {one, f}), big}));
                   Tensor k(DType::boolean, {2, 1, 1, 12});
                   for (int64_t i = 0; i < k.numel(); ++i) k.set_f64(i, i % 5 != 0 ? 1.0 : 0.0);
                   return std::vector<std::map<std::string, Tensor>>{{{"keep", k}}};
                 },
                 1});
  out.push_back(on_input("expand_then_transpose", filled({3, 1, 8}, 22), [](Graph& g, Value* x) {
    Value* e = node(g, "Expand", {x, ints(g, "shape", {3, 5, 8})});
    return std::vector<Value*>{node(g, "Exp", {node(g, "Transpose", {e}, {{"perm", std::vector<int64_t>{2, 0, 1}}})})};
  }, 1));
  // A Split's parts are Slices (passes/split_as_slices.h): both halves of a chunk read in one
  // kernel, where the Split copied them first; an unequal split of the middle axis with an
  // unused part and a part that is an output; a split of a symbolic axis is left a Split.
  auto split = [](Graph& g, Value* x, int64_t axis, std::vector<int64_t> sizes) {
    std::vector<std::string> names;
    for (size_t i = 0; i < sizes.size(); ++i) names.push_back("part" + std::to_string(i) + "_" + std::to_string(g.num_nodes()));
    return g.add_node("Split", "split" + std::to_string(g.num_nodes()), {x, ints(g, "sizes", sizes)}, names,
                      {{"axis", axis}})->outputs;
  };
  out.push_back(on_input("split_halves_multiplied", filled({6, 40}, 23), [split](Graph& g, Value* x) {
    const std::vector<Value*> parts = split(g, node(g, "Mul", {x, g.add_constant("two", Tensor::scalar_f32(2.0f))}), 1, {20, 20});
    return std::vector<Value*>{node(g, "Mul", {parts[0], node(g, "Sigmoid", {parts[1]})})};
  }, 2));
  out.push_back(on_input("split_unequal_parts", filled({3, 10, 17}, 24), [split](Graph& g, Value* x) {
    const std::vector<Value*> parts = split(g, x, 1, {3, 2, 5});
    return std::vector<Value*>{node(g, "Exp", {parts[0]}), parts[2]};
  }));
  out.push_back({"split_of_a_symbolic_axis",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim(4)});
                   const std::vector<Value*> parts = g.add_node("Split", "split", {x}, {"p0", "p1"},
                                                                {{"axis", int64_t{0}}, {"num_outputs", int64_t{2}}})->outputs;
                   g.add_output(node(g, "Add", {parts[0], parts[1]}));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({24, 4}, 25)}}, {{"x", filled({8, 4}, 26)}}};
                 }});
  // Tile as Expand (passes/tile_as_expand.h): repeats of the first axis, of the last (the
  // vectorised one) and of both, each one kernel with what reads it; an Expand to its input's
  // own shape is its input.
  for (const auto& [name, repeats] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"tile_rows", {3, 1}}, {"tile_columns", {1, 4}}, {"tile_both", {2, 3}}}) {
    out.push_back(on_input(name, filled({5, 24}, 27), [repeats](Graph& g, Value* x) {
      Value* tiled = node(g, "Tile", {node(g, "Expand", {x, ints(g, "ones", {1, 1})}), ints(g, "repeats", repeats)});
      return std::vector<Value*>{node(g, "Add", {tiled, g.add_constant("one", Tensor::scalar_f32(1.0f))})};
    }, 1));
  }
  // Rotary embeddings' rotate_half (passes/rotate_half_as_reversal.h): q * cos + rotate_half(q)
  // * sin in one kernel, on a plain input, on heads moved forward by a Transpose (the halves are
  // split before it), and with a symbolic batch.
  auto rotary = [slice](Graph& g, Value* q, int64_t d) {
    Value* rotated = g.add_node("Concat", "rotate_half",
                                {node(g, "Neg", {slice(g, q, {d / 2}, {d}, {-1}, {1})}), slice(g, q, {0}, {d / 2}, {-1}, {1})},
                                {"rotated"}, {{"axis", int64_t{-1}}})->outputs[0];
    Value* cos = g.add_constant("cos", filled({d}, 28)), *sin = g.add_constant("sin", filled({d}, 29));
    return node(g, "Add", {node(g, "Mul", {q, cos}), node(g, "Mul", {rotated, sin})});
  };
  out.push_back(on_input("rotary_rotate_half", filled({2, 6, 64}, 30), [rotary](Graph& g, Value* x) {
    return std::vector<Value*>{rotary(g, x, 64)};
  }, 1));
  out.push_back(on_input("rotary_of_transposed_heads", filled({1, 10, 4, 32}, 31), [rotary](Graph& g, Value* x) {
    Value* heads = node(g, "Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    return std::vector<Value*>{rotary(g, heads, 32)};
  }, 1));
  // Heads split off the rows of the largest input: the kernel numbers its units in that input's
  // order (fusion/loop_nest.cpp), and still reads a smaller input and writes two outputs in the
  // domain's order; rows of 40 end in a scalar tail on every ISA.
  out.push_back(on_input("split_heads_units_in_input_order", filled({2, 12, 4, 40}, 34), [](Graph& g, Value* x) {
    Value* heads = node(g, "Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    Value* scaled = node(g, "Mul", {heads, g.add_constant("scale", Tensor::scalar_f32(0.125f))});
    Value* t = node(g, "Tanh", {node(g, "Add", {scaled, g.add_constant("position", filled({4, 12, 40}, 35))})});
    return std::vector<Value*>{t, node(g, "Exp", {t})};
  }, 1));
  // F.normalize under a dynamic batch: the norm expanded to x's shape by Expand(norm, Shape(x)).
  // The target's value is known to shape inference (x's symbolic shape), so the Expand is a
  // broadcast load of the Div's kernel, not a tensor written out.
  out.push_back({"expand_to_symbolic_shape",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim(6), Dim(40)});
                   Value* sq = node(g, "ReduceSum", {node(g, "Mul", {x, x})}, {{"axes", std::vector<int64_t>{2}}});
                   Value* norm = node(g, "Sqrt", {sq});
                   Value* wide = node(g, "Expand", {norm, node(g, "Shape", {x})});
                   g.add_output(node(g, "Div", {x, wide}));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({3, 6, 40}, 36)}}, {{"x", filled({1, 6, 40}, 37)}}};
                 },
                 2, true});
  out.push_back({"rotary_symbolic_batch",
                 [rotary](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim(5), Dim(16)});
                   g.add_output(rotary(g, x, 16));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({3, 5, 16}, 32)}}, {{"x", filled({1, 5, 16}, 33)}}};
                 },
                 1});
  // Grouped-query attention (passes/repeated_kv_as_broadcast.h): keys and values repeated for
  // 3 query heads each, read in place as a broadcast batch dim; no Expand is written out.
  out.push_back({"grouped_query_attention",
                 [](Graph& g) {
                   Value* q = g.add_input("q", DType::f32, {Dim(1), Dim(6), Dim(10), Dim(16)});
                   Value* k = g.add_input("k", DType::f32, {Dim(1), Dim(2), Dim(10), Dim(16)});
                   Value* v = g.add_input("v", DType::f32, {Dim(1), Dim(2), Dim(10), Dim(16)});
                   auto repeat_kv = [&](Value* x) {
                     Value* u = node(g, "Unsqueeze", {x, ints(g, "axis", {2})});
                     Value* e = node(g, "Expand", {u, ints(g, "to", {1, 2, 3, 10, 16})});
                     return node(g, "Reshape", {e, ints(g, "heads", {1, 6, 10, 16})});
                   };
                   Value* kt = node(g, "Transpose", {repeat_kv(k)}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
                   Value* p = node(g, "Softmax", {node(g, "MatMul", {q, kt})}, {{"axis", int64_t{-1}}});
                   Value* ctx = node(g, "MatMul", {p, repeat_kv(v)});
                   g.add_output(node(g, "Transpose", {ctx}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
                   return std::vector<std::map<std::string, Tensor>>{
                       {{"q", filled({1, 6, 10, 16}, 34)}, {"k", filled({1, 2, 10, 16}, 35)}, {"v", filled({1, 2, 10, 16}, 36)}}};
                 },
                 1});
  // Symbolic batch, run at two sizes.
  out.push_back({"symbolic_slice",
                 [slice](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim(16), Dim(40)});
                   g.add_output(node(g, "Tanh", {slice(g, x, {5}, {25}, {2}, {1})}));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({3, 16, 40}, 20)}},
                                                                     {{"x", filled({1, 16, 40}, 21)}}};
                 },
                 1});
  out.push_back({"symbolic_split_softmax_merge",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim(8), Dim(64)});
                   Value* shape = ints(g, "split", {0, 8, 2, 32});  // 0: keep the batch dim
                   Value* heads = node(g, "Reshape", {node(g, "Mul", {x, g.add_constant("k", Tensor::scalar_f32(0.7f))}), shape});
                   Value* probs = node(g, "Softmax", {heads}, {{"axis", int64_t{-1}}});
                   Value* merged = node(g, "Reshape", {probs, ints(g, "merge", {0, 8, 64})});
                   g.add_output(node(g, "Add", {merged, x}));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({3, 8, 64}, 11)}},
                                                                     {{"x", filled({1, 8, 64}, 12)}}};
                 },
                 1});
  // A zero Pad before a Conv is the Conv's padding (passes/pad_into_conv.h): no Pad step left.
  Case padded_conv = on_input("zero_pad_into_conv", filled({1, 3, 10, 9}, 13), [](Graph& g, Value* x) {
    Value* padded = node(g, "Pad", {x, ints(g, "pads", {0, 0, 2, 1, 0, 0, 1, 2}), g.add_constant("zero", Tensor::scalar_f32(0.0f))});
    Value* conv = node(g, "Conv", {padded, g.add_constant("w", filled({5, 3, 3, 3}, 14)), g.add_constant("b", filled({5}, 15))},
                       {{"pads", std::vector<int64_t>{1, 0, 0, 1}}, {"strides", std::vector<int64_t>{2, 1}}});
    return std::vector<Value*>{node(g, "Relu", {conv})};
  });
  out.push_back(padded_conv);
  return out;
}

TEST(ViewFusionPlan, AZeroPadBeforeAConvLeavesNoStep) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(1), Dim(2), Dim(6), Dim(6)});
  Value* padded = node(g, "Pad", {x, ints(g, "pads", {0, 0, 1, 1, 0, 0, 1, 1})});
  g.add_output(node(g, "Conv", {padded, g.add_constant("w", filled({2, 2, 3, 3}, 16))}));
  g.infer_shapes();
  driver::ExecutorCounters counters;
  driver::Executor exe(g, e2e::executor_options(), counters);
  for (const auto& step : exe.plan().steps) {
    EXPECT_FALSE(step.kind != fusion::StepKind::Kernel && step.node->op == "Pad") << fusion::print_plan(exe.plan());
  }
}

INSTANTIATE_TEST_SUITE_P(Graphs, ViewFusion, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace tilefuse
