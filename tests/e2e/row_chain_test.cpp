// Row chains (fusion/row_chains.h, runtime/row_chain.h) against the reference interpreter:
// attention whose scores are too large to stay in cache runs a band of rows at a time, in the
// SuperKernel region and step by step, at 1 and 2 workers. Each case is run twice on its inputs:
// the first run measures the kernel's candidates step by step, the second runs the chain. The
// cases: a scale, a mask added and a transposed result; rows that fill no whole band (1000 rows
// of 1100 scores, K^T a graph input); a causal mask through Where; the V projection computed
// after the softmax in graph order (the chain's steps are made consecutive around it); a result
// the arena could place over the chain's queries; scores that are a graph output, which is no
// chain; and products in bf16.
#include <gtest/gtest.h>

#include "e2e/fused_vs_reference.h"

namespace tilefuse {
namespace {

using e2e::filled;

Value* op(Graph& g, const std::string& type, std::vector<Value*> inputs, AttributeMap attrs = {}) {
  const std::string name = type + std::to_string(g.num_nodes());
  return g.add_node(type, name, std::move(inputs), {name + "_out"}, std::move(attrs))->outputs[0];
}

Value* input(Graph& g, const std::string& name, std::vector<int64_t> shape) {
  return g.add_input(name, DType::f32, std::vector<Dim>(shape.begin(), shape.end()));
}

Value* softmax(Graph& g, Value* x) { return op(g, "Softmax", {x}, {{"axis", int64_t{-1}}}); }

struct ChainCase {
  std::string name;
  std::function<std::map<std::string, Tensor>(Graph&)> build;  // adds the graph, returns its inputs
  size_t chains = 1;  // row chains the fused plan must have
};

// Scores [1, 2, 1024, 1024] (8 MiB): scaled, a padding mask added, softmax, times V, the result
// transposed to [1, 1024, 2, 32] (the second product's perm_y).
ChainCase scaled_masked() {
  return {"scaled_masked_transposed_result", [](Graph& g) {
            Value* q = input(g, "q", {1, 2, 1024, 32});
            Value* k = input(g, "k", {1, 2, 1024, 32});
            Value* v = input(g, "v", {1, 2, 1024, 32});
            Value* mask = input(g, "mask", {1, 1, 1, 1024});
            Value* kt = op(g, "Transpose", {k}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
            Value* scores = op(g, "Mul", {op(g, "MatMul", {q, kt}), g.add_constant("scale", Tensor::scalar_f32(0.125f))});
            Value* p = softmax(g, op(g, "Add", {scores, mask}));
            g.add_output(op(g, "Transpose", {op(g, "MatMul", {p, v})}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
            Tensor m = filled({1, 1, 1, 1024}, 4);
            for (int64_t i = 900; i < 1024; ++i) m.set_f64(i, -10000.0);
            return std::map<std::string, Tensor>{
                {"q", filled({1, 2, 1024, 32}, 1)}, {"k", filled({1, 2, 1024, 32}, 2)}, {"v", filled({1, 2, 1024, 32}, 3)}, {"mask", m}};
          }};
}

// 1000 rows of 1100 scores per batch (no band divides them), K^T a graph input, divided, and a
// mask of each batch's own (the kernel's rows of the second batch read the second mask).
ChainCase ragged_rows() {
  return {"ragged_rows", [](Graph& g) {
            Value* q = input(g, "q", {2, 1, 1000, 24});
            Value* kt = input(g, "kt", {2, 1, 24, 1100});
            Value* v = input(g, "v", {2, 1, 1100, 40});
            Value* mask = input(g, "mask", {2, 1, 1, 1100});
            Value* scores = op(g, "Div", {op(g, "MatMul", {q, kt}), g.add_constant("d", Tensor::scalar_f32(4.0f))});
            g.add_output(op(g, "MatMul", {softmax(g, op(g, "Add", {scores, mask})), v}));
            return std::map<std::string, Tensor>{{"q", filled({2, 1, 1000, 24}, 5)},
                                                 {"kt", filled({2, 1, 24, 1100}, 6)},
                                                 {"v", filled({2, 1, 1100, 40}, 7)},
                                                 {"mask", filled({2, 1, 1, 1100}, 18, 1.0)}};
          }};
}

// A causal mask as GPT-2 exports it: Where(keep, scores, -1e30), keep a constant lower triangle.
ChainCase causal_where() {
  return {"causal_where", [](Graph& g) {
            Value* q = input(g, "q", {1, 1, 1280, 16});
            Value* kt = input(g, "kt", {1, 1, 16, 1280});
            Value* v = input(g, "v", {1, 1, 1280, 16});
            Tensor keep(DType::boolean, {1, 1, 1280, 1280});
            for (int64_t r = 0; r < 1280; ++r) {
              for (int64_t c = 0; c < 1280; ++c) keep.set_f64(r * 1280 + c, c <= r ? 1.0 : 0.0);
            }
            Value* masked = op(g, "Where", {g.add_constant("keep", keep), op(g, "MatMul", {q, kt}),
                                            g.add_constant("low", Tensor::scalar_f32(-1e30f))});
            g.add_output(op(g, "MatMul", {softmax(g, masked), v}));
            return std::map<std::string, Tensor>{
                {"q", filled({1, 1, 1280, 16}, 8)}, {"kt", filled({1, 1, 16, 1280}, 9)}, {"v", filled({1, 1, 1280, 16}, 10)}};
          }};
}

// Q and V projected from x, V by a MatMul added after the softmax: a step between the chain's,
// moved before it.
ChainCase projection_between() {
  return {"projections_around", [](Graph& g) {
            Value* x = input(g, "x", {1, 1024, 8});
            Value* kt = input(g, "kt", {1, 64, 1024});
            Value* q = op(g, "MatMul", {x, g.add_constant("wq", filled({8, 64}, 12))});
            Value* scores = op(g, "Mul", {op(g, "MatMul", {q, kt}), g.add_constant("scale", Tensor::scalar_f32(0.01f))});
            Value* p = softmax(g, scores);
            Value* v = op(g, "MatMul", {x, g.add_constant("wv", filled({8, 16}, 11))});
            g.add_output(op(g, "MatMul", {p, v}));
            return std::map<std::string, Tensor>{{"kt", filled({1, 64, 1024}, 13, 0.0)}, {"x", filled({1, 1024, 8}, 14)}};
          }};
}

// A chain's steps run at once, so what it reads lives to its last step. Here the result (8 MiB,
// 64 heads of 256 rows of 128) is larger than the scores and read by a kernel after the chain, and
// Q is a projection in the arena: planned by each step's own lifetime, the result takes the bytes
// of Q, whose later heads the chain reads after writing the earlier heads' results.
ChainCase result_over_queries() {
  return {"result_over_queries", [](Graph& g) {
            Value* x = input(g, "x", {64, 256, 8});
            Value* kt = input(g, "kt", {64, 16, 64});
            Value* xv = input(g, "xv", {64, 64, 8});
            // Weights an eighth of filled()'s: the products' sums stay small, so f32 rounding stays
            // well inside the tolerance where they cancel.
            const auto weight = [](std::vector<int64_t> shape, int salt) {
              Tensor w = filled(std::move(shape), salt);
              for (int64_t i = 0; i < w.numel(); ++i) w.set_f64(i, w.get_f64(i) / 8);
              return w;
            };
            Value* q = op(g, "MatMul", {x, g.add_constant("wq", weight({8, 16}, 19))});
            Value* v = op(g, "MatMul", {xv, g.add_constant("wv", weight({8, 128}, 20))});
            Value* p = softmax(g, op(g, "MatMul", {q, kt}));
            g.add_output(op(g, "Add", {op(g, "MatMul", {p, v}), g.add_constant("one", Tensor::scalar_f32(1.0f))}));
            return std::map<std::string, Tensor>{
                {"x", filled({64, 256, 8}, 21)}, {"kt", filled({64, 16, 64}, 22)}, {"xv", filled({64, 64, 8}, 23)}};
          }};
}

// The scores are a graph output too: they must exist whole, so there is no chain.
ChainCase scores_as_output() {
  return {"scores_are_an_output",
          [](Graph& g) {
            Value* q = input(g, "q", {1, 1024, 16});
            Value* kt = input(g, "kt", {1, 16, 1024});
            Value* v = input(g, "v", {1, 1024, 16});
            Value* scores = op(g, "MatMul", {q, kt});
            g.add_output(op(g, "MatMul", {softmax(g, scores), v}));
            g.add_output(scores);
            return std::map<std::string, Tensor>{
                {"q", filled({1, 1024, 16}, 15)}, {"kt", filled({1, 16, 1024}, 16)}, {"v", filled({1, 1024, 16}, 17)}};
          },
          0};
}

struct ChainRun {
  ChainCase chain;
  int threads;
  runtime::SuperKernelMode superkernel;
  runtime::Precision precision = runtime::Precision::f32;
};

void PrintTo(const ChainRun& r, std::ostream* out) {
  *out << r.chain.name << ", " << r.threads << " thread(s), superkernel "
       << (r.superkernel == runtime::SuperKernelMode::on ? "on" : "off") << ", " << runtime::precision_name(r.precision);
}

class RowChain : public ::testing::TestWithParam<ChainRun> {};

TEST_P(RowChain, FusedMatchesReference) {
  const ChainRun& run = GetParam();
  Graph g;
  const std::map<std::string, Tensor> inputs = run.chain.build(g);
  g.infer_shapes();
  driver::ExecutorOptions options = e2e::executor_options();
  options.device.threads = run.threads;
  options.superkernel = run.superkernel;
  options.precision = run.precision;
  // bf16 products: within the bound the README promises against f32 (2e-2 of the largest
  // magnitude), where this CPU multiplies in bf16 at all.
  const bool bf16 = runtime::effective_precision(run.precision) == runtime::Precision::bf16;
  if (run.precision == runtime::Precision::bf16 && !bf16) GTEST_SKIP() << "this CPU has no bf16 products";
  const double tolerance = bf16 ? 2e-2 : 1e-5;
  driver::ExecutorCounters counters;
  driver::Executor exe(g, options, counters);
  ASSERT_EQ(exe.plan().row_chains.size(), run.chain.chains) << fusion::print_plan(exe.plan());
  const std::vector<Tensor> expected = reference::run_graph(g, inputs);
  for (int attempt = 0; attempt < 2; ++attempt) {  // tuning first, then the chain
    const std::vector<Tensor> actual = exe.run(inputs);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      const CompareResult r = compare_tensors(actual[i], expected[i], {tolerance, tolerance});
      EXPECT_TRUE(r.ok) << "run " << attempt << ", output " << i << ": " << r.message;
    }
  }
}

std::vector<ChainRun> runs() {
  std::vector<ChainRun> out;
  for (const ChainCase& c :
       {scaled_masked(), ragged_rows(), causal_where(), projection_between(), result_over_queries(), scores_as_output()}) {
    out.push_back({c, 2, runtime::SuperKernelMode::on});
    out.push_back({c, 2, runtime::SuperKernelMode::off});
    out.push_back({c, 1, runtime::SuperKernelMode::off});
  }
  out.push_back({scaled_masked(), 2, runtime::SuperKernelMode::off, runtime::Precision::bf16});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Attention, RowChain, ::testing::ValuesIn(runs()), [](const auto& info) {
  const ChainRun& r = info.param;
  return r.chain.name + "_t" + std::to_string(r.threads) + (r.superkernel == runtime::SuperKernelMode::on ? "_region" : "_steps") +
         (r.precision == runtime::Precision::bf16 ? "_bf16" : "");
});

}  // namespace
}  // namespace tilefuse
