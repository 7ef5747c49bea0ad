#include "api/inspect.h"

#include <filesystem>
#include <iostream>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/dot_writer.h"
#include "api/model.h"
#include "fusion/execution_plan.h"

namespace tilefuse::api {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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

// h = x @ w (a library call), y = Neg(h), z = Sigmoid(y); outputs y and z, all f32[N, 8]
// except x: f32[N, 16]. Fused: the MatMul, then one kernel for Neg+Sigmoid (Neg is no activation
// the GEMM's store takes).
Graph matmul_epilogue() {
  Graph g;
  g.name = "epilogue";
  Value* x = g.add_input("x", DType::f32, {N, 16});
  Value* w = g.add_constant("w", Tensor(DType::f32, {16, 8}));
  Value* h = g.add_node("MatMul", "mm", {x, w}, {"h"})->outputs[0];
  Value* y = g.add_node("Neg", "neg", {h}, {"y"})->outputs[0];
  Value* z = g.add_node("Sigmoid", "sigmoid", {y}, {"z"})->outputs[0];
  g.set_outputs({y, z});
  g.infer_shapes();
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

TEST(InspectPlan, StepsListLibraryCallAndFusedKernelWithTheirTensors) {
  const PlanSummary plan = inspect_graph(matmul_epilogue()).plan;
  ASSERT_EQ(plan.steps.size(), 2u);
  const PlanStepInfo& mm = plan.steps[0];
  EXPECT_EQ(mm.kind, fusion::StepKind::LibraryCall);
  EXPECT_EQ(mm.name, "mm");
  ASSERT_EQ(mm.inputs.size(), 2u);
  EXPECT_EQ(mm.inputs[1].name, "w");
  EXPECT_EQ(mm.inputs[1].role, TensorRole::constant);
  EXPECT_EQ(mm.bytes, N * 64 + 512 + N * 32);
  const PlanStepInfo& kernel = plan.steps[1];
  EXPECT_EQ(kernel.kind, fusion::StepKind::Kernel);
  ASSERT_EQ(kernel.ops.size(), 2u);
  EXPECT_EQ(kernel.ops[0].op, "Neg");
  EXPECT_EQ(kernel.ops[1].node, "sigmoid");
  ASSERT_EQ(kernel.inputs.size(), 1u);
  EXPECT_EQ(kernel.inputs[0].name, "h");
  EXPECT_EQ(kernel.inputs[0].role, TensorRole::intermediate);
  ASSERT_EQ(kernel.outputs.size(), 2u);  // y is a graph output and Sigmoid's input: both written
  EXPECT_EQ(kernel.outputs[0].role, TensorRole::output);
  EXPECT_EQ(kernel.bytes, N * 96);
}

TEST(InspectPlan, HostOpsTheRuntimeRunsAreLibraryCallsOthersHostSteps) {
  // An embedding lookup (runtime code), integer arithmetic (a generated kernel) and an integer
  // division by a computed divisor (reference kernels, which report a zero divisor).
  Graph g;
  Value* table = g.add_constant("table", Tensor(DType::f32, {10, 4}));
  Value* ids = g.add_input("ids", DType::i64, {Dim(3)});
  g.add_output(g.add_node("Gather", "embed", {table, ids}, {"rows"})->outputs[0]);
  g.add_output(g.add_node("Add", "twice", {ids, ids}, {"twice"})->outputs[0]);
  g.add_output(g.add_node("Div", "ratio", {ids, ids}, {"ratio"})->outputs[0]);
  g.infer_shapes();
  const PlanSummary plan = inspect_graph(g).plan;
  ASSERT_EQ(plan.steps.size(), 3u);
  std::map<std::string, fusion::StepKind> kinds;
  for (const auto& step : plan.steps) kinds[step.ops.size() == 1 ? step.ops[0].node : step.name] = step.kind;
  EXPECT_EQ(kinds["embed"], fusion::StepKind::LibraryCall);
  EXPECT_EQ(kinds["twice"], fusion::StepKind::Kernel);
  EXPECT_EQ(kinds["ratio"], fusion::StepKind::Host);
}

TEST(InspectPlan, ShapeOnlyStepsAreMarkedAndLeftOutOfTheLaunches) {
  // Position ids from x's dynamic shape: Shape -> Squeeze -> Range are fixed per input shape.
  Graph g;
  Value* x = g.add_input("x", DType::f32, {N, 8});
  Value* shape = g.add_node("Shape", "shape", {x}, {"shape"}, {{"end", int64_t{1}}})->outputs[0];
  Value* n = g.add_node("Squeeze", "n", {shape}, {"n"})->outputs[0];
  Value* zero = g.add_constant("zero", Tensor::scalar_i64(0));
  Value* one = g.add_constant("one", Tensor::scalar_i64(1));
  g.add_output(g.add_node("Range", "positions", {zero, n, one}, {"positions"})->outputs[0]);
  g.add_output(g.add_node("Relu", "relu", {x}, {"y"})->outputs[0]);
  g.infer_shapes();
  const InspectReport report = inspect_graph(g);
  const PlanSummary& plan = report.plan;
  std::set<std::string> per_shape;
  for (const PlanStepInfo& step : plan.steps) {
    if (step.per_shape) per_shape.insert(step.name);
  }
  EXPECT_EQ(per_shape, (std::set<std::string>{"shape", "n", "positions"}));
  EXPECT_EQ(plan.kernels_fused, 1);  // the Relu kernel
  EXPECT_THAT(report_to_table(report), HasSubstr("host (per shape)"));
  EXPECT_EQ(report_to_json(report)["plan"][0]["per_shape"], true);
}

TEST(InspectPlan, TotalsCompareFusedWithUnfusedAtAStatedSize) {
  const PlanSummary plan = inspect_graph(matmul_epilogue()).plan;
  EXPECT_EQ(plan.kernels_fused, 2);
  EXPECT_EQ(plan.kernels_unfused, 3);
  // MatMul reads x and w and writes h in both; unfused, Neg writes y and Sigmoid reads it back.
  const Dim matmul = N * 64 + 512 + N * 32;
  EXPECT_EQ(plan.bytes_fused, matmul + N * 96);
  EXPECT_EQ(plan.bytes_unfused, matmul + N * 64 + N * 64);
  EXPECT_DOUBLE_EQ(plan.launch_reduction, 1.0 / 3);
  const double n = kSymbolSizeForRatios;
  EXPECT_DOUBLE_EQ(plan.bytes_reduction, 1 - (192 * n + 512) / (224 * n + 512));
  EXPECT_EQ(plan.ratio_bindings, (SymbolBindings{{"N", kSymbolSizeForRatios}}));
}

TEST(InspectPlan, JsonHasPlanStepsAndTotals) {
  const nlohmann::json json = report_to_json(inspect_graph(matmul_epilogue()));
  ASSERT_EQ(json["plan"].size(), 2u);
  EXPECT_EQ(json["plan"][0]["kind"], "library");
  EXPECT_EQ(json["plan"][1]["kind"], "kernel");
  EXPECT_EQ(json["plan"][1]["ops"][1], (nlohmann::json{{"op", "Sigmoid"}, {"node", "sigmoid"}}));
  EXPECT_EQ(json["plan"][1]["inputs"][0]["bytes"], (N * 32).to_string());
  EXPECT_EQ(json["plan"][1]["domain"], "[N, 8]");
  EXPECT_EQ(json["kernels_fused"], 2);
  EXPECT_EQ(json["kernels_unfused"], 3);
  EXPECT_EQ(json["bytes_fused"], (N * 192 + 512).to_string());
  EXPECT_EQ(json["launch_reduction"], 0.333);
  EXPECT_EQ(json["bytes_reduction_at"]["N"], kSymbolSizeForRatios);
}

TEST(InspectPlan, StaticBytesAreIntegersWithoutABinding) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {4, 8});
  Value* y = g.add_node("Exp", "exp", {x}, {"y"})->outputs[0];
  g.add_output(g.add_node("Neg", "neg", {y}, {"z"})->outputs[0]);
  g.infer_shapes();
  const nlohmann::json json = report_to_json(inspect_graph(g));
  EXPECT_EQ(json["bytes_fused"], 2 * 128);
  EXPECT_EQ(json["bytes_unfused"], 4 * 128);
  EXPECT_EQ(json["bytes_reduction"], 0.5);
  EXPECT_EQ(json["launch_reduction"], 0.5);
  EXPECT_FALSE(json.contains("bytes_reduction_at"));
}

