#include "ir/verifier.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/error.h"

namespace tilefuse {

namespace {

std::string ref(const Value* v) { return "%" + v->name; }

class Verifier {
 public:
  Verifier(const Graph& graph, const OpRegistry& registry)
      : graph_(graph), registry_(registry), nodes_(graph.nodes()) {
    for (const Value* v : graph.values()) values_.insert(v);
    for (const Node* n : nodes_) node_set_.insert(n);
  }

  void run() {
    check_names();
    for (const Value* v : graph_.values()) check_value(*v);
    check_graph_inputs();
    note_constants();
    check_acyclic();
    check_node_order();
    check_users();
    check_graph_outputs();
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
    fail_user("graph '{}' is invalid: {}", graph_.name, fmt::format(format, std::forward<Args>(args)...));
  }

  void check_names() {
    std::set<std::string_view> value_names, node_names;
    for (const Value* v : graph_.values()) {
      if (v->name.empty()) fail("a value of type {} has an empty name", v->type_string());
      if (!value_names.insert(v->name).second) fail("two values are named {}", ref(v));
    }
    for (const Node* n : nodes_) {
      if (n->name.empty()) fail("a {} node has an empty name", n->op);
      if (!node_names.insert(n->name).second) fail("two nodes are named '{}'", n->name);
    }
  }

  void check_value(const Value& v) {
    for (const Dim& d : v.shape) {
      if (d.is_const() && d.value() < 0) fail("value {}: {} has a negative dimension", ref(&v), v.type_string());
    }
    if (v.producer != nullptr) {
      if (!node_set_.count(v.producer)) fail("value {}: its producer is not a node of this graph", ref(&v));
      const auto& outs = v.producer->outputs;
      if (std::find(outs.begin(), outs.end(), &v) == outs.end()) {
        fail("value {}: its producer {} does not list it as an output", ref(&v), v.producer->describe());
      }
    }
    if (v.constant) check_constant(v);
    if (v.sym_value) check_sym_value(v);
  }

  void check_constant(const Value& v) {
    const Tensor& t = *v.constant;
    if (!t.defined()) fail("constant {}: has no data", ref(&v));
    if (t.dtype() != v.dtype || !is_static(v.shape) || static_dims(v.shape) != t.shape()) {
      fail("constant {}: the value is {} but its data is {}", ref(&v), v.type_string(), t.summary());
    }
  }

  void check_sym_value(const Value& v) {
    if (!is_integer(v.dtype) || v.rank() > 1) {
      fail("value {}: known contents (sym_value) need a 0-D or 1-D integer tensor, not {}", ref(&v), v.type_string());
    }
    Dim count = v.rank() == 0 ? Dim(1) : v.shape[0];
    if (count.is_const() && count.value() != static_cast<int64_t>(v.sym_value->size())) {
      fail("value {}: {} holds {} elements but sym_value lists {}", ref(&v), v.type_string(), count.value(),
           v.sym_value->size());
    }
  }

  void check_graph_inputs() {
    for (const Value* v : graph_.inputs()) {
      if (!values_.count(v)) fail("a graph input is not a value of this graph");
      if (v->producer != nullptr) fail("graph input {} is also the output of {}", ref(v), v->producer->describe());
      defined_.insert(v);
    }
  }

  // Constants are defined before every node, wherever they sit in the value list.
  void note_constants() {
    for (const Value* v : graph_.values()) {
      if (v->producer == nullptr && v->constant) defined_.insert(v);
    }
  }

  // Kahn's algorithm over the producers of node inputs (not `users`, which is checked later);
  // what it cannot order lies on or behind a cycle.
  void check_acyclic() {
    std::map<const Node*, int> pending;
    std::map<const Node*, std::vector<const Node*>> consumers;
    std::vector<const Node*> ready;
    for (const Node* n : nodes_) {
      for (const Value* in : n->inputs) {
        if (in == nullptr || !node_set_.count(in->producer)) continue;
        ++pending[n];
        consumers[in->producer].push_back(n);
      }
      if (pending[n] == 0) ready.push_back(n);
    }
    size_t ordered = 0;
    while (!ready.empty()) {
      const Node* n = ready.back();
      ready.pop_back();
      ++ordered;
      for (const Node* consumer : consumers[n]) {
        if (--pending[consumer] == 0) ready.push_back(consumer);
      }
    }
    if (ordered != nodes_.size()) report_cycle(pending);
  }

