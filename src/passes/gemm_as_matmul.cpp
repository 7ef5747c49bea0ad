#include "passes/gemm_as_matmul.h"

#include <optional>

#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

// Gemm's C as a [N] bias, if it is a constant of N f32 values along the columns ([N] or [1, N]).
std::optional<Tensor> bias_vector(const Value* c, int64_t n) {
  if (!c->constant || c->dtype != DType::f32 || c->constant->numel() != n || n == 1) return std::nullopt;
  const std::vector<int64_t>& dims = c->constant->shape();
  if (dims.empty() || dims.size() > 2 || dims.back() != n) return std::nullopt;
  return c->constant->reshaped({n});
}

bool rewrite(Graph& graph, Node& gemm) {
  if (gemm.op != "Gemm" || gemm.outputs[0]->dtype != DType::f32 || !gemm.outputs[0]->shape[1].is_const()) return false;
  if (gemm.attr_float("alpha", 1.0) != 1.0 || gemm.attr_int("transA", 0) != 0) return false;
  std::vector<Value*> inputs = {gemm.input(0), gemm.input(1)};
  AttributeMap attrs;
  if (gemm.attr_int("transB", 0) != 0) attrs["perm_b"] = std::vector<int64_t>{1, 0};
  if (gemm.has_input(2)) {
    const std::optional<Tensor> bias = bias_vector(gemm.input(2), gemm.outputs[0]->shape[1].value());
    if (!bias || gemm.attr_float("beta", 1.0) != 1.0) return false;
    inputs.push_back(graph.add_constant(graph.unique_value_name(gemm.input(2)->name + "_vector"), *bias));
  }
  const bool plain = inputs.size() == 2 && attrs.empty();
  replace_value(graph, gemm.outputs[0], plain ? "MatMul" : "FusedMatMul", gemm.name, inputs, attrs);
  return true;
}

}  // namespace

int express_gemms_as_matmuls(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return rewrite(graph, n); });
}

}  // namespace tilefuse::passes
