#include "passes/einsum_as_matmul.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "ir/ops/einsum_equation.h"
#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

using Labels = std::vector<int>;

bool has(const Labels& labels, int l) { return std::find(labels.begin(), labels.end(), l) != labels.end(); }

Labels joined(std::initializer_list<Labels> parts) {
  Labels all;
  for (const Labels& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

// Appends the einsum's ops, named after it, and keeps each value's labels beside it.
class Lowering {
 public:
  Lowering(Graph& graph, const Node& einsum) : graph_(graph), base_(einsum.name) {}

  Value* op(const std::string& type, std::vector<Value*> inputs, AttributeMap attrs = {}) {
    return added_node(graph_, type, base_ + "/" + type + std::to_string(count_++), std::move(inputs), std::move(attrs));
  }
  Value* ints(const std::vector<int64_t>& values) {
    return int_constant(graph_, base_ + "_ints" + std::to_string(count_++), values);
  }

  // x summed over the dims whose labels `keep` rejects.
  Value* sum_away(Value* x, Labels& labels, const std::function<bool(int)>& keep) {
    std::vector<int64_t> axes;
    Labels kept;
    for (size_t d = 0; d < labels.size(); ++d) {
      if (keep(labels[d])) kept.push_back(labels[d]);
      else axes.push_back(static_cast<int64_t>(d));
    }
    if (axes.empty()) return x;
    labels = kept;
    return op("ReduceSum", {x, ints(axes)}, {{"keepdims", int64_t{0}}});
  }

  // x transposed so that its labels come in `order` (the same labels).
  Value* arrange(Value* x, Labels& labels, const Labels& order) {
    std::vector<int64_t> perm;
    for (int l : order) perm.push_back(std::find(labels.begin(), labels.end(), l) - labels.begin());
    labels = order;
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
    return identity ? x : op("Transpose", {x}, {{"perm", perm}});
  }

  Value* unsqueeze(Value* x, const std::vector<int64_t>& axes) { return axes.empty() ? x : op("Unsqueeze", {x, ints(axes)}); }
  Value* squeeze(Value* x, const std::vector<int64_t>& axes) { return axes.empty() ? x : op("Squeeze", {x, ints(axes)}); }

  // x's last `count` dims as one: its size where they are all known, else -1 (the rest copied).
  Value* merge_last(Value* x, size_t count) {
    const int64_t rank = x->rank();
    if (count == 1) return x;
    if (count == 0) return unsqueeze(x, {rank});
    std::vector<int64_t> shape(static_cast<size_t>(rank) - count, 0);
    int64_t merged = 1;
    for (int64_t d = rank - static_cast<int64_t>(count); d < rank; ++d) {
      const Dim& dim = x->shape[static_cast<size_t>(d)];
      merged = dim.is_const() && merged >= 0 ? merged * dim.value() : -1;
    }
    shape.push_back(merged);
    return op("Reshape", {x, ints(shape)});
  }

  // The last two dims swapped.
  Value* transposed(Value* x) {
    std::vector<int64_t> perm(static_cast<size_t>(x->rank()));
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return op("Transpose", {x}, {{"perm", perm}});
  }

 private:
  Graph& graph_;
  std::string base_;
  int count_ = 0;
};

// A (labels la) times B (labels lb), giving the output's labels `out`; la and lb hold no label
// that only they have (summed away before).
Value* product(Lowering& low, Value* a, Labels la, Value* b, Labels lb, const Labels& out) {
  Labels batch, m, n, k;
  for (int l : out) (has(la, l) && has(lb, l) ? batch : has(la, l) ? m : n).push_back(l);
  for (int l : la) {
    if (has(lb, l) && !has(out, l)) k.push_back(l);
  }
  const bool has_m = !m.empty(), has_n = !n.empty();
  const Labels m_extra(m.begin(), m.end() - has_m), n_extra(n.begin(), n.end() - has_n);
  const Labels last_m = has_m ? Labels{m.back()} : Labels{}, last_n = has_n ? Labels{n.back()} : Labels{};
  const auto extra = static_cast<int64_t>(batch.size() + m_extra.size());

  a = low.arrange(a, la, joined({batch, m_extra, last_m, k}));
  std::vector<int64_t> ones_a;  // a 1 for each extra n label, and for M where there is none
  for (size_t i = 0; i < n_extra.size(); ++i) ones_a.push_back(extra + static_cast<int64_t>(i));
  if (!has_m) ones_a.push_back(extra + static_cast<int64_t>(n_extra.size()));
  a = low.merge_last(low.unsqueeze(a, ones_a), k.size());

  // B as [.., K, N]: directly where K is one label or none; else as [.., N, K], K merged last,
  // then transposed.
  const bool direct = k.size() <= 1;
  const auto after_n_extra = extra + static_cast<int64_t>(n_extra.size());
  b = low.arrange(b, lb, direct ? joined({batch, n_extra, k, last_n}) : joined({batch, n_extra, last_n, k}));
  std::vector<int64_t> ones_b;  // a 1 for each extra m label, for N where there is none, for K in an outer product
  for (size_t i = 0; i < m_extra.size(); ++i) ones_b.push_back(static_cast<int64_t>(batch.size() + i));
  if (direct && k.empty()) ones_b.push_back(after_n_extra);
  if (!has_n) ones_b.push_back(direct ? after_n_extra + 1 : after_n_extra);
  b = low.unsqueeze(b, ones_b);
  if (!direct) b = low.transposed(low.merge_last(b, k.size()));

  Value* y = low.op("MatMul", {a, b});  // [batch, m extra, n extra, M or 1, N or 1]
  Labels ly = joined({batch, m_extra, n_extra, last_m, last_n});
  const auto rows = static_cast<int64_t>(batch.size() + m_extra.size() + n_extra.size());
  std::vector<int64_t> ones;
  if (!has_m) ones.push_back(rows);
  if (!has_n) ones.push_back(rows + 1);
  return low.arrange(low.squeeze(y, ones), ly, out);
}

bool lowerable(const Node& node) {
  if (node.inputs.empty() || node.inputs.size() > 2 || node.outputs.size() != 1) return false;
  for (const Value* v : node.inputs) {
    if (v == nullptr || (v->dtype != DType::f32 && v->dtype != DType::f16 && v->dtype != DType::bf16)) return false;
  }
  return true;
}

bool rewrite(Graph& graph, Node& node) {
  if (!lowerable(node)) return false;
  std::vector<int64_t> ranks;
  for (const Value* v : node.inputs) ranks.push_back(v->rank());
  const EinsumEquation eq = parse_einsum(node, node.attr_string("equation", ""), ranks);
  for (const Labels& labels : eq.inputs) {
    if (std::set<int>(labels.begin(), labels.end()).size() != labels.size()) return false;  // a diagonal
  }
  Lowering low(graph, node);
  const Labels& out = eq.output;
  Labels la = eq.inputs[0], lb = eq.inputs.size() > 1 ? eq.inputs[1] : Labels{};
  Value* a = low.sum_away(node.input(0), la, [&](int l) { return has(out, l) || has(lb, l); });
  Value* y = nullptr;
  if (node.inputs.size() == 1) {
    y = low.arrange(a, la, out);
  } else {
    Value* b = low.sum_away(node.input(1), lb, [&](int l) { return has(out, l) || has(la, l); });
    y = product(low, a, la, b, lb, out);
  }
  // The output keeps its name: through an Identity where it is a graph output.
  if (graph.is_output(node.outputs[0]) || y == node.input(0)) {
    replace_value(graph, node.outputs[0], "Identity", node.name, {y});
  } else {
    graph.replace_all_uses(node.outputs[0], y);
  }
  return true;
}

}  // namespace

int einsum_as_matmul(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return n.op == "Einsum" && rewrite(graph, n); });
}

}  // namespace tilefuse::passes