TEST(InspectPlan, TableShowsTotalsAndOneLinePerStep) {
  const std::string table = report_to_table(inspect_graph(matmul_epilogue()));
  EXPECT_THAT(table, HasSubstr("fusion plan: 2 launches (unfused 3, -33%)"));
  EXPECT_THAT(table, HasSubstr("at N=1024"));
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\n  1 +kernel +\S+ +Neg Sigmoid +96\*N\n)"))) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\n  0 +library +mm +MatMul )"))) << table;
}

TEST(InspectPlan, TableSaysPlusWhereFusionAddsLaunches) {
  // x - mean(x) over 1 MiB: the mean splits into partial and combine kernels
  // (passes/reduction_splitting.h), three launches against the unfused two.
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(512), Dim(512)});
  Value* mean = g.add_node("ReduceMean", "mean", {x}, {"m"})->outputs[0];
  g.add_output(g.add_node("Sub", "sub", {x, mean}, {"y"})->outputs[0]);
  g.infer_shapes();
  EXPECT_THAT(report_to_table(inspect_graph(g)), HasSubstr("fusion plan: 3 launches (unfused 2, +50%)"));
}

// x @ w + b, then Relu: one GEMM whose store adds the bias and applies the Relu; the report
// says so in the table and in JSON.
TEST(InspectPlan, AGemmShowsWhatItsStoreAdds) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {4, 16});
  Value* h = g.add_node("MatMul", "mm", {x, g.add_constant("w", Tensor(DType::f32, {16, 8}))}, {"h"})->outputs[0];
  Value* y = g.add_node("Add", "bias", {h, g.add_constant("b", Tensor(DType::f32, {8}))}, {"y"})->outputs[0];
  g.add_output(g.add_node("Relu", "relu", {y}, {"z"})->outputs[0]);
  g.infer_shapes();
  const InspectReport report = inspect_graph(g);
  ASSERT_EQ(report.plan.steps.size(), 1u);
  EXPECT_EQ(report.plan.steps[0].epilogue, (std::vector<std::string>{"bias", "Relu"}));
  EXPECT_TRUE(std::regex_search(report_to_table(report), std::regex(R"(\n  0 +library +mm +FusedMatMul \+bias \+Relu )")))
      << report_to_table(report);
  EXPECT_EQ(report_to_json(report)["plan"][0]["epilogue"], (nlohmann::json{"bias", "Relu"}));
}

