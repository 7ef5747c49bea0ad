// Gather and GatherElements inside kernels (fusion::GatherLoad): the gather is a load of the
// kernel that consumes it, through the index read at each point. Each graph runs fused against
// the reference interpreter, as one kernel and nothing else where the gather must fuse. GatherElements: the last
// axis (torch.gather's usual case) with negative indices, the first and a middle axis with int32
// indices, f16 data, a row reduction and a column reduction of what was gathered, a symbolic dim
// (the jit kernel), and data also read as it is (no fusion, still right). Gather: an embedding
// lookup plus positions, index_select, a scalar index (x[:, 3]), indices of rank 2 on a middle
// axis, and a softmax over gathered rows. Both in kernels whose values keep their own types (an
// integer mask cast to f32, integer data). An index out of range is reported by name, whichever
// worker met it.
#include <gtest/gtest.h>

#include "e2e/fused_vs_reference.h"

namespace tilefuse {
namespace {

using e2e::filled;
using e2e::node;
using Case = e2e::GraphCase;

class GatherLoads : public ::testing::TestWithParam<Case> {};

TEST_P(GatherLoads, FusedMatchesReference) { e2e::expect_fused_matches_reference(GetParam()); }

// Indices in [-extent, extent): every one in range, negative ones wrapped.
Tensor indices(DType dtype, std::vector<int64_t> shape, int64_t extent, int salt) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_i64(i, (i * 7919 + salt * 31) % (2 * extent) - extent);
  return t;
}

Value* gather(Graph& g, Value* data, Value* index, int64_t axis, const std::string& op = "GatherElements") {
  return node(g, op, {data, index}, {{"axis", axis}});
}

// data [shape] and indices [index_shape] as inputs; `body` builds the outputs from the gather.
Case gathered(std::string name, DType dtype, std::vector<int64_t> shape, std::vector<int64_t> index_shape, int64_t axis,
              DType index_dtype, std::function<std::vector<Value*>(Graph&, Value*)> body, size_t max_kernels,
              const std::string& op = "GatherElements") {
  return {std::move(name),
          [=](Graph& g) {
            Value* x = g.add_input("x", dtype, std::vector<Dim>(shape.begin(), shape.end()));
            Value* idx = g.add_input("idx", index_dtype, std::vector<Dim>(index_shape.begin(), index_shape.end()));
            for (Value* out : body(g, gather(g, x, idx, axis, op))) g.add_output(out);
            const int64_t extent = shape[static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis)];
            return std::vector<std::map<std::string, Tensor>>{
                {{"x", filled(dtype, shape, 1)}, {"idx", indices(index_dtype, index_shape, extent, 2)}}};
          },
          max_kernels, true};
}

