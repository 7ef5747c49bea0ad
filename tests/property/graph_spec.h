// A random graph as plain data, so rapidcheck can generate, shrink and print it. Every field is
// a free choice that the builder (graph_builder.h) interprets modulo what is valid at that point
// (operand index modulo the values so far, axes mask modulo the rank, ...): any spec, including
// every shrunk one, builds a valid graph.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include <rapidcheck.h>

#include "ir/dtype.h"

namespace tilefuse::property {

enum class OpKind { Unary, Binary, Select, Reduce, Transpose, Softmax, LayerNorm, HalfRoundTrip, IntegerDetour, DenseConcat,
                    IndexMap };

struct OpSpec {
  OpKind kind = OpKind::Unary;
  int which = 0;      // the op within its kind (unary function, binary op, comparison, reduction, view)
  int operand = 0;    // first operand: an earlier value, modulo their count
  int other = 0;      // second operand: an earlier value if it broadcasts, else a fresh input
                      // (variant 2, symbolic graphs: with a dim of its own the run makes 1 or equal)
  int axes = 0;       // bit mask of axes (reductions, broadcast 1s of a fresh input) or axis/perm index
  int variant = 0;    // small flags: keepdims, axes as input, gelu approximation, swapped branches
};

struct GraphSpec {
  std::vector<int64_t> dims;        // the first input's shape: rank 1-4, dims 1-17
  bool symbolic = false;            // inputs have symbolic dims: kernels are shape-generic
  DType input_dtype = DType::f32;   // f16/bf16: inputs are cast to f32 and the last value back
  std::vector<OpSpec> ops;
  uint64_t data_seed = 0;           // input values
};

// A dim in 1-17: 1 (broadcasting, degenerate loops) and 16/17 (SIMD tails) are favoured.
rc::Gen<int64_t> dim_gen();

// `symbolic` fixes GraphSpec::symbolic; the number of ops grows with rapidcheck's size.
rc::Gen<GraphSpec> graph_spec(bool symbolic);

// rapidcheck prints counterexamples with this (found by ADL): the spec and the graph it builds.
void showValue(const GraphSpec& spec, std::ostream& os);
}  // namespace tilefuse::property
