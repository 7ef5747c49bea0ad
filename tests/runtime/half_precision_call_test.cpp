// MatMul, FusedMatMul, Gemm, Conv and FusedConv on f16 and bf16 tensors against the reference
// kernels (which compute in double and round to the output's type): constant and computed
// weights, a bias, a transposed operand, batches, a Winograd convolution, a strided one over two
// images, a depthwise one; on 1 and 2 workers. f32 operands are not this call's.
#include "runtime/half_precision_call.h"

#include <gtest/gtest.h>

#include "ir/tensor_compare.h"
#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

struct HalfCase {
  std::string name, op;
  std::vector<std::vector<int64_t>> shapes;  // of the inputs
  AttributeMap attrs;
  bool constant_b = false;
};

void PrintTo(const HalfCase& c, std::ostream* os) { *os << c.name; }

Tensor filled(DType dtype, std::vector<int64_t> shape, int salt) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, ((i * 13 + salt * 5) % 23) / 9.0 - 1.2);
  return t;
}

class HalfPrecisionCallTest : public ::testing::TestWithParam<std::tuple<HalfCase, DType>> {};

TEST_P(HalfPrecisionCallTest, MatchesReference) {
  const auto& [c, dtype] = GetParam();
  Graph g;
  std::vector<Value*> inputs;
  std::vector<Tensor> ins;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    ins.push_back(filled(dtype, c.shapes[i], static_cast<int>(i) + 1));
    const bool constant = (i == 1 && c.constant_b) || i == 2;
    inputs.push_back(constant ? g.add_constant("in" + std::to_string(i), ins.back())
                              : g.add_input("in" + std::to_string(i), dtype, shape_of(c.shapes[i])));
  }
  Node* node = g.add_node(c.op, "mm", inputs, {"y"}, c.attrs);
  g.infer_shapes();
  ASSERT_TRUE(half_precision_call_supports(*node));
  ASSERT_TRUE(library_call_supports(*node));
  Tensor expected = reference::evaluate_node(*node, ins).at(0);
  std::unique_ptr<LibraryCall> call = prepare_library_call(*node, default_blocking(48 << 10, 2 << 20));
  const bool depthwise = c.attrs.count("group") != 0;  // read directly, never packed
  EXPECT_EQ(call->packed_bytes() > 0, c.constant_b && own_gemm_engine() && !depthwise);
  for (int workers : {1, 2}) {
    ThreadTeam team(workers);
    std::vector<Tensor> outs = {Tensor(dtype, expected.shape())};
    for (int run = 0; run < 2; ++run) {  // the second reuses the f32 buffers
      call->run(team, ins, outs);
      // The product is rounded once to the output's type, as the reference rounds it: the sums
      // differ only by f32 ordering, a unit in the last place of f16 or bf16 at most.
      const double ulp = dtype == DType::f16 ? 1e-3 : 8e-3;
      CompareResult r = compare_tensors(outs[0], expected, {ulp, ulp});
      EXPECT_TRUE(r.ok) << c.name << " on " << workers << " workers: " << r.message;
    }
  }
}

using Ints = std::vector<int64_t>;

INSTANTIATE_TEST_SUITE_P(
    Forms, HalfPrecisionCallTest,
    ::testing::Combine(
        ::testing::Values(HalfCase{"Plain", "MatMul", {{13, 40}, {40, 37}}, {}},
                          HalfCase{"ConstantWeight", "MatMul", {{2, 9, 40}, {40, 70}}, {}, true},
                          HalfCase{"BatchBroadcast", "MatMul", {{2, 1, 5, 7}, {3, 7, 4}}, {}},
                          HalfCase{"FusedBiasGelu", "FusedMatMul", {{2, 6, 20}, {20, 35}, {35}},
                                   {{"activation", std::string("Gelu")}}, true},
                          HalfCase{"HeadsQK", "FusedMatMul", {{2, 9, 3, 16}, {2, 9, 3, 16}},
                                   {{"perm_a", Ints{0, 2, 1, 3}}, {"perm_b", Ints{0, 2, 3, 1}}}},
                          HalfCase{"GemmTransposedWithBias", "Gemm", {{20, 13}, {35, 20}, {35}},
                                   {{"transA", int64_t{1}}, {"transB", int64_t{1}}}, true},
                          HalfCase{"WinogradConv", "Conv", {{1, 16, 14, 14}, {24, 16, 3, 3}, {24}},
                                   {{"pads", Ints{1, 1, 1, 1}}}, true},
                          HalfCase{"StridedConvTwoImages", "Conv", {{2, 8, 9, 9}, {12, 8, 3, 3}, {12}},
                                   {{"strides", Ints{2, 2}}}, true},
                          HalfCase{"DepthwiseConv", "Conv", {{1, 6, 9, 9}, {6, 1, 3, 3}, {6}},
                                   {{"group", int64_t{6}}, {"pads", Ints{1, 1, 1, 1}}}, true}),
        ::testing::Values(DType::f16, DType::bf16)),
    [](const auto& info) {
      return std::get<0>(info.param).name + (std::get<1>(info.param) == DType::f16 ? "F16" : "Bf16");
    });

}  // namespace
}  // namespace tilefuse::runtime
