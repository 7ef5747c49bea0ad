#include "ir/graph.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace tilefuse {

std::string Value::type_string() const { return std::string(dtype_name(dtype)) + shape_to_string(shape); }

const OpDef& Node::def() const {
  const OpDef* d = OpRegistry::global().find(op);
  if (d == nullptr) fail_internal("{}: op is not registered", describe());
  return *d;
}

namespace {

template <typename T>
const T* get_attr(const AttributeMap& attrs, std::string_view key, const Node& node) {
  auto it = attrs.find(key);
  if (it == attrs.end()) return nullptr;
  const T* v = std::get_if<T>(&it->second);
  if (v == nullptr) {
    fail_user("{}: attribute '{}' has kind {}, expected another kind", node.describe(), key,
              attr_kind_name(attr_kind(it->second)));
  }
  return v;
}

}  // namespace

int64_t Node::attr_int(std::string_view key, int64_t fallback) const {
  const auto* v = get_attr<int64_t>(attrs, key, *this);
  return v ? *v : fallback;
}

double Node::attr_float(std::string_view key, double fallback) const {
  const auto* v = get_attr<double>(attrs, key, *this);
  return v ? *v : fallback;
}

std::string Node::attr_string(std::string_view key, const std::string& fallback) const {
  const auto* v = get_attr<std::string>(attrs, key, *this);
  return v ? *v : fallback;
}

std::vector<int64_t> Node::attr_ints(std::string_view key, const std::vector<int64_t>& fallback) const {
  const auto* v = get_attr<std::vector<int64_t>>(attrs, key, *this);
  return v ? *v : fallback;
}

std::vector<double> Node::attr_floats(std::string_view key) const {
  const auto* v = get_attr<std::vector<double>>(attrs, key, *this);
  return v ? *v : std::vector<double>{};
}

const Tensor* Node::attr_tensor(std::string_view key) const { return get_attr<Tensor>(attrs, key, *this); }

std::string Node::describe() const { return fmt::format("node '{}' ({})", name, op); }

Value* Graph::add_input(std::string name, DType dtype, Shape shape) {
  auto v = std::make_unique<Value>();
  v->name = std::move(name);
  v->dtype = dtype;
  v->shape = std::move(shape);
  inputs_.push_back(v.get());
  values_.push_back(std::move(v));
  return values_.back().get();
}

Value* Graph::add_constant(std::string name, Tensor data) {
  auto v = std::make_unique<Value>();
  v->name = std::move(name);
  v->dtype = data.dtype();
  v->shape = shape_of(data.shape());
  v->constant = std::move(data);
  values_.push_back(std::move(v));
  return values_.back().get();
}

Node* Graph::add_node(std::string op, std::string name, std::vector<Value*> inputs,
                      std::vector<std::string> output_names, AttributeMap attrs) {
  auto node = std::make_unique<Node>();
  node->op = std::move(op);
  node->name = name.empty() ? fmt::format("{}_{}", node->op, nodes_.size()) : std::move(name);
  node->inputs = std::move(inputs);
  node->attrs = std::move(attrs);
  for (Value* in : node->inputs) {
    if (in != nullptr) in->users.push_back(node.get());
  }
  for (auto& out_name : output_names) {
    auto v = std::make_unique<Value>();
    v->name = out_name.empty() ? unique_value_name(node->name + "_out") : std::move(out_name);
    v->producer = node.get();
    node->outputs.push_back(v.get());
    values_.push_back(std::move(v));
  }
  nodes_.push_back(std::move(node));
  return nodes_.back().get();
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

std::vector<Value*> Graph::values() const {
  std::vector<Value*> out;
  out.reserve(values_.size());
  for (const auto& v : values_) out.push_back(v.get());
  return out;
}

Value* Graph::find_value(std::string_view name) const {
  for (const auto& v : values_) {
    if (v->name == name) return v.get();
  }
  return nullptr;
}

Node* Graph::find_node(std::string_view name) const {
  for (const auto& n : nodes_) {
    if (n->name == name) return n.get();
  }
  return nullptr;
}

void Graph::replace_all_uses(Value* from, Value* to) {
  if (from == to) return;
  for (Node* user : from->users) {
    for (Value*& in : user->inputs) {
      if (in == from) in = to;
    }
  }
  // `users` has one entry per use, so every use of `from` becomes exactly one use of `to`
  // (also for a node that already used `to`).
  to->users.insert(to->users.end(), from->users.begin(), from->users.end());
  from->users.clear();
  for (Value*& out : outputs_) {
    if (out == from) out = to;
  }
}

void Graph::remove_node(Node* node) {
  for (Value* in : node->inputs) {
    if (in == nullptr) continue;
    auto it = std::find(in->users.begin(), in->users.end(), node);
    if (it != in->users.end()) in->users.erase(it);
  }
  std::set<Value*> dead(node->outputs.begin(), node->outputs.end());
  for (Value* out : node->outputs) {
    if (!out->users.empty()) fail_internal("remove_node: output '{}' of {} is still used", out->name, node->describe());
  }
  std::erase_if(values_, [&](const std::unique_ptr<Value>& v) { return dead.count(v.get()) != 0; });
  std::erase_if(nodes_, [&](const std::unique_ptr<Node>& n) { return n.get() == node; });
}

void Graph::remove_dead_nodes() {
  std::set<const Value*> graph_outputs(outputs_.begin(), outputs_.end());
  bool changed = true;
  while (changed) {
    changed = false;
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
      Node* n = it->get();
      bool used = std::any_of(n->outputs.begin(), n->outputs.end(),
                              [&](Value* v) { return !v->users.empty() || graph_outputs.count(v); });
      if (!used) {
        // Unused outputs of a live multi-output node stay; a dead node goes whole.
        for (Value* out : n->outputs) out->users.clear();
        remove_node(n);
        changed = true;
        break;
      }
    }
  }
  std::set<const Value*> graph_inputs(inputs_.begin(), inputs_.end());
  std::erase_if(values_, [&](const std::unique_ptr<Value>& v) {
    return v->producer == nullptr && v->users.empty() && !graph_inputs.count(v.get()) &&
           !graph_outputs.count(v.get());
  });
}

