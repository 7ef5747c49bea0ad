#include "fusion/planner.h"

#include <algorithm>
#include <map>
#include <set>

#include "fusion/shape_only_steps.h"
#include "ir/log.h"
#include "ir/op_registry.h"
#include "passes/pattern_matcher.h"
#include "spdlog/spdlog.h"

namespace tilefuse::fusion {

namespace {

// Nodes whose results the graph outputs need at run time, following data inputs only: shape
// computations that feed nothing but views' shape operands (PyTorch's Shape -> Gather ->
// Concat -> Reshape) are dead once shapes are known symbolically.
std::set<const Node*> needed_nodes(const Graph& graph) {
  std::set<const Node*> needed;
  std::vector<const Value*> stack(graph.outputs().begin(), graph.outputs().end());
  while (!stack.empty()) {
    const Value* v = stack.back();
    stack.pop_back();
    if (v->producer == nullptr || !needed.insert(v->producer).second) continue;
    for (const Value* in : data_inputs(*v->producer)) stack.push_back(in);
  }
  return needed;
}

// Symbolic byte counts are compared at a representative size: every symbol taken as 128.
int64_t hint(const Dim& d) {
  SymbolBindings b;
  for (const auto& s : d.symbols()) b[s] = 128;
  return d.evaluate(b);
}

Dim value_bytes(const Value* v) { return num_elements(v->shape) * Dim(static_cast<int64_t>(dtype_size(v->dtype))); }

struct Candidate {
  Node* producer;
  Node* consumer;
  int64_t benefit;
  int priority;
  size_t consumer_order;
  const std::string* pattern;
};

class Planner {
 public:
  Planner(const Graph& graph, const passes::PatternRegistry& patterns, const PlannerOptions& options)
      : graph_(graph), patterns_(patterns), options_(options), shape_only_(shape_only_nodes(graph.nodes())) {
    std::set<const Node*> needed = needed_nodes(graph);
    for (Node* n : graph.nodes()) {
      if (needed.count(n)) nodes_.push_back(n);
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      planned_.insert(nodes_[i]);
      order_[nodes_[i]] = i;
      if (kind_of(*nodes_[i]) == StepKind::Kernel) {
        group_of_[nodes_[i]] = static_cast<int>(groups_.size());
        groups_.push_back({{nodes_[i]}, {}});
      }
    }
  }

  FusionPlan run() {
    if (options_.fuse) {
      for (int round = 0; round < options_.max_rounds; ++round) {
        if (!merge_round()) break;
      }
      if (options_.fuse_views) merge_through_views();
      if (options_.fuse_siblings) merge_siblings();
    }
    return build_plan();
  }

 private:
  struct Group {
    std::vector<Node*> nodes;
    std::vector<std::string> patterns;
    bool dead = false;
  };

  std::vector<Candidate> candidates() const {
    std::vector<Candidate> out;
    for (const auto& pattern : patterns_.patterns()) {
      for (const auto& match : passes::match_pattern(graph_, pattern)) {
        for (const auto& edge : pattern.edges) {
          Node* p = match.nodes[pattern.index_of(edge.producer)];
          Node* c = match.nodes[pattern.index_of(edge.consumer)];
          if (!group_of_.count(p) || !group_of_.count(c)) continue;  // not kernels, or not needed
          out.push_back({p, c, shared_bytes(p, c), pattern.priority, order_.at(c), &pattern.name});
        }
      }
    }
    std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
      if (a.priority != b.priority) return a.priority > b.priority;
      if (a.benefit != b.benefit) return a.benefit > b.benefit;
      return a.consumer_order < b.consumer_order;
    });
    return out;
  }

  static int64_t shared_bytes(const Node* p, const Node* c) {
    int64_t bytes = 0;
    for (const Value* out : p->outputs) {
      if (std::find(c->inputs.begin(), c->inputs.end(), out) != c->inputs.end()) bytes += hint(value_bytes(out));
    }
    return bytes;
  }

  bool merge_round() {
    bool merged = false;
    for (const Candidate& cand : candidates()) {
      int a = group_of_.at(cand.producer), b = group_of_.at(cand.consumer);
      if (a == b) continue;
      std::string why;
      if (!legal(a, b, why)) {
        logger().debug("fusion: not merging {} into {} ({}): {}", cand.producer->name, cand.consumer->name, *cand.pattern, why);
        continue;
      }
      merge(a, b, *cand.pattern);
      merged = true;
    }
    return merged;
  }

