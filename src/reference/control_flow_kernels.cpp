// If and Loop (ir/ops/control_flow_ops.cpp): each runs its subgraph on the interpreter.
#include <cstring>
#include <limits>

#include "ir/error.h"
#include "ir/ops/control_flow.h"
#include "reference/interpreter.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

bool truth(const Tensor& t, const Node& node, const char* what) {
  if (t.numel() != 1) fail_user("{}: {} must hold one element, got {}", node.describe(), what, t.summary());
  return t.get_i64(0) != 0;
}

std::vector<Tensor> run_subgraph(const Graph& g, const std::vector<Tensor>& inputs) {
  std::map<std::string, Tensor> feed;
  for (size_t i = 0; i < g.inputs().size(); ++i) feed[g.inputs()[i]->name] = inputs.at(i);
  return run_graph(g, feed);
}

std::vector<Tensor> run_if(const Node& node, const std::vector<Tensor>& inputs) {
  const Graph& branch = subgraph(node, truth(inputs.at(0), node, "the condition") ? "then_branch" : "else_branch");
  return run_subgraph(branch, {inputs.begin() + 1, inputs.end()});
}

// The scan outputs of every iteration, one above the other on a new axis 0.
Tensor stack(const std::vector<Tensor>& parts, const Value& element, const Node& node) {
  std::vector<int64_t> dims;
  if (parts.empty()) {
    for (const Dim& d : element.shape) {
      if (!d.is_const()) fail_user("{}: ran no iteration, so its scan output '{}' has no known shape", node.describe(), element.name);
      dims.push_back(d.value());
    }
  } else {
    dims = parts.front().shape();
  }
  dims.insert(dims.begin(), static_cast<int64_t>(parts.size()));
  Tensor out(element.dtype, dims);
  auto* dst = static_cast<uint8_t*>(out.raw());
  for (const Tensor& part : parts) {
    if (part.shape() != parts.front().shape()) {
      fail_user("{}: scan output '{}' changes shape between iterations ({} then {})", node.describe(), element.name,
                parts.front().summary(), part.summary());
    }
    std::memcpy(dst, part.raw(), part.nbytes());
    dst += part.nbytes();
  }
  return out;
}

std::vector<Tensor> run_loop(const Node& node, const std::vector<Tensor>& inputs) {
  const Graph& body = subgraph(node, "body");
  const auto carried = static_cast<size_t>(node.attr_int("carried", 0));
  const int64_t trips = inputs.at(0).defined() ? inputs[0].get_i64(0) : std::numeric_limits<int64_t>::max();
  bool go_on = inputs.at(1).defined() ? truth(inputs[1], node, "cond") : true;
  std::vector<Tensor> state(inputs.begin() + 2, inputs.begin() + 2 + static_cast<std::ptrdiff_t>(carried));
  const std::vector<Tensor> captures(inputs.begin() + 2 + static_cast<std::ptrdiff_t>(carried), inputs.end());
  const size_t scans = body.outputs().size() - 1 - carried;
  std::vector<std::vector<Tensor>> scanned(scans);
  for (int64_t i = 0; i < trips && go_on; ++i) {
    std::vector<Tensor> feed = {Tensor::scalar_i64(i), Tensor(DType::boolean, {})};
    feed[1].set_i64(0, 1);
    feed.insert(feed.end(), state.begin(), state.end());
    feed.insert(feed.end(), captures.begin(), captures.end());
    std::vector<Tensor> out = run_subgraph(body, feed);
    go_on = truth(out[0], node, "the body's cond output");
    for (size_t j = 0; j < carried; ++j) state[j] = out[1 + j];
    for (size_t j = 0; j < scans; ++j) scanned[j].push_back(out[1 + carried + j]);
  }
  std::vector<Tensor> outputs = state;
  for (size_t j = 0; j < scans; ++j) outputs.push_back(stack(scanned[j], *body.outputs()[1 + carried + j], node));
  return outputs;
}

}  // namespace

void register_control_flow_kernels(KernelTable& table) {
  table["If"] = run_if;
  table["Loop"] = run_loop;
}

}  // namespace tilefuse::reference