  // Walks back from an unordered node through unordered producers until a node repeats: the
  // walk from the repeat on is the cycle.
  [[noreturn]] void report_cycle(const std::map<const Node*, int>& pending) {
    auto unordered = [&](const Node* n) { return pending.at(n) > 0; };
    const Node* n = *std::find_if(nodes_.begin(), nodes_.end(), unordered);
    std::vector<const Node*> path;
    while (std::find(path.begin(), path.end(), n) == path.end()) {
      path.push_back(n);
      for (const Value* in : n->inputs) {
        if (in != nullptr && node_set_.count(in->producer) && unordered(in->producer)) {
          n = in->producer;
          break;
        }
      }
    }
    // path[i + 1] feeds path[i]; in data-flow order the cycle runs from n back down to n.
    size_t start = std::find(path.begin(), path.end(), n) - path.begin();
    std::string cycle = "'" + n->name + "'";
    for (size_t i = path.size(); i-- > start;) cycle += " -> '" + path[i]->name + "'";
    fail("nodes form a cycle: {}", cycle);
  }

  void check_node_order() {
    for (const Node* n : nodes_) {
      try {
        check_node(*n, registry_);
      } catch (const UserError& e) {
        fail("{}", e.what());
      }
      for (const Value* in : n->inputs) {
        if (in != nullptr) check_input_defined(*n, in);
      }
      for (const Value* out : n->outputs) {
        if (out == nullptr || !values_.count(out)) fail("{}: an output is not a value of this graph", n->describe());
        if (out->producer != n) fail("{}: output {} names another producer", n->describe(), ref(out));
        if (!defined_.insert(out).second) fail("{}: output {} is defined twice", n->describe(), ref(out));
      }
    }
  }

  void check_input_defined(const Node& n, const Value* in) {
    if (!values_.count(in)) fail("{}: an input is not a value of this graph", n.describe());
    if (defined_.count(in)) return;
    if (in->producer != nullptr) {
      fail("{}: input {} is produced by {}, which comes later (nodes are not in topological order)",
           n.describe(), ref(in), in->producer->describe());
    }
    fail("{}: input {} is not a graph input, a constant or a node output", n.describe(), ref(in));
  }

  // Each value's `users` holds each node once per use, and nothing else.
  void check_users() {
    std::map<const Value*, std::map<const Node*, int>> uses;
    for (const Node* n : nodes_) {
      for (const Value* in : n->inputs) {
        if (in != nullptr) ++uses[in][n];
      }
    }
    for (const Value* v : graph_.values()) {
      std::map<const Node*, int> listed;
      for (const Node* user : v->users) {
        if (!node_set_.count(user)) fail("value {}: a user is not a node of this graph", ref(v));
        ++listed[user];
      }
      const auto& actual = uses[v];
      for (const auto& [node, count] : actual) {
        int seen = listed.count(node) ? listed.at(node) : 0;
        if (seen != count) fail("value {}: {} uses it {} times but its users list it {} times", ref(v), node->describe(), count, seen);
      }
      for (const auto& [node, count] : listed) {
        if (!actual.count(node)) fail("value {}: users list {}, which does not use it", ref(v), node->describe());
      }
    }
  }

  void check_graph_outputs() {
    for (const Value* v : graph_.outputs()) {
      if (v == nullptr || !values_.count(v)) fail("a graph output is not a value of this graph");
      if (!defined_.count(v)) fail("graph output {} is not a graph input, a constant or a node output", ref(v));
    }
  }

  const Graph& graph_;
  const OpRegistry& registry_;
  std::vector<Node*> nodes_;
  std::set<const Value*> values_;
  std::set<const Node*> node_set_;
  std::set<const Value*> defined_;
};

}  // namespace

void verify_graph(const Graph& graph, const OpRegistry& registry) { Verifier(graph, registry).run(); }

}  // namespace tilefuse