  // A view between two kernels joins them when the merged group has an iteration space
  // (iteration_space.h: the common refinement of both sides' domains), so the reshaped tensor
  // never goes through memory. Only where nothing outside reads the view's input: that would
  // have the kernel write the tensor twice, once in each shape.
  void merge_through_views() {
    for (Node* first : nodes_) {
      if (kind_of(*first) != StepKind::View) continue;
      const Value* in = first->input(0);
      if (in->producer == nullptr || !group_of_.count(in->producer) || graph_.is_output(in)) continue;
      // A chain of views (Unsqueeze then Reshape) is one boundary: each link read only by the next.
      std::vector<Node*> chain = {first};
      while (chain.back()->outputs[0]->users.size() == 1 && !graph_.is_output(chain.back()->outputs[0])) {
        Node* next = chain.back()->outputs[0]->users.front();
        if (!planned_.count(next) || kind_of(*next) != StepKind::View) break;
        chain.push_back(next);
      }
      for (Node* user : chain.back()->outputs[0]->users) {
        auto it = group_of_.find(user);
        if (it != group_of_.end() && it->second != group_of_.at(in->producer)) {
          try_view_merge(chain, group_of_.at(in->producer), it->second);
        }
      }
    }
  }

  void try_view_merge(const std::vector<Node*>& chain, int producer, int consumer) {
    for (const Node* u : chain.front()->input(0)->users) {
      if (u == chain.front() || !planned_.count(u)) continue;
      auto it = group_of_.find(u);
      if (it == group_of_.end() || (it->second != producer && it->second != consumer)) return;
    }
    // The views join the producer's group first (tentatively), so that the paths from the
    // producer through them to the consumer are inside the merged group.
    const bool joined = !group_of_.count(chain.front());
    if (joined) {
      for (Node* view : chain) {
        group_of_[view] = producer;
        groups_[producer].nodes.push_back(view);
      }
    }
    std::string why;
    if (legal(producer, consumer, why)) {
      merge(producer, consumer, "through_view");
      return;
    }
    logger().debug("fusion: not merging through view {}: {}", chain.front()->name, why);
    if (joined) {
      for (Node* view : chain) {
        group_of_.erase(view);
        groups_[producer].nodes.pop_back();
      }
    }
  }

  // Kernels reading the same tensor in full (its shape is the merged kernel's domain) merge
  // when legal: the tensor is then read once. A tensor read only as a broadcast operand (a
  // bias, a mask row) stays in cache anyway; merging its readers would gain nothing.
  void merge_siblings() {
    for (Node* n : nodes_) {
      for (Value* v : data_inputs(*n)) {
        std::vector<int> readers;
        for (Node* u : v->users) {
          auto it = group_of_.find(u);
          if (it != group_of_.end() && std::find(readers.begin(), readers.end(), it->second) == readers.end()) {
            readers.push_back(it->second);
          }
        }
        int merged = readers.empty() ? -1 : readers[0];
        for (size_t i = 1; i < readers.size(); ++i) merged = try_sibling_merge(v, merged, readers[i]);
      }
    }
  }

  // Returns the group that holds `a`'s nodes afterwards.
  int try_sibling_merge(const Value* shared, int a, int b) {
    if (a == b || groups_[a].dead || groups_[b].dead) return a;
    std::string why;
    if (!legal(a, b, why)) {
      logger().debug("fusion: not merging the readers of '{}' (siblings): {}", shared->name, why);
      return a;
    }
    if (derive_iteration_space(union_nodes(a, b)).space->domain != shared->shape) return a;
    merge(std::min(a, b), std::max(a, b), "siblings");
    return std::min(a, b);
  }

  std::vector<Node*> union_nodes(int a, int b) const {
    std::vector<Node*> all = groups_[a].nodes;
    all.insert(all.end(), groups_[b].nodes.begin(), groups_[b].nodes.end());
    std::sort(all.begin(), all.end(), [&](Node* x, Node* y) { return order_.at(x) < order_.at(y); });
    return all;
  }

