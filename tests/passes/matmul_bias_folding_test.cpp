// MatMul + Add(constant bias vector) -> FusedMatMul: folded when the Add only adds a [N] vector
// along the last dim to a product nothing else reads, left alone otherwise; the folded graph
// computes what the original did (reference interpreter, before and after).
#include "passes/matmul_bias_folding.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;



struct Linear {
  Graph g;
  Node* mm = nullptr;
  Node* add = nullptr;
  // y = x[2, 5, 8] @ w[8, 6] + bias (bias on the right of the Add unless bias_first).
  explicit Linear(std::vector<int64_t> bias_shape, bool bias_first = false, bool bias_constant = true) {
    Value* x = g.add_input("x", DType::f32, {2, 5, 8});
    mm = g.add_node("MatMul", "mm", {x, g.add_constant("w", filled({8, 6}, 1))}, {"p"});
    Value* b = bias_constant ? g.add_constant("b", filled(bias_shape, 2)) : g.add_input("b", DType::f32, shape_of(bias_shape));
    add = g.add_node("Add", "add", bias_first ? std::vector<Value*>{b, mm->outputs[0]} : std::vector<Value*>{mm->outputs[0], b},
                     {"y"});
    g.set_outputs({add->outputs[0]});
    g.infer_shapes();
  }
};



TEST(FusedMatMulFolding, FoldsAVectorBiasOnEitherSide) {
  for (bool bias_first : {false, true}) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{6}, std::vector<int64_t>{1, 1, 6}}) {
      Linear before(shape, bias_first), after(shape, bias_first);
      EXPECT_EQ(fold_matmul_biases(after.g), 1);
      EXPECT_EQ(count_op(after.g, "FusedMatMul"), 1);
      EXPECT_EQ(count_op(after.g, "MatMul") + count_op(after.g, "Add"), 0);
      EXPECT_EQ(after.g.outputs()[0]->name, "y");
      expect_same_results(before.g, after.g);
    }
  }
}

TEST(FusedMatMulFolding, LeavesAnythingElseAlone) {
  Linear full({5, 6});  // a [M, N] addend is not a bias
  EXPECT_EQ(fold_matmul_biases(full.g), 0);
  Linear scalar({1});  // broadcasts one value, not N
  EXPECT_EQ(fold_matmul_biases(scalar.g), 0);
  Linear input({6}, false, false);  // not a constant
  EXPECT_EQ(fold_matmul_biases(input.g), 0);
  Linear read_twice({6});  // the product is also a graph output
  read_twice.g.set_outputs({read_twice.add->outputs[0], read_twice.mm->outputs[0]});
  EXPECT_EQ(fold_matmul_biases(read_twice.g), 0);
  Linear second_reader({6});  // the product has another reader
  Node* neg = second_reader.g.add_node("Neg", "neg", {second_reader.mm->outputs[0]}, {"z"});
  second_reader.g.set_outputs({second_reader.add->outputs[0], neg->outputs[0]});
  second_reader.g.infer_shapes();
  EXPECT_EQ(fold_matmul_biases(second_reader.g), 0);
}

}  // namespace
}  // namespace tilefuse::passes
