// run_graph: whole graphs, inputs and constants, intermediate lifetimes, and graph-level errors.
#include "reference_test_util.h"

namespace tilefuse::testing {
namespace {

// y = Relu(x + c) * x, with x used twice (its last use is the Mul).
struct SmallGraph {
  Graph g;
  Value* x;
  SmallGraph() {
    x = g.add_input("x", DType::f32, shape_of({3}));
    Value* c = g.add_constant("c", f32({3}, {1, -5, 0}));
    Value* sum = g.add_node("Add", "add", {x, c}, {"sum"})->outputs[0];
    Value* relu = g.add_node("Relu", "relu", {sum}, {"relu"})->outputs[0];
    g.add_output(g.add_node("Mul", "mul", {relu, x}, {"y"})->outputs[0]);
  }
};

TEST(Interpreter, RunsNodesInOrder) {
  SmallGraph s;
  auto out = reference::run_graph(s.g, {{"x", f32({3}, {1, 2, 3})}});
  ASSERT_EQ(out.size(), 1u);
  // Relu([2, -3, 3]) * [1, 2, 3]
  expect_tensor(out[0], DType::f32, {3}, {2, 0, 9});
}

TEST(Interpreter, IntermediateOutputsAndOptionalOutputs) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, shape_of({2}));
  Value* scale = g.add_constant("scale", f32({2}, {1, 1}));
  Node* ln = g.add_node("LayerNormalization", "ln", {x, scale}, {"y"}, {{"epsilon", 0.0}});
  Node* split = g.add_node("Split", "split", {ln->outputs[0]}, {"a", "b"});
  g.set_outputs({split->outputs[1], ln->outputs[0]});
  auto out = reference::run_graph(g, {{"x", f32({2}, {1, 3})}});
  ASSERT_EQ(out.size(), 2u);
  expect_tensor(out[0], DType::f32, {1}, {1});
  expect_tensor(out[1], DType::f32, {2}, {-1, 1});
}

TEST(Interpreter, PassThroughOutputsAreCopies) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, shape_of({1}));
  Value* c = g.add_constant("c", f32({1}, {5}));
  g.set_outputs({x, c});
  Tensor input = f32({1}, {2});
  auto out = reference::run_graph(g, {{"x", input}});
  out[0].data<float>()[0] = 7;
  out[1].data<float>()[0] = 7;
  EXPECT_EQ(input.data<float>()[0], 2);
  EXPECT_EQ(c->constant->data<float>()[0], 5);
}

TEST(Interpreter, MissingInputIsAUserError) {
  SmallGraph s;
  std::string message = user_error([&] { reference::run_graph(s.g, {}); });
  EXPECT_NE(message.find("input 'x'"), std::string::npos) << message;
}

TEST(Interpreter, NodeErrorsNameTheNode) {
  SmallGraph s;
  std::string message = user_error([&] { reference::run_graph(s.g, {{"x", f32({2}, {1, 2})}}); });
  EXPECT_NE(message.find("node 'add' (Add)"), std::string::npos) << message;
}

TEST(Interpreter, UnknownOpIsAUserError) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, shape_of({1}));
  g.add_output(g.add_node("Frobnicate", "f", {x}, {"y"})->outputs[0]);
  std::string message = user_error([&] { reference::run_graph(g, {{"x", f32({1}, {1})}}); });
  EXPECT_NE(message.find("Frobnicate"), std::string::npos) << message;
}

TEST(Interpreter, TooManyNodeOutputsIsAUserError) {
  EXPECT_NE(user_error([] { run_node("Relu", {f32({1}, {1})}, {}, 2); }).find("2 outputs"), std::string::npos);
}

}  // namespace
}  // namespace tilefuse::testing