// The text of the cluster that begins at `header`, up to its closing brace.
std::string cluster_text(const std::string& dot, const std::string& header) {
  size_t begin = dot.find(header);
  if (begin == std::string::npos) return "";
  return dot.substr(begin, dot.find("\n  }\n", begin) - begin);
}

TEST(DotWriter, FusedKernelIsAClusterAndLibraryCallsAreStyledApart) {
  const fusion::ExecutionPlan planned = fusion::plan_for_execution(matmul_epilogue(), true);
  const std::string dot = plan_to_dot(planned);
  const std::string kernel = cluster_text(dot, "subgraph cluster_k0 {");
  EXPECT_THAT(kernel, HasSubstr(fmt::format("label=\"{}\"", planned.plan.steps[1].kernel.name)));
  EXPECT_THAT(kernel, HasSubstr("label=\"Neg\\nneg\""));
  EXPECT_THAT(kernel, HasSubstr("label=\"Sigmoid\\nsigmoid\""));
  EXPECT_THAT(kernel, Not(HasSubstr("MatMul")));
  EXPECT_THAT(kernel, Not(HasSubstr("->")));  // edges outside clusters: they would pull nodes in
  EXPECT_THAT(dot, Not(HasSubstr("cluster_k1")));
  EXPECT_TRUE(std::regex_search(dot, std::regex(R"(label="MatMul\\nmm", shape=box3d)"))) << dot;
  EXPECT_THAT(cluster_text(dot, "subgraph cluster_legend {"), HasSubstr("library call"));
}

TEST(DotWriter, EdgesLabelledWithTypesAndNamesEscaped) {
  const std::string dot = plan_to_dot(fusion::plan_for_execution(small_graph(), true));
  EXPECT_THAT(dot, HasSubstr("digraph \"small\""));
  EXPECT_TRUE(std::regex_search(dot, std::regex(R"(v0 -> n\d+ \[label="f32\[N, 16\]"\])"))) << dot;  // x in
  EXPECT_THAT(dot, HasSubstr("label=\"z\\\"q\\nf16[N, 8]\""));  // quotes escaped
  EXPECT_THAT(dot, HasSubstr("shape=note"));                    // the constant
  EXPECT_THAT(dot, HasSubstr("shape=doubleoctagon"));           // the outputs
}

