// Text form of a Graph, readable by people and by parse_graph (parser.h). Golden tests of passes
// are written in it: text IR in, text IR out. The format:
//
//   graph mlp(%x: f32[N, 128]) -> (%out) {
//     %w1: f32[2, 2] = const dense<1, 0.5, -2, 3>
//     %h: f32[N, 2] = MatMul(%x, %w1) @mm0
//     %lo: f32[N, 1], %hi: f32[N, 1] = Split(%h, none) {axis = 1} @split0
//     %out: f32[N, 1] = Add(%lo, %hi) @add0
//   }
//
// - A value is `%name`, a node's name follows `@`; names that are not plain words
//   ([A-Za-z0-9_./-]) are quoted like strings: `%"onnx::Add_3"`.
// - Every definition carries `dtype[shape]`; dims are SymExpr text (`2*N + 1`). A value with
//   known symbolic contents (Value::sym_value) adds `sym<N, 128>`; a non-constant value holding
//   data (a folded node output, an input with a default) adds `dense<...>`.
// - `none` is an omitted optional input. `#` starts a comment.
// - What inference took for granted about the symbols follows the header, before the
//   constants: `assume nonnegative(seq - 1) "reason"` and `assume broadcast(seq, max(128, seq))
//   "reason"` (Graph::assume_nonnegative, Graph::assume_broadcast).
// - Attributes: int `3`, float `0.5` / `1.0` / `1e-05` / `inf` / `nan` (always distinguishable
//   from ints, and printed so they parse back to the same double), string `"a\"b"`, lists
//   `[1, 2]`, `[1.0]`, `["a"]` (empty: `ints[]`, `floats[]`, `strings[]`), tensor
//   `f32[2] dense<1, 2>`.
// - Tensor data is the flat row-major list of elements: integers in decimal, bool as
//   true/false, floats in the shortest decimal that reads back to the same value (f16/bf16 via
//   their f32 value), non-canonical NaNs as their raw bits (`0x7fc00001`). `dense<...>` marks
//   data left out by PrintOptions::elide_large_constants; such text does not parse back.
// - `external<OFFSET>` instead of `dense<...>`: the data lies elsewhere (a model package's
//   weights file) at byte OFFSET; PrintOptions::place_data writes it there, and
//   ParseOptions::external_data (parser.h) reads it back.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ir/graph.h"

namespace tilefuse {

struct PrintOptions {
  // Replace the data of constants (and tensor attributes) with more than
  // `elide_above_elements` elements by `dense<...>`: keeps golden files short.
  bool elide_large_constants = false;
  int64_t elide_above_elements = 16;
  // When set, tensor data (constants, data-carrying values, tensor attributes) with more than
  // `place_above_elements` elements is handed to it and printed as `external<OFFSET>` with the
  // offset it returns, instead of inline.
  std::function<int64_t(const Tensor&)> place_data;
  int64_t place_above_elements = 16;
};

std::string print_graph(const Graph& graph, const PrintOptions& options = {});

// The characters of a name printed without quotes: [A-Za-z0-9_./-]. The parser reads the same.
bool is_plain_name_char(char c);

}  // namespace tilefuse
