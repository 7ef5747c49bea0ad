#include "api/dot_writer.h"

#include <array>
#include <map>

#include <fmt/format.h>

namespace tilefuse::api {
namespace {

// Pastel fills, dark text stays readable; kernels cycle through them in plan order.
constexpr std::array<const char*, 10> kKernelColours = {"#aec7e8", "#ffbb78", "#98df8a", "#c5b0d5", "#c49c94",
                                                        "#f7b6d2", "#dbdb8d", "#9edae5", "#fdd0a2", "#c7e9c0"};

const char* kernel_colour(size_t kernel_index) { return kKernelColours[kernel_index % kKernelColours.size()]; }

std::string kernel_style(size_t kernel_index) {
  return fmt::format("shape=box, style=\"rounded,filled\", fillcolor=\"{}\"", kernel_colour(kernel_index));
}

// The style of an op by the kind of step that runs it; kernel ops take their own kernel's colour
// (kernel_style), the legend shows the first.
std::string op_style(fusion::StepKind kind) {
  switch (kind) {
    case fusion::StepKind::Kernel: return kernel_style(0);
    case fusion::StepKind::LibraryCall: return "shape=box3d, style=filled, fillcolor=\"#f6d55c\"";
    case fusion::StepKind::Host: return "shape=hexagon, style=filled, fillcolor=\"#f4a6a6\"";
    case fusion::StepKind::View: return "shape=box, style=\"rounded,dashed\"";
  }
  return "";
}

const std::string kUnplannedStyle = "shape=box, style=\"rounded,dotted\", fontcolor=\"#808080\"";

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
  explicit DotBuilder(const fusion::ExecutionPlan& planned) : graph_(planned.graph), plan_(planned.plan) {}

  std::string build() {
    out_ = fmt::format("digraph {} {{\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
                       "  edge [fontname=\"Helvetica\", fontsize=9];\n", quoted(graph_.name));
    for (const Value* input : graph_.inputs()) {
      add_value_node(*input, "shape=ellipse, style=filled, fillcolor=\"#c6e5c6\"");
    }
    add_steps();
    for (const Node* node : graph_.nodes()) {
      if (!op_ids_.count(node)) add_op(*node, kUnplannedStyle, "  ");
    }
    // Edges only after every op is declared: an edge inside a cluster would pull its ends in.
    for (const Node* node : graph_.nodes()) {
      for (const Value* input : node->inputs) {
        if (input != nullptr) add_edge(*input, op_ids_.at(node));
      }
    }
    for (size_t i = 0; i < graph_.outputs().size(); ++i) add_output(*graph_.outputs()[i], i);
    add_legend();
    return out_ + "}\n";
  }

 private:
  void add_steps() {
    size_t kernel_index = 0;
    for (const fusion::PlanStep& step : plan_.steps) {
      if (step.kind != fusion::StepKind::Kernel) {
        add_op(*step.node, op_style(step.kind), "  ");
        continue;
      }
      out_ += fmt::format("  subgraph cluster_k{} {{\n    label={};\n    style=rounded;\n    color=\"{}\";\n"
                          "    penwidth=2;\n", kernel_index, quoted(step.kernel.name), kernel_colour(kernel_index));
      for (const Node* node : step.kernel.nodes) add_op(*node, kernel_style(kernel_index), "    ");
      out_ += "  }\n";
      ++kernel_index;
    }
  }

  void add_op(const Node& node, const std::string& style, const std::string& indent) {
    std::string id = fmt::format("n{}", op_ids_.size());
    op_ids_[&node] = id;
    out_ += fmt::format("{}{} [label={}, {}];\n", indent, id, quoted(node.op + "\n" + node.name), style);
  }

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

  void add_output(const Value& value, size_t index) {
    std::string id = fmt::format("out{}", index);
    out_ += fmt::format("  {} [label={}, shape=doubleoctagon, style=filled, fillcolor=\"#f7dbc6\"];\n", id,
                        quoted(value.name + "\n" + value.type_string()));
    add_edge(value, id);
  }

  void add_legend() {
    const std::pair<const char*, std::string> entries[] = {
        {"fused kernel\n(one cluster and colour each)", op_style(fusion::StepKind::Kernel)},
        {"library call (BLAS)", op_style(fusion::StepKind::LibraryCall)},
        {"host op (reference kernel)", op_style(fusion::StepKind::Host)},
        {"view (no data moves)", op_style(fusion::StepKind::View)},
        {"not run (shape computation)", kUnplannedStyle},
    };
    out_ += "  subgraph cluster_legend {\n    label=\"legend\";\n    style=rounded;\n    color=\"#808080\";\n";
    for (size_t i = 0; i < std::size(entries); ++i) {
      out_ += fmt::format("    legend{} [label={}, {}];\n", i, quoted(entries[i].first), entries[i].second);
    }
    out_ += "  }\n";
  }

  const Graph& graph_;
  const fusion::FusionPlan& plan_;
  std::string out_;
  std::map<const Node*, std::string> op_ids_;
  std::map<const Value*, std::string> value_ids_;
};

}  // namespace

std::string plan_to_dot(const fusion::ExecutionPlan& planned) { return DotBuilder(planned).build(); }

}  // namespace tilefuse::api