std::vector<Case> cases() {
  auto plus_one = [](Graph& g, Value* v) {
    return std::vector<Value*>{node(g, "Add", {v, g.add_constant("one", Tensor::scalar_f32(1.0f))})};
  };
  std::vector<Case> out;
  out.push_back(gathered("last_axis", DType::f32, {37, 300}, {37, 129}, -1, DType::i64, plus_one, 1));
  out.push_back(gathered("first_axis", DType::f32, {50, 70}, {20, 70}, 0, DType::i64, plus_one, 1));
  out.push_back(gathered("middle_axis_int32", DType::f32, {3, 40, 33}, {3, 9, 33}, 1, DType::i32,
                         [](Graph& g, Value* v) { return std::vector<Value*>{node(g, "Tanh", {v})}; }, 1));
  out.push_back(gathered("f16", DType::f16, {12, 64}, {12, 48}, 1, DType::i64,
                         [](Graph& g, Value* v) { return std::vector<Value*>{node(g, "Neg", {v})}; }, 1));
  out.push_back(gathered("row_sum", DType::f32, {16, 200}, {16, 90}, 1, DType::i64,
                         [](Graph& g, Value* v) {
                           return std::vector<Value*>{node(g, "ReduceSum", {node(g, "Exp", {v})}, {{"axes", std::vector<int64_t>{1}}})};
                         },
                         1));
  out.push_back(gathered("column_sum", DType::f32, {40, 96}, {64, 96}, 0, DType::i64,
                         [](Graph& g, Value* v) {
                           return std::vector<Value*>{node(g, "ReduceSum", {node(g, "Abs", {v})}, {{"axes", std::vector<int64_t>{0}}})};
                         },
                         1));
  out.push_back({"data_also_read_as_it_is",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim(8), Dim(30)});
                   Value* idx = g.add_input("idx", DType::i64, {Dim(8), Dim(30)});
                   g.add_output(node(g, "Mul", {gather(g, x, idx, 1), node(g, "Exp", {x})}));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({8, 30}, 3)}, {"idx", indices(DType::i64, {8, 30}, 30, 4)}}};
                 }});
  out.push_back({"symbolic_rows",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim(64)});
                   Value* idx = g.add_input("idx", DType::i64, {Dim::symbol("N"), Dim(32)});
                   g.add_output(node(g, "Sigmoid", {gather(g, x, idx, 1)}));
                   return std::vector<std::map<std::string, Tensor>>{
                       {{"x", filled({33, 64}, 5)}, {"idx", indices(DType::i64, {33, 32}, 64, 6)}},
                       {{"x", filled({5, 64}, 7)}, {"idx", indices(DType::i64, {5, 32}, 64, 8)}}};
                 },
                 1, true});
  // Gather: rows of an embedding table by token id, plus a position table.
  out.push_back(gathered("embedding_lookup", DType::f32, {50, 64}, {3, 7}, 0, DType::i64,
                         [](Graph& g, Value* v) {
                           return std::vector<Value*>{node(g, "Add", {v, g.add_constant("positions", filled({7, 64}, 11))})};
                         },
                         1, "Gather"));
  out.push_back(gathered("index_select", DType::f32, {40, 33}, {12}, 0, DType::i32, plus_one, 1, "Gather"));
  out.push_back(gathered("middle_axis_rank2_indices", DType::f32, {3, 20, 5}, {2, 4}, 1, DType::i64,
                         [](Graph& g, Value* v) { return std::vector<Value*>{node(g, "Tanh", {v})}; }, 1, "Gather"));
  out.push_back(gathered("softmax_of_rows", DType::f32, {30, 48}, {9}, 0, DType::i64,
                         [](Graph& g, Value* v) { return std::vector<Value*>{node(g, "Softmax", {v}, {{"axis", int64_t{-1}}})}; },
                         1, "Gather"));
  // Gathers in kernels whose values keep their own types (a scalar loop): an embedding lookup
  // times an integer mask cast to f32 (memory_bound.py's embedding_positions_mask), and integer
  // data gathered and computed on as integers.
  out.push_back({"embedding_times_integer_mask",
                 [](Graph& g) {
                   Value* table = g.add_constant("table", filled({50, 16}, 13));
                   Value* ids = g.add_input("ids", DType::i64, {Dim(2), Dim(7)});
                   Value* mask = g.add_input("mask", DType::i64, {Dim(2), Dim(7), Dim(1)});
                   Value* rows = node(g, "Add", {gather(g, table, ids, 0, "Gather"), g.add_constant("positions", filled({7, 16}, 14))});
                   g.add_output(node(g, "Mul", {rows, node(g, "Cast", {mask}, {{"to", int64_t{1}}})}));
                   return std::vector<std::map<std::string, Tensor>>{
                       {{"ids", indices(DType::i64, {2, 7}, 50, 9)}, {"mask", indices(DType::i64, {2, 7, 1}, 2, 10)}}};
                 },
                 1, true});
  out.push_back({"integer_data",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::i64, {Dim(6), Dim(20)});
                   Value* idx = g.add_input("idx", DType::i32, {Dim(6), Dim(11)});
                   Value* gathered = gather(g, x, idx, 1);
                   g.add_output(node(g, "Mul", {gathered, g.add_constant("three", Tensor::scalar_i64(3))}));
                   g.add_output(node(g, "Gather", {x, idx}, {{"axis", int64_t{0}}}));
                   return std::vector<std::map<std::string, Tensor>>{
                       {{"x", indices(DType::i64, {6, 20}, 1000, 11)}, {"idx", indices(DType::i32, {6, 11}, 6, 12)}}};
                 }});
  out.push_back({"scalar_index",  // x[:, 3]
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim(4), Dim(10), Dim(6)});
                   Value* three = g.add_constant("three", Tensor::scalar_i64(3));
                   g.add_output(node(g, "Exp", {gather(g, x, three, 1, "Gather")}));
                   return std::vector<std::map<std::string, Tensor>>{{{"x", filled({4, 10, 6}, 12)}}};
                 },
                 1, true});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Graphs, GatherLoads, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// Runs g's single kernel with `bad` written at index element `at` of input "idx" (otherwise
