#include "api/inspect.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/dot_writer.h"

namespace tilefuse::api {
namespace {

using ::testing::HasSubstr;

const Dim N = SymExpr::symbol("N");

// y = Relu(x @ w) with x: f32[N, 16], w: constant f32[16, 8] (512 bytes), y: f32[N, 8].
Graph small_graph() {
  Graph g;
  g.name = "small";
  Value* x = g.add_input("x", DType::f32, {N, 16});
  Value* w = g.add_constant("w", Tensor(DType::f32, {16, 8}));
  Node* mm = g.add_node("MatMul", "mm", {x, w}, {"h"});
  mm->outputs[0]->shape = {N, 8};
  Node* relu = g.add_node("Relu", "relu", {mm->outputs[0]}, {"y"});
  relu->outputs[0]->shape = {N, 8};
  Node* relu2 = g.add_node("Relu", "relu2", {relu->outputs[0]}, {"z\"q"});
  relu2->outputs[0]->dtype = DType::f16;
  relu2->outputs[0]->shape = {N, 8};
  g.set_outputs({relu->outputs[0], relu2->outputs[0]});
  return g;
}

const TensorInfo& find(const InspectReport& report, const std::string& name) {
  for (const TensorInfo& t : report.tensors) {
    if (t.name == name) return t;
  }
  throw std::runtime_error("no tensor " + name);
}

TEST(Inspect, CountsNodesByOpType) {
  InspectReport report = inspect_graph(small_graph());
  EXPECT_EQ(report.num_nodes, 3);
  EXPECT_EQ(report.op_counts, (std::map<std::string, int64_t>{{"MatMul", 1}, {"Relu", 2}}));
}

TEST(Inspect, BytesAreExpressionsOverSymbols) {
  InspectReport report = inspect_graph(small_graph());
  EXPECT_EQ(find(report, "w").bytes, Dim(16 * 8 * 4));
  EXPECT_EQ(find(report, "x").bytes, N * 64);
  EXPECT_EQ(find(report, "z\"q").bytes, N * 16);  // f16: 2 bytes
  EXPECT_EQ(find(report, "h").role, TensorRole::intermediate);
  EXPECT_EQ(find(report, "y").role, TensorRole::output);
  EXPECT_EQ(report.bytes_by_role.at(TensorRole::constant), Dim(512));
  EXPECT_EQ(report.bytes_by_role.at(TensorRole::output), N * 48);
  EXPECT_EQ(report.total_bytes, N * 64 + 512 + N * 32 + N * 48);
}

TEST(Inspect, JsonHasIntegersForStaticBytesAndTextForSymbolic) {
  nlohmann::json json = report_to_json(inspect_graph(small_graph()));
  EXPECT_EQ(json["ops"]["Relu"], 2);
  EXPECT_EQ(json["bytes"]["constant"], 512);
  EXPECT_EQ(json["bytes"]["input"], (N * 64).to_string());
  EXPECT_EQ(json["tensors"][0]["name"], "x");
  EXPECT_EQ(json["tensors"][0]["shape"], "[N, 16]");
}

TEST(Inspect, TableShowsEveryTensorWithTypeAndBytes) {
  std::string table = report_to_table(inspect_graph(small_graph()));
  EXPECT_THAT(table, HasSubstr("f32[N, 16]"));
  EXPECT_THAT(table, HasSubstr("512"));
  EXPECT_THAT(table, HasSubstr("MatMul"));
}

TEST(DotWriter, OneNodePerOpEdgesLabelledWithTypes) {
  std::string dot = graph_to_dot(small_graph());
  EXPECT_THAT(dot, HasSubstr("digraph \"small\""));
  EXPECT_THAT(dot, HasSubstr("label=\"MatMul\\nmm\""));
  EXPECT_THAT(dot, HasSubstr("-> n0 [label=\"f32[N, 16]\"]"));      // x into the MatMul
  EXPECT_THAT(dot, HasSubstr("n0 -> n1 [label=\"f32[N, 8]\"]"));    // MatMul into Relu
  EXPECT_THAT(dot, HasSubstr("label=\"z\\\"q\\nf16[N, 8]\""));     // quotes escaped
  EXPECT_THAT(dot, HasSubstr("shape=note"));                        // the constant
  EXPECT_THAT(dot, HasSubstr("shape=doubleoctagon"));               // the outputs
}

}  // namespace
}  // namespace tilefuse::api