  bool legal(int a, int b, std::string& why) const {
    std::vector<Node*> all = union_nodes(a, b);
    if (static_cast<int>(all.size()) > options_.max_ops_per_kernel) {
      why = fmt::format("more than {} ops", options_.max_ops_per_kernel);
      return false;
    }
    if (static_cast<int>(external_inputs(all).size()) > options_.max_inputs_per_kernel) {
      why = fmt::format("more than {} inputs", options_.max_inputs_per_kernel);
      return false;
    }
    if (path_through_outside(a, b) || path_through_outside(b, a)) {
      why = "a path through another step would make a cycle";
      return false;
    }
    auto space = derive_iteration_space(all);
    why = space.reason;
    if (!space.space) return false;
    for (const auto* values : {&space.space->passed_along, &space.space->computed_broadcast}) {
      for (const Value* v : *values) {
        if (leaves(v, all)) {
          why = fmt::format("'{}' is needed outside the kernel in a shape the kernel never has", v->name);
          return false;
        }
      }
    }
    return true;
  }

  // Whether `v` is read outside `members` (or is a graph output).
  bool leaves(const Value* v, const std::vector<Node*>& members) const {
    if (graph_.is_output(v)) return true;
    return std::any_of(v->users.begin(), v->users.end(), [&](Node* u) {
      return planned_.count(u) && std::find(members.begin(), members.end(), u) == members.end();
    });
  }

  std::vector<Value*> external_inputs(const std::vector<Node*>& members) const {
    std::set<const Node*> in_group(members.begin(), members.end());
    std::vector<Value*> out;
    for (Node* n : members) {
      for (Value* v : kernel_data_inputs(*n)) {
        if (v->producer && in_group.count(v->producer)) continue;
        if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
      }
    }
    return out;
  }

