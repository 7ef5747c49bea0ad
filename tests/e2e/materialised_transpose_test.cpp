// A Transpose that must materialise: the kernel that reads its input across rows computes blocks
// of rows and reads that input in blocks transposed in registers (codegen: blocks_rows), with
// strided loads left for the columns and rows past the last whole block. Each graph runs fused
// against the reference interpreter, as one kernel: whole and partial blocks, column tails, a
// batch axis outside the transposed pair, two transposed inputs, f16 values, a transposed mask
// (strided loads beside a transposed block), a row-level input that differs per row (no blocks),
// and a symbolic dim run at two sizes (the jit kernel).
#include <gtest/gtest.h>

#include "e2e/fused_vs_reference.h"

namespace tilefuse {
namespace {

using e2e::filled;
using e2e::node;
using e2e::on_input;
using Case = e2e::GraphCase;

class MaterialisedTranspose : public ::testing::TestWithParam<Case> {};

TEST_P(MaterialisedTranspose, FusedMatchesReference) { e2e::expect_fused_matches_reference(GetParam()); }

Value* transpose(Graph& g, Value* x, std::vector<int64_t> perm = {1, 0}) {
  return node(g, "Transpose", {x}, {{"perm", std::move(perm)}});
}

std::vector<Case> cases() {
  std::vector<Case> out;
  // 45 rows (2 whole blocks of 16 and 13 rows) x 37 columns (2 whole blocks and 5).
  out.push_back(on_input("partial_blocks", filled({37, 45}, 1), [](Graph& g, Value* x) {
    return std::vector<Value*>{node(g, "Exp", {transpose(g, node(g, "Sigmoid", {x}))})};
  }, 2));
  // Rows long enough for column tiles; a per-column scale and an input of the output's shape.
  out.push_back({"column_tiles",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim(200), Dim(300)});
                   Value* y = g.add_input("y", DType::f32, {Dim(300), Dim(200)});
                   Value* scaled = node(g, "Mul", {transpose(g, x), g.add_constant("cols", filled({200}, 2))});
                   g.add_output(node(g, "Add", {scaled, y}));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({200, 300}, 3)}, {"y", filled({300, 200}, 4)}}};
                 },
                 1});
  // Channels first to channels last, per image: blocks never straddle two images.
  out.push_back(on_input("channels_last", filled({2, 24, 50}, 5), [](Graph& g, Value* x) {
    return std::vector<Value*>{node(g, "Tanh", {transpose(g, x, {0, 2, 1})})};
  }, 1));
  // Two inputs read across rows.
  out.push_back({"two_transposed_inputs",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim(64), Dim(48)});
                   Value* y = g.add_input("y", DType::f32, {Dim(64), Dim(48)});
                   g.add_output(node(g, "Sub", {transpose(g, x), node(g, "Abs", {transpose(g, y)})}));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({64, 48}, 6)}, {"y", filled({64, 48}, 7)}}};
                 },
                 1});
  // f16 values, converted as each run of the block is loaded.
  out.push_back(on_input("f16", filled(DType::f16, {40, 33}, 8), [](Graph& g, Value* x) {
    return std::vector<Value*>{node(g, "Mul", {transpose(g, x), g.add_constant("two", Tensor::scalar_f32(2.0f).cast(DType::f16))})};
  }, 1));
  // A mask read across rows (strided loads) next to a float input read in blocks.
  out.push_back({"transposed_mask",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim(34), Dim(40)});
                   Value* mask = node(g, "Greater", {x, g.add_constant("zero", Tensor::scalar_f32(0.0f))});
                   g.add_output(node(g, "Where", {transpose(g, mask), transpose(g, x), g.add_constant("fill", Tensor::scalar_f32(-3.0f))}));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({34, 40}, 9)}}};
                 },
                 2});
  // A bias per output row: row-level values differ within a block, so the kernel keeps rows.
  out.push_back({"bias_per_row",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim(48), Dim(40)});
                   g.add_output(node(g, "Add", {transpose(g, x), g.add_constant("bias", filled({40, 1}, 10))}));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({48, 40}, 11)}}};
                 },
                 1});
  // A symbolic dim: the jit kernel, run at two sizes.
  out.push_back({"symbolic_rows",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim(48)});
                   g.add_output(node(g, "Neg", {transpose(g, node(g, "Exp", {x}))}));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({35, 48}, 12)}}, {{"x", filled({20, 48}, 13)}}};
                 },
                 2});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Graphs, MaterialisedTranspose, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace tilefuse
