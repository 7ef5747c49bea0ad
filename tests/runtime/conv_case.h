// A Conv or FusedConv test case, the graph that holds it, and the check of a prepared library
// call against the reference interpreter: shared by the implicit-GEMM convolution's tests
// (conv_gemm_test.cpp) and Winograd's (conv_winograd_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "runtime/library_call.h"
#include "runtime/sgemm.h"

namespace tilefuse::runtime::conv_test {

using Ints = std::vector<int64_t>;

struct ConvCase {
  std::string name;
  std::vector<int64_t> x, w;
  AttributeMap attrs;
  bool bias = true;
  bool constant_weight = true;
  bool residual = false;         // a FusedConv with input Z
  std::string activation = "";  // a FusedConv with this activation (and its params in attrs)
};

// gtest names a failing case by this, not by its bytes.
inline void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

inline Tensor filled(std::vector<int64_t> shape, int salt) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, ((i * 31 + salt * 7) % 53) / 13.0 - 2.0);
  return t;
}

// The case's node in `g`, with its inputs; `inputs` gets the tensors a run takes.
inline Node* build_conv(Graph& g, const ConvCase& c, std::vector<Tensor>& inputs) {
  Value* w = c.constant_weight ? g.add_constant("w", filled(c.w, 1)) : g.add_input("w", DType::f32, shape_of(c.w));
  std::vector<Value*> values = {g.add_input("x", DType::f32, shape_of(c.x)), w};
  values.push_back(c.bias ? g.add_constant("b", filled({c.w[0]}, 2)) : nullptr);
  const bool fused = c.residual || !c.activation.empty();
  AttributeMap attrs = c.attrs;
  if (!c.activation.empty()) attrs["activation"] = c.activation;
  std::vector<int64_t> out_shape;
  if (c.residual) {
    Graph probe;  // the output's shape, for the residual's
    Node* plain = probe.add_node("Conv", "conv", {probe.add_input("x", DType::f32, shape_of(c.x)),
                                                  probe.add_input("w", DType::f32, shape_of(c.w))}, {"y"}, c.attrs);
    probe.infer_shapes();
    for (const Dim& d : plain->outputs[0]->shape) out_shape.push_back(d.value());
    values.push_back(g.add_input("z", DType::f32, shape_of(out_shape)));
  }
  while (values.back() == nullptr) values.pop_back();
  Node* conv = g.add_node(fused ? "FusedConv" : "Conv", "conv", values, {"y"}, attrs);
  g.infer_shapes();
  inputs = {filled(c.x, 3), filled(c.w, 1), c.bias ? *values[2]->constant : Tensor()};
  if (c.residual) inputs.push_back(filled(out_shape, 4));
  return conv;
}

// Runs the call prepared in `precision` twice on teams of each size and compares with the
// reference: in f32 at the engines' accuracy (1e-4), in bf16 within the README's bound for it
// (2e-2 of the largest output) and not at f32's accuracy (which would mean bf16 was not used).
inline void expect_matches_reference(const ConvCase& c, const Node& conv, const std::vector<Tensor>& inputs,
                                     const std::vector<int>& team_sizes, Precision precision = Precision::f32) {
  Tensor expected = reference::evaluate_node(conv, inputs).at(0);
  std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
  std::unique_ptr<LibraryCall> call = prepare_library_call(conv, default_blocking(48 << 10, 2 << 20), precision);
  if (precision == Precision::bf16) {
    double largest = 0;
    for (int64_t i = 0; i < expected.numel(); ++i) largest = std::max(largest, std::abs(expected.get_f64(i)));
    for (int workers : team_sizes) {
      ThreadTeam team(workers);
      call->run(team, inputs, outs);
      EXPECT_TRUE(compare_tensors(outs[0], expected, {0, 2e-2 * largest}).ok) << c.name << " on " << workers;
      EXPECT_FALSE(compare_tensors(outs[0], expected, {1e-4, 1e-4}).ok) << c.name << ": f32's accuracy in bf16";
    }
    return;
  }
  for (int workers : team_sizes) {
    ThreadTeam team(workers);
    for (int run = 0; run < 2; ++run) {  // the second run reuses the scratch buffers
      call->run(team, inputs, outs);
      // The engines sum a depth in other orders than the reference (OpenBLAS's blocked loops,
      // where there is no AVX-512): up to 360 products of values near 2 differ by ~2e-5.
      CompareResult r = compare_tensors(outs[0], expected, {1e-4, 1e-4});
      EXPECT_TRUE(r.ok) << c.name << " run " << run << " on " << workers << " workers: " << r.message;
    }
  }
}

}  // namespace tilefuse::runtime::conv_test