  // True if some path leaves group `from`, passes a node outside both groups, and enters `to`.
  bool path_through_outside(int from, int to) const {
    std::vector<Node*> stack;
    std::set<Node*> seen;
    auto group_is = [&](Node* n, int g) { auto it = group_of_.find(n); return it != group_of_.end() && it->second == g; };
    for (Node* n : groups_[from].nodes) {
      for (Value* out : n->outputs) {
        for (Node* u : out->users) {
          if (!planned_.count(u)) continue;
          if (!group_is(u, from) && !group_is(u, to) && seen.insert(u).second) stack.push_back(u);
        }
      }
    }
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (Value* out : n->outputs) {
        for (Node* u : out->users) {
          if (!planned_.count(u)) continue;
          if (group_is(u, to)) return true;
          if (seen.insert(u).second) stack.push_back(u);
        }
      }
    }
    return false;
  }

  void merge(int a, int b, const std::string& pattern) {
    Group& into = groups_[a];
    for (Node* n : groups_[b].nodes) group_of_[n] = a;
    into.nodes = union_nodes(a, b);
    auto& pats = into.patterns;
    std::vector<std::string> added = groups_[b].patterns;
    added.push_back(pattern);
    for (const std::string& p : added) {
      if (std::find(pats.begin(), pats.end(), p) == pats.end()) pats.push_back(p);
    }
    groups_[b] = Group{{}, {}, true};
  }

  FusedKernel make_kernel(const Group& g) const {
    FusedKernel k;
    k.nodes = g.nodes;
    k.patterns = g.patterns;
    k.inputs = external_inputs(g.nodes);
    std::set<const Node*> in_group(g.nodes.begin(), g.nodes.end());
    const auto& graph_outputs = graph_.outputs();
    for (Node* n : g.nodes) {
      for (Value* v : n->outputs) {
        bool outside = std::find(graph_outputs.begin(), graph_outputs.end(), v) != graph_outputs.end() ||
                       std::any_of(v->users.begin(), v->users.end(), [&](Node* u) { return planned_.count(u) && !in_group.count(u); });
        if (outside) k.outputs.push_back(v);
      }
    }
    auto space = derive_iteration_space(g.nodes);
    if (!space.space) fail_internal("fusion: planned group has no iteration space: {}", space.reason);
    k.space = std::move(*space.space);
    return k;
  }

  // "fused_<ops>" for a group of several ops, "kernel_<op>" for one: a single-op kernel is the
  // same code (and cache entry) whether or not fusion was on.
  static std::string kernel_name(const std::vector<Node*>& nodes, size_t index) {
    std::vector<std::string> ops;
    for (Node* n : nodes) {
      std::string op = n->op;
      std::transform(op.begin(), op.end(), op.begin(), [](unsigned char c) { return std::tolower(c); });
      if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
    }
    std::string name = nodes.size() > 1 ? "fused" : "kernel";
    for (size_t i = 0; i < ops.size() && i < 3; ++i) name += "_" + ops[i];
    return fmt::format("{}_{}", name, index);
  }

  // Steps in a topological order of the step graph (ties: earliest node first).
  FusionPlan build_plan() const {
    std::map<Node*, int> step_of;
    std::vector<std::vector<Node*>> step_nodes;
    std::vector<int> group_step(groups_.size(), -1);
    for (Node* n : nodes_) {
      auto it = group_of_.find(n);
      if (it != group_of_.end()) {
        if (group_step[it->second] < 0) {
          group_step[it->second] = static_cast<int>(step_nodes.size());
          step_nodes.emplace_back();
        }
        step_of[n] = group_step[it->second];
        step_nodes[group_step[it->second]].push_back(n);
      } else {
        step_of[n] = static_cast<int>(step_nodes.size());
        step_nodes.push_back({n});
      }
    }
    std::vector<std::set<int>> succ(step_nodes.size());
    std::vector<int> pending(step_nodes.size(), 0);
    for (Node* u : nodes_) {
      for (Value* in : data_inputs(*u)) {
        if (in->producer == nullptr || !step_of.count(in->producer)) continue;
        int s = step_of.at(in->producer), t = step_of.at(u);
        if (s != t && succ[s].insert(t).second) ++pending[t];
      }
    }
    std::set<int> ready;
    for (size_t s = 0; s < step_nodes.size(); ++s) {
      if (pending[s] == 0) ready.insert(static_cast<int>(s));
    }
    FusionPlan plan;
    plan.graph_name = graph_.name;
    size_t kernel_index = 0;
    while (!ready.empty()) {
      int s = *ready.begin();
      ready.erase(ready.begin());
      plan.steps.push_back(make_step(step_nodes[s], kernel_index));
      for (int t : succ[s]) {
        if (--pending[t] == 0) ready.insert(t);
      }
    }
    if (plan.steps.size() != step_nodes.size()) fail_internal("fusion: the step graph of '{}' has a cycle", graph_.name);
    return plan;
  }

  // Shape-only nodes are never kernels: the executor computes them once per set of shapes.
  StepKind kind_of(const Node& node) const {
    if (is_view_op(node)) return StepKind::View;
    if (is_kernel_op(node) && !shape_only_.count(&node)) return StepKind::Kernel;
    if (node.def().has(kLibraryCall)) return StepKind::LibraryCall;
    return StepKind::Host;
  }

  PlanStep make_step(const std::vector<Node*>& nodes, size_t& kernel_index) const {
    PlanStep step;
    step.kind = kind_of(*nodes.front());
    if (step.kind != StepKind::Kernel) {
      step.node = nodes.front();
      return step;
    }
    const Group& g = groups_[group_of_.at(nodes.front())];
    // A gather alone is the runtime's call (which prefetches the rows it picks from); in a group
    // it is a load of the group's kernel.
    if (g.nodes.size() == 1 && is_gather_op(*nodes.front())) {
      step.kind = StepKind::Host;
      step.node = nodes.front();
      return step;
    }
    // Merges are only made where the merged group has an iteration space; a lone op may still
    // have none (dims that are symbolic expressions which do not provably broadcast): the
    // reference kernels run it, as a host step.
    if (g.nodes.size() == 1 && !derive_iteration_space(g.nodes).space) {
      step.kind = StepKind::Host;
      step.node = nodes.front();
      return step;
    }
    step.kernel = make_kernel(g);
    step.kernel.name = kernel_name(g.nodes, kernel_index++);
    return step;
  }

  const Graph& graph_;
  const passes::PatternRegistry& patterns_;
  PlannerOptions options_;
  std::set<const Node*> shape_only_;
  std::vector<Node*> nodes_;
  std::set<const Node*> planned_;  // the needed nodes
  std::map<const Node*, size_t> order_;
  std::map<const Node*, int> group_of_;
  std::vector<Group> groups_;
};

}  // namespace

FusionPlan plan_fusion(const Graph& graph, const passes::PatternRegistry& patterns, const PlannerOptions& options) {
  return Planner(graph, patterns, options).run();
}

}  // namespace tilefuse::fusion
