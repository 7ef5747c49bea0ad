#include "passes/pad_into_conv.h"

#include <optional>
#include <string>
#include <vector>

#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

// The Pad's begin and end amounts on every axis of its input, or nothing where it is not a
// foldable zero pad (see the header).
std::optional<std::vector<int64_t>> zero_pads(const Node& pad) {
  const Value* x = pad.input(0);
  if (x == nullptr || x->rank() < 3 || pad.attr_string("mode", "constant") != "constant") return std::nullopt;
  if (pad.has_input(2)) {  // the constant value (opset >= 11)
    const Value* v = pad.input(2);
    if (!v->constant || v->constant->numel() != 1 || v->constant->get_f64(0) != 0.0) return std::nullopt;
  } else if (pad.attr_float("value", 0.0) != 0.0) {
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> listed = pad.has_input(1) ? constant_ints(pad, 1) : std::optional(pad.attr_ints("pads"));
  if (!listed) return std::nullopt;
  const int64_t rank = x->rank();
  std::vector<int64_t> axes;
  if (pad.has_input(3)) {
    const std::optional<std::vector<int64_t>> given = constant_ints(pad, 3);
    if (!given) return std::nullopt;
    for (int64_t a : *given) axes.push_back(a < 0 ? a + rank : a);
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (listed->size() != 2 * axes.size()) return std::nullopt;
  std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);  // begins, then ends, per axis
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k] < 0 || axes[k] >= rank) return std::nullopt;
    pads[static_cast<size_t>(axes[k])] += (*listed)[k];
    pads[static_cast<size_t>(axes[k] + rank)] += (*listed)[k + axes.size()];
  }
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t begin = pads[static_cast<size_t>(d)], end = pads[static_cast<size_t>(d + rank)];
    if (begin < 0 || end < 0 || (d < 2 && (begin != 0 || end != 0))) return std::nullopt;
  }
  return pads;
}

bool fold(Graph& graph, Node& pad) {
  Value* padded = pad.outputs[0];
  if (graph.is_output(padded) || padded->users.empty()) return false;
  for (const Node* user : padded->users) {
    if (user->op != "Conv" || user->input(0) != padded || user->input(1) == padded) return false;
    if (user->attr_string("auto_pad", "NOTSET") != "NOTSET") return false;
  }
  const std::optional<std::vector<int64_t>> pads = zero_pads(pad);
  if (!pads) return false;
  const int64_t rank = pad.input(0)->rank(), spatial = rank - 2;
  const std::vector<Node*> convs = padded->users;
  for (Node* conv : convs) {
    std::vector<int64_t> conv_pads = conv->attr_ints("pads", std::vector<int64_t>(static_cast<size_t>(2 * spatial), 0));
    for (int64_t i = 0; i < spatial; ++i) {
      conv_pads[static_cast<size_t>(i)] += (*pads)[static_cast<size_t>(2 + i)];
      conv_pads[static_cast<size_t>(spatial + i)] += (*pads)[static_cast<size_t>(rank + 2 + i)];
    }
    conv->attrs["pads"] = conv_pads;
  }
  graph.replace_all_uses(padded, pad.input(0));
  return true;
}

}  // namespace

int fold_pads_into_convs(Graph& graph) {
  const int folded = rewrite_nodes(graph, [&](Node& n) { return n.op == "Pad" && fold(graph, n); });
  if (folded > 0) graph.infer_shapes();
  return folded;
}

}  // namespace tilefuse::passes
