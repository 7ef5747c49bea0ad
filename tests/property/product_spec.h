// Random products: MatMul with any batch arrangement numpy broadcasting allows (B a matrix, with
// A's batch dims, with some of them 1, or A a matrix against a batched B), operands written
// transposed (a Transpose the fused mode folds into the engine's strides, or attention's
// head split), constant weights (packed once) or input ones, Gemm with every flag, alpha, beta
// and C shape, then what the fused mode folds into the GEMM's store (a bias, Relu, ReLU6,
// HardSwish, Sigmoid, GELU and its tanh form and SiLU written out, a scale with a residual
// Add) and what it folds around it (a Split of the columns into two products, a transposed
// result); attention as exported (Q K^T scaled, masked, Softmax, times V, heads merged); and
// Einsum with labels of every role (batch, rows, columns, contracted, summed in one operand
// only; two rows or columns labels, two contracted ones or none), in any order in each operand
// and the output (einsum_spec).
// Sizes are drawn around the SIMD widths (tails of 8 and 16) and past the engine's cache
// blocks (a depth past kc, rows past mc, columns past nb), f16 and bf16 models too.
//
// As in graph_spec.h, every field is a free choice that the builder interprets modulo what is
// valid, so every shrunk spec still builds a valid graph.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include <rapidcheck.h>

#include "ir/tensor_compare.h"
#include "property/graph_builder.h"

namespace tilefuse::property {

enum class ProductForm { MatMul, Gemm, Attention, Einsum };

struct ProductSpec {
  ProductForm form = ProductForm::MatMul;
  std::vector<int64_t> batch;  // A's leading dims, 0-2 of 1-4 (attention: batch and heads)
  // MatMul: 0 B a matrix; 1 B with A's batch dims; 2 the same with the dims in `broadcast` 1;
  // 3 A a matrix (its batch dims dropped) against a B with them.
  int b_batch = 0;
  int broadcast = 0;  // bit mask over the batch dims
  int64_t m = 1, k = 1, n = 1;  // attention: queries, head size, keys
  // 0 A as it is; 1 A written [.., k, m] and transposed; 2 (two batch dims) A written
  // [b0, m, b1, k] and its heads split out, as attention's Q.
  int transpose_a = 0;
  bool transpose_b = false;  // B written [.., n, k] and transposed (Gemm: transB)
  bool constant_b = true;    // B a constant (packed when the model is prepared) or an input
  // MatMul: 0 none, 1 + bias, 2 + bias and Relu, 3 + bias and GELU (erf, written out), 4 + bias
  // and GELU's tanh form, 5 SiLU written out, 6 * 0.125 + a residual input, 7 + bias and
  // Clip(0, 6), 8 HardSwish, 9 + an input bias and Sigmoid. Attention: 0 no mask, 1 a mask
  // of keys [n], 2 a mask [m, n], 3 a mask [batch, 1, 1, n].
  int epilogue = 0;
  // 0 none; 1 a Split of the columns in two (the fused mode folds it where B is a constant and
  // both parts are 32 columns or more); 2 the result transposed (rank 3 and more: its leading
  // dims rotated, which folds; a matrix: swapped); 3 a Softmax over the rows.
  int after = 0;
  int64_t split = 1;        // the first part's width, modulo n - 1, plus 1
  bool symbolic = false;    // A's first dim (attention: the sequence) symbolic, also run at other_size
  int64_t other_size = 1;
  DType dtype = DType::f32;  // f16 and bf16 models: MatMul and Gemm forms, epilogues 0-2, after 0-1
  // Gemm: bit 0 transA, bit 1 alpha 0.5, bit 2 beta 0.5; (gemm >> 3) % 5 picks C: none, a
  // constant [n], an input [m, n], a constant scalar, an input [m, 1].
  int gemm = 0;
  // Einsum: which labels beyond batch, m, k and n it has, and how each term orders them
  // (einsum_labels in product_spec.cpp).
  int einsum = 0;
  uint64_t data_seed = 0;
};

rc::Gen<ProductSpec> product_spec();

// The graph, with A's first dim (or the sequence) `size` when it is symbolic.
BuiltGraph build_product(const ProductSpec& spec, int64_t size);

// The symbol's value as drawn (A's first dim, or the sequence), whether or not it is a symbol.
int64_t drawn_size(const ProductSpec& spec);

// The spec as the builder reads it (sizes bounded, fields the form ignores cleared).
ProductSpec normalised(ProductSpec spec);

// What the engine's sums may differ from the reference's by: a bound that grows with the depth
// of the products, and two units of the half types' precision.
Tolerance product_tolerance(const ProductSpec& spec);

void showValue(const ProductSpec& spec, std::ostream& os);

}  // namespace tilefuse::property