void Graph::topo_sort() {
  std::map<const Node*, size_t> position;
  for (size_t i = 0; i < nodes_.size(); ++i) position[nodes_[i].get()] = i;
  std::vector<int> pending(nodes_.size(), 0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (Value* in : nodes_[i]->inputs) {
      if (in != nullptr && in->producer != nullptr) ++pending[i];
    }
  }
  // Kahn's algorithm, always taking the ready node that came first: stable for sorted input.
  std::set<size_t> ready;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (pending[i] == 0) ready.insert(i);
  }
  std::vector<std::unique_ptr<Node>> sorted;
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    for (Value* out : nodes_[i]->outputs) {
      for (Node* user : out->users) {
        size_t j = position.at(user);
        if (--pending[j] == 0) ready.insert(j);
      }
    }
    sorted.push_back(std::move(nodes_[i]));
  }
  if (sorted.size() != position.size()) fail_internal("graph '{}' has a cycle", name);
  nodes_ = std::move(sorted);
}

void Graph::infer_shapes() {
  for (auto& node : nodes_) infer_node(*node, *this);
}

void Graph::assume_nonnegative(Dim dim, std::string reason) {
  for (const Assumption& a : assumptions_) {
    if (a.dim == dim) return;
  }
  assumptions_.push_back({std::move(dim), std::move(reason)});
}

void Graph::assume_broadcast(Dim operand, Dim result, std::string reason) {
  for (const BroadcastAssumption& a : broadcast_assumptions_) {
    if (a.operand == operand && a.result == result) return;
  }
  broadcast_assumptions_.push_back({std::move(operand), std::move(result), std::move(reason)});
}

namespace {

bool all_bound(const Dim& dim, const SymbolBindings& bindings) {
  for (const auto& s : dim.symbols()) {
    if (!bindings.count(s)) return false;
  }
  return true;
}

}  // namespace

void Graph::check_assumptions(const SymbolBindings& bindings) const {
  for (const BroadcastAssumption& a : broadcast_assumptions_) {
    if (!all_bound(a.operand, bindings) || !all_bound(a.result, bindings)) continue;
    const int64_t operand = a.operand.evaluate(bindings), result = a.result.evaluate(bindings);
    if (operand == 0 && result == 1) {
      // numpy gives an empty dim here, but the graph's shapes take a broadcast of two symbols
      // to be their max, which is 1: refused rather than run at the wrong size.
      fail_user("graph '{}': the input shapes make {} = 0 against a 1 ({} = 1; {}); tilefuse plans such a broadcast "
                "as the larger dim, so an empty dim broadcast against 1 is not supported: feed the other side "
                "empty too, or export the dim static",
                name, a.operand.to_string(), a.result.to_string(), a.reason);
    }
    if (operand != 1 && operand != result) {
      fail_user("graph '{}': the input shapes make {} = {}, which does not broadcast to {} = {} ({}; numpy rule: "
                "equal or 1)",
                name, a.operand.to_string(), operand, a.result.to_string(), result, a.reason);
    }
  }
  for (const Assumption& a : assumptions_) {
    if (!all_bound(a.dim, bindings)) continue;
    const int64_t v = a.dim.evaluate(bindings);
    if (v < 0) {
      fail_user("graph '{}': the input shapes make {} = {}, but the graph was planned taking it to be >= 0 ({}); "
                "these shapes are outside what the model handles",
                name, a.dim.to_string(), v, a.reason);
    }
  }
}

Dim Graph::fresh_symbol(std::string_view prefix) {
  std::set<std::string> used;
  auto note_symbols = [&](const Dim& d) {
    auto s = d.symbols();
    used.insert(s.begin(), s.end());
  };
  for (const auto& v : values_) {
    for (const Dim& d : v->shape) note_symbols(d);
    if (v->sym_value) {
      for (const Dim& d : *v->sym_value) note_symbols(d);
    }
  }
  while (true) {
    std::string name = fmt::format("{}{}", prefix, next_symbol_++);
    if (!used.count(name)) return Dim::symbol(name);
  }
}

std::string Graph::unique_value_name(std::string_view base) const {
  if (find_value(base) == nullptr) return std::string(base);
  for (int i = 1;; ++i) {
    std::string candidate = fmt::format("{}_{}", base, i);
    if (find_value(candidate) == nullptr) return candidate;
  }
}

}  // namespace tilefuse
