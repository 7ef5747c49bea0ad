// Every op tilefuse claims is registered, with the traits the fusion work relies on and the
// arity of the ONNX spec.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/op_registry.h"

namespace tilefuse {
namespace {

const OpDef& def(const std::string& op) {
  const OpDef* d = OpRegistry::global().find(op);
  if (d == nullptr) throw std::runtime_error("op not registered: " + op);
  return *d;
}

struct TraitCase {
  std::vector<std::string> ops;
  uint32_t traits;
};

TEST(OpTraits, EveryClaimedOpHasItsTraits) {
  const std::vector<TraitCase> cases = {
      {{"Add", "Sub", "Mul", "Div", "Mod", "Pow", "Min", "Max", "Where", "Equal", "Less", "Greater", "LessOrEqual",
        "GreaterOrEqual", "And", "Or", "Xor", "Clip"},
       kPointwise | kBroadcasting},
      {{"Neg", "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Relu", "LeakyRelu", "Elu", "Sigmoid",
        "HardSigmoid", "HardSwish", "Softplus", "Tanh", "Erf", "Gelu", "Not", "Cast", "Dropout"},
       kPointwise},
      {{"Identity"}, kPointwise | kDataMovement},
      {{"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"}, kReduction},
      {{"Softmax", "LogSoftmax", "LayerNormalization"}, kReduction | kComposite},
      {{"Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Expand", "Concat", "Split", "Slice", "Gather"},
       kDataMovement},
      {{"MatMul", "Gemm", "FusedMatMul"}, kLibraryCall},  // FusedMatMul: ours, made by a pass
      {{"Shape", "Constant", "ConstantOfShape", "Range", "Size"}, kShapeOp},
      // Issue 11: what the field's exports use.
      {{"Sum", "Mean", "PRelu"}, kPointwise | kBroadcasting},
      {{"Sign", "Round", "Sin", "Cos", "IsNaN", "IsInf", "Selu", "Celu", "Mish"}, kPointwise},
      // What the pattern sweep (bench/real/patterns.py) found missing, and its relatives.
      {{"Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softsign", "ThresholdedRelu",
        "Shrink"},
       kPointwise},
      {{"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}, kReduction},
      {{"BatchNormalization", "InstanceNormalization", "GroupNormalization", "RMSNormalization"}, kComposite},
      {{"Conv", "FusedConv", "PointwiseDepthwiseConv"}, kLibraryCall},  // FusedConv and PointwiseDepthwiseConv: ours, made by passes
      {{"GatherElements", "GatherND", "ScatterElements", "Scatter", "ScatterND", "Tile", "Pad", "Trilu", "Resize",
        "DepthToSpace", "SpaceToDepth"},
       kDataMovement},
      // Host steps: no trait the fusion patterns match.
      {{"ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ArgMax", "ArgMin", "CumSum",
        "TopK", "NonZero", "OneHot", "GridSample", "Einsum", "RNN", "GRU", "LSTM", "If", "Loop", "NonMaxSuppression",
        "RoiAlign"},
       0},
  };
  size_t count = 0;
  for (const auto& c : cases) {
    for (const auto& op : c.ops) {
      EXPECT_EQ(def(op).traits, c.traits) << op;
      EXPECT_TRUE(static_cast<bool>(def(op).infer)) << op;
      ++count;
    }
  }
  EXPECT_EQ(count, OpRegistry::global().names().size()) << "an op is registered but not listed here";
}

TEST(OpTraits, ArityFollowsTheSpec) {
  EXPECT_EQ(def("Clip").min_inputs, 1);
  EXPECT_EQ(def("Clip").max_inputs, 3);
  EXPECT_EQ(def("Dropout").max_outputs, 2);
  EXPECT_EQ(def("LayerNormalization").min_inputs, 2);
  EXPECT_EQ(def("LayerNormalization").max_outputs, 3);
  EXPECT_EQ(def("Slice").min_inputs, 3);
  EXPECT_EQ(def("Slice").max_inputs, 5);
  EXPECT_EQ(def("Constant").max_inputs, 0);
  EXPECT_GT(def("Split").max_outputs, 100);
  EXPECT_GT(def("Concat").max_inputs, 100);
  EXPECT_GT(def("Max").max_inputs, 100);
  ASSERT_NE(def("Cast").find_attr("to"), nullptr);
  EXPECT_TRUE(def("Cast").find_attr("to")->required);
  EXPECT_TRUE(def("Concat").find_attr("axis")->required);
}

}  // namespace
}  // namespace tilefuse
