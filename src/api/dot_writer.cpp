#include "api/dot_writer.h"

#include <map>

#include <fmt/format.h>

namespace tilefuse::api {
namespace {

// A DOT string literal: quotes and backslashes escaped, newlines as DOT's centred line break.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

class DotBuilder {
 public:
  explicit DotBuilder(const Graph& graph) : graph_(graph) {}

  std::string build() {
    out_ = fmt::format("digraph {} {{\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
                       "  edge [fontname=\"Helvetica\", fontsize=9];\n", quoted(graph_.name));
    for (const Value* input : graph_.inputs()) {
      add_value_node(*input, "shape=ellipse, style=filled, fillcolor=\"#c6e5c6\"");
    }
    for (const Node* node : graph_.nodes()) add_op(*node);
    for (size_t i = 0; i < graph_.outputs().size(); ++i) add_output(*graph_.outputs()[i], i);
    return out_ + "}\n";
  }

 private:
  std::string add_value_node(const Value& value, const std::string& style) {
    std::string id = fmt::format("v{}", value_ids_.size());
    value_ids_[&value] = id;
    out_ += fmt::format("  {} [label={}, {}];\n", id, quoted(value.name + "\n" + value.type_string()), style);
    return id;
  }

  // Where an edge carrying `value` starts: its producer, or the input/constant node for it.
  std::string source_of(const Value& value) {
    if (value.producer != nullptr) return op_ids_.at(value.producer);
    auto it = value_ids_.find(&value);
    if (it != value_ids_.end()) return it->second;
    return add_value_node(value, "shape=note, style=filled, fillcolor=\"#e8e8e8\"");  // a constant
  }

  void add_edge(const Value& value, const std::string& target) {
    out_ += fmt::format("  {} -> {} [label={}];\n", source_of(value), target, quoted(value.type_string()));
  }

  void add_op(const Node& node) {
    std::string id = fmt::format("n{}", op_ids_.size());
    op_ids_[&node] = id;
    out_ += fmt::format("  {} [label={}, shape=box, style=\"rounded,filled\", fillcolor=\"#dbe8f7\"];\n", id,
                        quoted(node.op + "\n" + node.name));
    for (const Value* input : node.inputs) {
      if (input != nullptr) add_edge(*input, id);
    }
  }

  void add_output(const Value& value, size_t index) {
    std::string id = fmt::format("out{}", index);
    out_ += fmt::format("  {} [label={}, shape=doubleoctagon, style=filled, fillcolor=\"#f7dbc6\"];\n", id,
                        quoted(value.name + "\n" + value.type_string()));
    add_edge(value, id);
  }

  const Graph& graph_;
  std::string out_;
  std::map<const Node*, std::string> op_ids_;
  std::map<const Value*, std::string> value_ids_;
};

}  // namespace

std::string graph_to_dot(const Graph& graph) { return DotBuilder(graph).build(); }

}  // namespace tilefuse::api
