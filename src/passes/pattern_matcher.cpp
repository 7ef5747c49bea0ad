#include "passes/pattern_matcher.h"

#include <algorithm>
#include <set>

namespace tilefuse::passes {

namespace {

// True if an output of `producer` is `consumer`'s input `input_index` (any input when -1).
bool feeds(const Node* producer, const Node* consumer, int input_index) {
  for (size_t i = 0; i < consumer->inputs.size(); ++i) {
    if (input_index >= 0 && static_cast<int>(i) != input_index) continue;
    const Value* in = consumer->inputs[i];
    if (in != nullptr && in->producer == producer) return true;
  }
  return false;
}

class Matcher {
 public:
  Matcher(const Pattern& pattern) : pattern_(pattern) { plan_order(); }

  void match_from(Node* anchor, std::vector<Match>& out) {
    assigned_.assign(pattern_.nodes.size(), nullptr);
    if (!pattern_.nodes[0].constraint.accepts(*anchor)) return;
    assigned_[0] = anchor;
    extend(1, out);
  }

 private:
  // Visit order: BFS from the anchor along edges in either direction; each later node remembers
  // the edge that links it to an earlier one, which is where its candidates come from.
  void plan_order() {
    order_ = {0};
    link_.assign(pattern_.nodes.size(), -1);
    std::vector<bool> seen(pattern_.nodes.size(), false);
    seen[0] = true;
    for (size_t k = 0; k < order_.size(); ++k) {
      for (size_t e = 0; e < pattern_.edges.size(); ++e) {
        int p = pattern_.index_of(pattern_.edges[e].producer);
        int c = pattern_.index_of(pattern_.edges[e].consumer);
        int other = p == order_[k] ? c : (c == order_[k] ? p : -1);
        if (other >= 0 && !seen[other]) {
          seen[other] = true;
          link_[other] = static_cast<int>(e);
          order_.push_back(other);
        }
      }
    }
  }

  std::vector<Node*> candidates(int pattern_index) const {
    const PatternEdge& edge = pattern_.edges[link_[pattern_index]];
    int p = pattern_.index_of(edge.producer);
    std::vector<Node*> out;
    if (p == pattern_index) {  // we are the producer: look at the consumer's inputs
      Node* consumer = assigned_[pattern_.index_of(edge.consumer)];
      for (size_t i = 0; i < consumer->inputs.size(); ++i) {
        if (edge.consumer_input >= 0 && static_cast<int>(i) != edge.consumer_input) continue;
        Value* in = consumer->inputs[i];
        if (in != nullptr && in->producer != nullptr) out.push_back(in->producer);
      }
    } else {  // we are the consumer: look at the producer's users
      for (Value* v : assigned_[p]->outputs) out.insert(out.end(), v->users.begin(), v->users.end());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  bool edges_hold(int pattern_index) const {
    for (const auto& e : pattern_.edges) {
      int p = pattern_.index_of(e.producer), c = pattern_.index_of(e.consumer);
      if (p != pattern_index && c != pattern_index) continue;
      if (assigned_[p] == nullptr || assigned_[c] == nullptr) continue;
      if (!feeds(assigned_[p], assigned_[c], e.consumer_input)) return false;
    }
    return true;
  }

  void extend(size_t k, std::vector<Match>& out) {
    if (k == order_.size()) {
      out.push_back(Match{&pattern_, assigned_});
      return;
    }
    int idx = order_[k];
    for (Node* candidate : candidates(idx)) {
      if (std::find(assigned_.begin(), assigned_.end(), candidate) != assigned_.end()) continue;
      if (!pattern_.nodes[idx].constraint.accepts(*candidate)) continue;
      assigned_[idx] = candidate;
      if (edges_hold(idx)) extend(k + 1, out);
      assigned_[idx] = nullptr;
    }
  }

  const Pattern& pattern_;
  std::vector<int> order_;
  std::vector<int> link_;
  std::vector<Node*> assigned_;
};

}  // namespace

std::vector<Match> match_pattern(const Graph& graph, const Pattern& pattern) {
  pattern.validate();
  Matcher matcher(pattern);
  std::vector<Match> matches;
  for (Node* anchor : graph.nodes()) matcher.match_from(anchor, matches);
  return matches;
}

}  // namespace tilefuse::passes
