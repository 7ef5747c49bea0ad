// Random graphs that exercise how the executor wires steps together rather than what kernels
// compute: several outputs, outputs that are views of intermediates, outputs that later steps
// also read, graph inputs and constants as outputs, the same value listed twice, unused inputs,
// index maps around products (a transposed operand, strided and reversed slices, a self-Concat),
// MatMul (library) and Concat (host) steps between kernels, Linear layers with GELU (which the
// fused mode folds into the GEMM unless another step reads the product), products the fused mode
// rewrites (a Gemm with transB and a bias, a transposed result, columns taken apart by a Split,
// GELU's tanh form after a Reshape, SiLU), symbolic dims. The arithmetic is
// kept to a few cheap ops so that kernels repeat across cases and the suite stays fast; the
// kernels' arithmetic is what graph_spec.h covers.
//
// As in graph_spec.h, every field is a free choice that the builder interprets modulo what is
// valid at that point, so every shrunk spec still builds a valid graph.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include <rapidcheck.h>

#include "property/graph_builder.h"

namespace tilefuse::property {

enum class StepKind { Unary, Binary, View, MatMul, Concat, RewrittenProduct, Convolution };

struct StepSpec {
  StepKind kind = StepKind::Unary;
  int which = 0;    // the op or view within its kind
  int operand = 0;  // an earlier value, modulo their count
  int other = 0;    // second operand (binary, concat): an earlier value if it fits, else a new input
};

struct StructureSpec {
  std::vector<int64_t> dims;  // the first input's shape: rank 1-3, dims 1-9
  bool symbolic = true;
  std::vector<StepSpec> steps;
  std::vector<int> extra_outputs;  // values (modulo their count) listed as outputs besides the unused ones
  bool input_as_output = false;    // the first graph input is also a graph output
  bool constant_as_output = false;
  bool unused_input = false;
  uint64_t data_seed = 0;
};

rc::Gen<StructureSpec> structure_spec();

BuiltGraph build_structure(const StructureSpec& spec);

// The same spec with other dims of the same rank (symbolic graphs run on several).
StructureSpec with_dims(StructureSpec spec, std::vector<int64_t> dims);

void showValue(const StructureSpec& spec, std::ostream& os);

}  // namespace tilefuse::property
