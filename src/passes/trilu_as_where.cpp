#include "passes/trilu_as_where.h"

#include <string>
#include <vector>

#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

constexpr int64_t kMaxMaskElements = int64_t{1} << 24;

bool rewrite(Graph& graph, Node& trilu) {
  Value* x = trilu.input(0);
  if (x == nullptr || x->rank() < 2 || trilu.outputs.size() != 1) return false;
  const Dim& rows_dim = x->shape[static_cast<size_t>(x->rank() - 2)];
  const Dim& cols_dim = x->shape[static_cast<size_t>(x->rank() - 1)];
  if (!rows_dim.is_const() || !cols_dim.is_const()) return false;
  const int64_t rows = rows_dim.value(), cols = cols_dim.value();
  if (rows * cols > kMaxMaskElements) return false;
  int64_t k = 0;
  if (trilu.has_input(1)) {
    const auto ks = constant_ints(trilu, 1);
    if (!ks || ks->size() != 1) return false;
    k = (*ks)[0];
  }
  const bool upper = trilu.attr_int("upper", 1) != 0;
  Tensor mask(DType::boolean, {rows, cols});
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) mask.set_i64(i * cols + j, upper ? j - i >= k : j - i <= k);
  }
  Tensor zero(x->dtype, {});
  zero.set_f64(0, 0.0);
  const std::string& name = trilu.name;
  Value* keep = graph.add_constant(graph.unique_value_name(name + "_mask"), std::move(mask));
  Value* nothing = graph.add_constant(graph.unique_value_name(name + "_zero"), std::move(zero));
  replace_value(graph, trilu.outputs[0], "Where", name, {keep, x, nothing});
  return true;
}

}  // namespace

int trilu_as_where(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return n.op == "Trilu" && rewrite(graph, n); });
}

}  // namespace tilefuse::passes
