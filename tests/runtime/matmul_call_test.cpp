// MatMul, FusedMatMul and Gemm library calls against the reference kernels: batch broadcasting,
// 1-D operands, constant (packed) and non-constant weights, transposed operands through perms
// and transA/transB, bias vectors, activations and every form of Gemm's C, on 1 and 2 workers.
#include "runtime/matmul_call.h"

#include <gtest/gtest.h>

#include <functional>

#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "runtime/bf16_pairs.h"

namespace tilefuse::runtime {
namespace {

struct MatMulCase {
  std::string name, op;
  std::vector<std::vector<int64_t>> shapes;  // of the inputs
  AttributeMap attrs;
  bool constant_b = false;
};

// gtest names a failing case by this, not by its bytes.
void PrintTo(const MatMulCase& c, std::ostream* os) { *os << c.name; }

Tensor filled(std::vector<int64_t> shape, int salt) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, ((i * 13 + salt * 5) % 23) / 9.0 - 1.2);
  return t;
}

class MatMulCallTest : public ::testing::TestWithParam<MatMulCase> {};

// Prepares the case's node in `precision` and compares its runs on 1 and 2 workers with the
// reference kernel, given A and B as `round` leaves them.
void check(const MatMulCase& c, Precision precision, const std::function<double(double)>& round) {
  Graph g;
  std::vector<Value*> inputs;
  std::vector<Tensor> ins;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    ins.push_back(filled(c.shapes[i], static_cast<int>(i) + 1));
    const bool constant = (i == 1 && c.constant_b) || i == 2;
    inputs.push_back(constant ? g.add_constant("in" + std::to_string(i), ins.back())
                              : g.add_input("in" + std::to_string(i), DType::f32, shape_of(c.shapes[i])));
  }
  Node* node = g.add_node(c.op, "mm", inputs, {"y"}, c.attrs);
  g.infer_shapes();
  ASSERT_TRUE(matmul_call_supports(*node));
  std::vector<Tensor> seen = ins;
  for (size_t i = 0; i < 2; ++i) {
    seen[i] = ins[i].clone();
    for (int64_t e = 0; e < seen[i].numel(); ++e) seen[i].set_f64(e, round(seen[i].get_f64(e)));
  }
  Tensor expected = reference::evaluate_node(*node, seen).at(0);
  std::unique_ptr<LibraryCall> call = prepare_matmul_call(*node, default_blocking(48 << 10, 2 << 20), precision);
  // A constant B is packed once, a transposed one too when it is a single matrix.
  const bool packs = c.constant_b && (!c.attrs.count("perm_b") || c.shapes[1].size() == 2);
  EXPECT_EQ(call->packed_bytes() > 0, packs && own_gemm_engine());
  for (int workers : {1, 2}) {
    ThreadTeam team(workers);
    std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
    call->run(team, ins, outs);
    CompareResult r = compare_tensors(outs[0], expected, {1e-5, 1e-5});
    EXPECT_TRUE(r.ok) << c.name << " on " << workers << " workers: " << r.message;
  }
}

TEST_P(MatMulCallTest, MatchesReference) {
  check(GetParam(), Precision::f32, [](double x) { return x; });
}

// In bf16 both operands are rounded to bf16, and nothing else changes: the reference on rounded
// operands is matched to f32 accuracy (the unrounded product is ~1e-3 away). A B computed during
// the run (attention's) too.
TEST_P(MatMulCallTest, Bf16MultipliesRoundedOperands) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no avx512_bf16 (or AVX-512 is not in use)";
  check(GetParam(), Precision::bf16, [](double x) { return bf16_value(bf16_bits(static_cast<float>(x))); });
}

using Ints = std::vector<int64_t>;