TEST(DotWriter, HostOpsAndUnplannedOpsHaveTheirOwnStyles) {
  // An i32 division by a computed divisor is not generated (host op); the Shape node feeds
  // nothing the outputs need.
  Graph g;
  Value* a = g.add_input("a", DType::i32, {4});
  Value* b = g.add_input("b", DType::i32, {4});
  g.add_node("Shape", "unused_shape", {a}, {"s"});
  g.add_output(g.add_node("Div", "int_div", {a, b}, {"c"})->outputs[0]);
  g.infer_shapes();
  const std::string dot = plan_to_dot(fusion::plan_for_execution(g, true));
  EXPECT_TRUE(std::regex_search(dot, std::regex(R"(label="Div\\nint_div", shape=hexagon)"))) << dot;
  EXPECT_TRUE(std::regex_search(dot, std::regex(R"(label="Shape\\nunused_shape", shape=box, style="rounded,dotted")")))
      << dot;
  EXPECT_THAT(dot, Not(HasSubstr("cluster_k0")));
}

// ---- the bundled example models ----

class BundledModelPlan : public ::testing::TestWithParam<std::string> {
 protected:
  Model load() const {
    return load_model(std::string(TILEFUSE_SOURCE_DIR) + "/examples/models/" + GetParam() + ".onnx");
  }
};

// The issue's bar: launches cut by at least 60% and compulsory bytes by at least 50%.
TEST_P(BundledModelPlan, FusionCutsLaunchesAndBytes) {
  const nlohmann::json json = report_to_json(inspect_graph(load().graph));
  std::cout << fmt::format("[ plan     ] {:22} kernels {:>2} fused / {:>2} unfused ({:.0f}% fewer), bytes {} / {} "
                           "({:.0f}% fewer)\n",
                           GetParam(), json["kernels_fused"].get<int>(), json["kernels_unfused"].get<int>(),
                           json["launch_reduction"].get<double>() * 100, json["bytes_fused"].dump(),
                           json["bytes_unfused"].dump(), json["bytes_reduction"].get<double>() * 100);
  EXPECT_GE(json["launch_reduction"].get<double>(), 0.6);
  EXPECT_GE(json["bytes_reduction"].get<double>(), 0.5);
}

// The totals are the sums over the listed steps: launches are the steps that are neither views nor
// computed once per input shape, and
// each step's bytes are its listed inputs and outputs (views move nothing).
TEST_P(BundledModelPlan, TotalsAgreeWithTheListedSteps) {
  const InspectReport report = inspect_graph(load().graph);
  int64_t launches = 0;
  Dim bytes = 0;
  for (const PlanStepInfo& step : report.plan.steps) {
    if (step.kind == fusion::StepKind::View) {
      EXPECT_EQ(step.bytes, Dim(0)) << step.name;
      continue;
    }
    launches += !step.per_shape;
    Dim listed = 0;
    for (const auto* tensors : {&step.inputs, &step.outputs}) {
      for (const TensorInfo& t : *tensors) listed = listed + t.bytes;
    }
    EXPECT_EQ(step.bytes, listed) << step.name;
    bytes = bytes + step.bytes;
  }
  EXPECT_EQ(report.plan.kernels_fused, launches);
  EXPECT_EQ(report.plan.bytes_fused, bytes);
}

TEST_P(BundledModelPlan, DotHasOneNamedClusterPerKernel) {
  const fusion::ExecutionPlan planned = fusion::plan_for_execution(load().graph, true);
  const std::string dot = plan_to_dot(planned);
  size_t kernels = 0;
  for (const fusion::PlanStep& step : planned.plan.steps) {
    if (step.kind != fusion::StepKind::Kernel) continue;
    const std::string cluster = cluster_text(dot, fmt::format("subgraph cluster_k{} {{", kernels++));
    EXPECT_THAT(cluster, HasSubstr(fmt::format("label=\"{}\"", step.kernel.name)));
    for (const Node* node : step.kernel.nodes) EXPECT_THAT(cluster, HasSubstr("\\n" + node->name + "\""));
  }
  EXPECT_GT(kernels, 0u);
  EXPECT_THAT(dot, Not(HasSubstr(fmt::format("cluster_k{} ", kernels))));
}

INSTANTIATE_TEST_SUITE_P(Examples, BundledModelPlan,
                         ::testing::Values("bias_gelu", "elementwise_chain", "layernorm_decomposed",
                                           "layernorm_opset17", "mlp_block", "scale_mask_softmax", "symbolic_batch"));

}  // namespace
}  // namespace tilefuse::api
