#include "ir/graph.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tilefuse {
namespace {

int count_uses(const Value* v, const Node* n) {
  return static_cast<int>(std::count(v->users.begin(), v->users.end(), n));
}

std::vector<std::string> node_names(const Graph& g) {
  std::vector<std::string> out;
  for (const Node* n : g.nodes()) out.push_back(n->name);
  return out;
}

TEST(GraphTest, AddNodeLinksProducersAndUsers) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim::symbol("N")});
  Node* n = g.add_node("Mul", "sq", {x, x}, {"y"});
  EXPECT_EQ(n->outputs.size(), 1u);
  EXPECT_EQ(n->outputs[0]->name, "y");
  EXPECT_EQ(n->outputs[0]->producer, n);
  EXPECT_EQ(count_uses(x, n), 2);  // one entry per use
  Node* unnamed = g.add_node("Relu", "", {n->outputs[0]}, {""});
  EXPECT_FALSE(unnamed->name.empty());
  EXPECT_FALSE(unnamed->outputs[0]->name.empty());
  EXPECT_NE(g.find_value(unnamed->outputs[0]->name), nullptr);
  EXPECT_EQ(g.find_node("sq"), n);
  EXPECT_EQ(g.find_node("nope"), nullptr);
}

TEST(GraphTest, UniqueValueName) {
  Graph g;
  g.add_input("x", DType::f32, {});
  g.add_input("x_1", DType::f32, {});
  EXPECT_EQ(g.unique_value_name("y"), "y");
  EXPECT_EQ(g.unique_value_name("x"), "x_2");
}

TEST(GraphTest, TopoSortMovesProducersFirstAndKeepsTheRestInOrder) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {2});
  Value* placeholder = g.add_constant("p", Tensor(DType::f32, {2}));
  Node* a = g.add_node("Relu", "a", {placeholder}, {"a_out"});
  Node* b = g.add_node("Neg", "b", {x}, {"b_out"});
  Node* c = g.add_node("Exp", "c", {x}, {"c_out"});
  // a now consumes b's output but comes before it.
  g.replace_all_uses(placeholder, b->outputs[0]);
  ASSERT_EQ(a->inputs[0], b->outputs[0]);
  g.topo_sort();
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"b", "a", "c"}));
  (void)c;
}

TEST(GraphTest, TopoSortIsStableOnSortedGraphs) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {2});
  Node* a = g.add_node("Relu", "a", {x}, {"a_out"});
  g.add_node("Neg", "b", {x}, {"b_out"});
  g.add_node("Add", "c", {a->outputs[0], x}, {"c_out"});
  g.add_node("Exp", "d", {x}, {"d_out"});
  g.topo_sort();
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(GraphTest, TopoSortRejectsCycles) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {2});
  Value* placeholder = g.add_constant("p", Tensor(DType::f32, {2}));
  Node* a = g.add_node("Add", "a", {x, placeholder}, {"a_out"});
  Node* b = g.add_node("Relu", "b", {a->outputs[0]}, {"b_out"});
  g.replace_all_uses(placeholder, b->outputs[0]);
  EXPECT_THROW(g.topo_sort(), InternalError);
}

TEST(GraphTest, ReplaceAllUsesMovesEveryUseAndGraphOutputs) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {2});
  Value* y = g.add_input("y", DType::f32, {2});
  Node* twice = g.add_node("Mul", "twice", {x, x}, {"t"});
  Node* both = g.add_node("Add", "both", {x, y}, {"s"});  // already uses y once
  g.add_output(x);
  g.add_output(twice->outputs[0]);
  g.replace_all_uses(x, y);
  EXPECT_EQ(twice->inputs, (std::vector<Value*>{y, y}));
  EXPECT_EQ(both->inputs, (std::vector<Value*>{y, y}));
  EXPECT_TRUE(x->users.empty());
  EXPECT_EQ(count_uses(y, twice), 2);
  EXPECT_EQ(count_uses(y, both), 2);
  EXPECT_EQ(y->users.size(), 4u);
  EXPECT_EQ(g.outputs()[0], y);
  EXPECT_EQ(g.outputs()[1], twice->outputs[0]);
}

TEST(GraphTest, ReplaceAllUsesWithItselfChangesNothing) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {2});
  Node* n = g.add_node("Relu", "r", {x}, {"r_out"});
  g.replace_all_uses(x, x);
  EXPECT_EQ(n->inputs[0], x);
  EXPECT_EQ(count_uses(x, n), 1);
}

TEST(GraphTest, RemoveDeadNodes) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {4});
  Value* unused_input = g.add_input("unused", DType::f32, {4});
  Value* dead_const = g.add_constant("dead_c", Tensor(DType::f32, {4}));
  Value* live_const = g.add_constant("live_c", Tensor(DType::f32, {4}));
  Value* orphan_const = g.add_constant("orphan_c", Tensor(DType::f32, {4}));
  Node* d1 = g.add_node("Add", "d1", {x, dead_const}, {"d1_out"});
  g.add_node("Relu", "d2", {d1->outputs[0]}, {"d2_out"});  // a dead chain
  Node* split = g.add_node("Split", "split", {x}, {"lo", "hi"});
  Node* live = g.add_node("Add", "live", {split->outputs[0], live_const}, {"out"});
  g.add_output(live->outputs[0]);
  g.remove_dead_nodes();
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"split", "live"}));
  EXPECT_EQ(g.find_value("d1_out"), nullptr);
  EXPECT_EQ(g.find_value("dead_c"), nullptr);
  EXPECT_EQ(g.find_value("orphan_c"), nullptr);
  EXPECT_EQ(g.find_value("live_c"), live_const);
  EXPECT_EQ(g.find_value("unused"), unused_input);  // graph inputs stay
  EXPECT_NE(g.find_value("hi"), nullptr);            // unused output of a live node stays
  EXPECT_EQ(x->users, (std::vector<Node*>{split}));
  (void)orphan_const;
}

TEST(GraphTest, RemoveNodeRefusesWhileOutputsAreUsed) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {4});
  Node* a = g.add_node("Relu", "a", {x}, {"a_out"});
  g.add_node("Neg", "b", {a->outputs[0]}, {"b_out"});
  EXPECT_THROW(g.remove_node(a), InternalError);
}

TEST(GraphTest, FreshSymbolAvoidsSymbolsInUse) {
  Graph g;
  g.add_input("x", DType::f32, {Dim::symbol("_d0"), 2 * Dim::symbol("_d2")});
  Value* shape = g.add_input("s", DType::i64, {1});
  shape->sym_value = std::vector<Dim>{Dim::symbol("_d1")};
  Dim a = g.fresh_symbol();
  Dim b = g.fresh_symbol();
  EXPECT_EQ(a.to_string(), "_d3");
  EXPECT_EQ(b.to_string(), "_d4");
  EXPECT_EQ(g.fresh_symbol("batch").to_string(), "batch5");
}

}  // namespace
}  // namespace tilefuse