INSTANTIATE_TEST_SUITE_P(
    Forms, MatMulCallTest,
    ::testing::Values(
        MatMulCase{"Plain", "MatMul", {{13, 40}, {40, 37}}, {}},
        MatMulCase{"PackedWeight", "MatMul", {{2, 9, 40}, {40, 70}}, {}, true},
        MatMulCase{"BatchBroadcast", "MatMul", {{2, 1, 5, 7}, {3, 7, 4}}, {}},
        MatMulCase{"PackedBatchedWeight", "MatMul", {{3, 5, 7}, {3, 7, 33}}, {}, true},
        MatMulCase{"VectorA", "MatMul", {{7}, {2, 7, 5}}, {}},
        MatMulCase{"VectorB", "MatMul", {{2, 5, 7}, {7}}, {}},
        MatMulCase{"FusedBias", "FusedMatMul", {{2, 6, 20}, {20, 35}, {35}}, {}, true},
        // The activation in the store epilogue (a matrix-vector product's too), or after OpenBLAS.
        MatMulCase{"FusedBiasGelu", "FusedMatMul", {{2, 6, 20}, {20, 35}, {35}}, {{"activation", std::string("Gelu")}}, true},
        MatMulCase{"FusedRelu", "FusedMatMul", {{13, 40}, {40, 37}}, {{"activation", std::string("Relu")}}},
        MatMulCase{"FusedBiasSilu", "FusedMatMul", {{2, 6, 20}, {20, 35}, {35}}, {{"activation", std::string("Silu")}}, true},
        MatMulCase{"FusedGeluTanh", "FusedMatMul", {{13, 40}, {40, 37}}, {{"activation", std::string("GeluTanh")}}},
        MatMulCase{"FusedGeluOneRow", "FusedMatMul", {{1, 40}, {40, 37}, {37}}, {{"activation", std::string("Gelu")}}, true},
        MatMulCase{"HeadsQK", "FusedMatMul", {{2, 9, 3, 16}, {2, 9, 3, 16}},
                   {{"perm_a", Ints{0, 2, 1, 3}}, {"perm_b", Ints{0, 2, 3, 1}}}},
        MatMulCase{"HeadsPV", "FusedMatMul", {{2, 3, 9, 9}, {2, 9, 3, 16}}, {{"perm_b", Ints{0, 2, 1, 3}}}},
        MatMulCase{"TransposedConstantWeight", "FusedMatMul", {{4, 20}, {33, 20}, {33}}, {{"perm_b", Ints{1, 0}}}, true},
        // A Linear layer's [out, in] weight on one row: a matrix-vector product from the panels.
        MatMulCase{"TransposedConstantWeightOneRow", "FusedMatMul", {{1, 40}, {37, 40}, {37}},
                   {{"perm_b", Ints{1, 0}}, {"activation", std::string("Relu")}}, true},
        // Batches of A rows over one B fold into one product of all the rows; those whose rows
        // do not follow each other (a transposed A) are gathered into one matrix first, unless
        // B is narrower than 16 columns; a batched B stays batches.
        MatMulCase{"BatchesFoldIntoRows", "MatMul", {{1, 7, 7, 12}, {12, 20}}, {}, true},
        MatMulCase{"BatchesFoldIntoRowsWithBias", "FusedMatMul", {{2, 3, 5, 12}, {12, 20}, {20}}, {}},
        MatMulCase{"TransposedBatchesGathered", "FusedMatMul", {{2, 5, 3, 12}, {12, 20}},
                   {{"perm_a", Ints{0, 2, 1, 3}}}},
        MatMulCase{"RowsTransposedGathered", "FusedMatMul", {{3, 12, 5}, {12, 20}}, {{"perm_a", Ints{0, 2, 1}}}},
        // nn.MultiheadAttention's input projection: a batch-first input read seq-first, 2 rows
        // per batch, against a packed weight with a bias and an activation.
        MatMulCase{"SeqFirstProjectionGathered", "FusedMatMul", {{2, 29, 24}, {24, 40}, {40}},
                   {{"perm_a", Ints{1, 0, 2}}, {"activation", std::string("Relu")}}, true},
        MatMulCase{"NarrowTransposedBatches", "FusedMatMul", {{2, 5, 3, 12}, {12, 7}}, {{"perm_a", Ints{0, 2, 1, 3}}}},
        MatMulCase{"VectorABroadcastBatches", "MatMul", {{1, 1, 12}, {4, 12, 6}}, {}},
        // A transposed result (perm_y): each batch's rows written at the transposed tensor's
        // strides. Attention's heads back to [B, S, H, D]; broadcast batches; batches of a packed
        // weight that no longer fold into rows (their C rows do not follow), with an epilogue;
        // transposed A rows that are not gathered (their C rows would not follow either).
        MatMulCase{"HeadsPVTransposedResult", "FusedMatMul", {{2, 3, 9, 9}, {2, 9, 3, 16}},
                   {{"perm_b", Ints{0, 2, 1, 3}}, {"perm_y", Ints{0, 2, 1, 3}}}},
        MatMulCase{"BroadcastBatchesTransposedResult", "FusedMatMul", {{2, 1, 5, 7}, {3, 7, 4}},
                   {{"perm_y", Ints{1, 0, 2, 3}}}},
        MatMulCase{"PackedWeightTransposedResult", "FusedMatMul", {{4, 6, 20}, {20, 33}, {33}},
                   {{"perm_y", Ints{1, 0, 2}}, {"activation", std::string("Relu")}}, true},
        MatMulCase{"TransposedBatchesTransposedResult", "FusedMatMul", {{2, 5, 3, 12}, {12, 20}},
                   {{"perm_a", Ints{0, 2, 1, 3}}, {"perm_y", Ints{0, 2, 1, 3}}}},
        MatMulCase{"GemmTransposed", "Gemm", {{20, 13}, {35, 20}}, {{"transA", int64_t{1}}, {"transB", int64_t{1}}}, true},
        MatMulCase{"GemmColumnBias", "Gemm", {{13, 20}, {20, 35}, {35}}, {{"alpha", 0.5}}, true},
        MatMulCase{"GemmRowBias", "Gemm", {{13, 20}, {20, 35}, {13, 1}}, {}},
        MatMulCase{"GemmFullCScaled", "Gemm", {{13, 20}, {20, 35}, {13, 35}}, {{"beta", 0.25}}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tilefuse::runtime