// `good`'s): the run stops with `op`, the index and the allowed range of an axis of size 40;
// in range again, the next run is right.
void expect_out_of_range_reported(Graph& g, const std::map<std::string, Tensor>& good, size_t at, const std::string& op) {
  g.infer_shapes();
  const driver::ExecutorOptions options = e2e::executor_options();
  driver::ExecutorCounters counters;
  driver::Executor exe(g, options, counters);
  size_t kernels = 0;
  for (const auto& step : exe.plan().steps) kernels += step.kind == fusion::StepKind::Kernel;
  ASSERT_EQ(kernels, 1u) << fusion::print_plan(exe.plan());
  for (int64_t bad : {40, -41}) {
    std::map<std::string, Tensor> inputs = good;
    inputs["idx"] = good.at("idx").clone();
    inputs["idx"].set_i64(static_cast<int64_t>(at), bad);
    try {
      exe.run(inputs);
      ADD_FAILURE() << "index " << bad << " must be reported";
    } catch (const UserError& e) {
      const std::string expected = "index " + std::to_string(bad) + " is out of range for axis";
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("of size 40 (allowed [-40, 39])"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
    }
  }
  const std::vector<Tensor> expected = reference::run_graph(g, good);
  EXPECT_TRUE(compare_tensors(exe.run(good).at(0), expected.at(0), {1e-5, 1e-5}).ok);
}

// An index out of range anywhere (here in the last rows, which the second worker runs) is
// reported by name.
TEST(GatherLoadErrors, AnIndexOutOfRangeIsReportedByName) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(64), Dim(40)});
  Value* idx = g.add_input("idx", DType::i64, {Dim(64), Dim(16)});
  g.add_output(node(g, "Add", {gather(g, x, idx, 1), g.add_constant("one", Tensor::scalar_f32(1.0f))}));
  expect_out_of_range_reported(g, {{"x", filled({64, 40}, 10)}, {"idx", indices(DType::i64, {64, 16}, 40, 9)}},
                               60 * 16 + 5, "GatherElements");
}

// The same in a kernel whose values keep their types, where a row's id is checked once before
// the loop over the row (an embedding lookup times an integer mask).
TEST(GatherLoadErrors, AnEmbeddingIdOutOfRangeIsReportedByName) {
  Graph g;
  Value* table = g.add_input("table", DType::f32, {Dim(40), Dim(24)});
  Value* ids = g.add_input("idx", DType::i64, {Dim(64)});
  Value* mask = g.add_input("mask", DType::i64, {Dim(64), Dim(1)});
  g.add_output(node(g, "Mul", {gather(g, table, ids, 0, "Gather"), node(g, "Cast", {mask}, {{"to", int64_t{1}}})}));
  expect_out_of_range_reported(g,
                               {{"table", filled({40, 24}, 10)},
                                {"idx", indices(DType::i64, {64}, 40, 9)},
                                {"mask", indices(DType::i64, {64, 1}, 2, 10)}},
                               61, "Gather");
}

}  // namespace
}  // namespace tilefuse
