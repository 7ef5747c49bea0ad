#include "frontend/graph_conversion.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>

#include "frontend/attribute_conversion.h"
#include "frontend/opset_support.h"
#include "frontend/tensor_proto_conversion.h"
#include "ir/error.h"

namespace tilefuse::frontend {

namespace {

// Names not taken by the model, for nodes and values the model leaves unnamed.
class NameAllocator {
 public:
  explicit NameAllocator(std::set<std::string> taken) : taken_(std::move(taken)) {}

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; taken_.count(name) != 0; ++i) name = fmt::format("{}_{}", base, i);
    taken_.insert(name);
    return name;
  }

 private:
  std::set<std::string> taken_;
};

// dim_param strings -> symbol names that are identifiers (the text IR's rule). Equal strings
// give the same symbol; different strings never share one, even if they sanitise alike.
class SymbolNamer {
 public:
  Dim symbol_for(const std::string& dim_param) {
    auto it = symbols_.find(dim_param);
    if (it != symbols_.end()) return it->second;
    std::string name = sanitise(dim_param);
    for (int i = 1; used_.count(name) != 0; ++i) name = fmt::format("{}_{}", sanitise(dim_param), i);
    used_.insert(name);
    return symbols_.emplace(dim_param, Dim::symbol(name)).first->second;
  }

  // A symbol for a dim the model leaves unnamed.
  Dim fresh() {
    std::string name;
    do {
      name = fmt::format("_d{}", next_fresh_++);
    } while (used_.count(name) != 0 || symbols_.count(name) != 0);
    used_.insert(name);
    return Dim::symbol(name);
  }

 private:
  static std::string sanitise(const std::string& text) {
    std::string out;
    for (unsigned char c : text) out += std::isalnum(c) || c == '_' ? static_cast<char>(c) : '_';
    if (std::isdigit(static_cast<unsigned char>(out[0]))) out.insert(out.begin(), '_');
    return out;
  }

  std::map<std::string, Dim> symbols_;
  std::set<std::string> used_;
  int next_fresh_ = 0;
};

// A value a subgraph starts with: its name inside the subgraph and its type.
struct SubgraphInput {
  std::string name;
  DType dtype;
  Shape shape;
};

// Names `g` reads from outside itself (its own subgraphs' included), in order of first use,
// given the names `defined` around it.
void outer_names(const onnx::GraphProto& g, std::set<std::string> defined, std::vector<std::string>& out,
                 std::set<std::string>& seen) {
  for (const auto& init : g.initializer()) defined.insert(init.name());
  for (const auto& input : g.input()) defined.insert(input.name());
  for (const auto& node : g.node()) {
    for (const auto& in : node.input()) {
      if (!in.empty() && !defined.count(in) && seen.insert(in).second) out.push_back(in);
    }
    for (const auto& attr : node.attribute()) {
      if (attr.type() == onnx::AttributeProto::GRAPH) outer_names(attr.g(), defined, out, seen);
    }
    defined.insert(node.output().begin(), node.output().end());
  }
}

const onnx::GraphProto& graph_attribute(const onnx::NodeProto& node, const std::string& name, const std::string& where) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name && attr.type() == onnx::AttributeProto::GRAPH) return attr.g();
  }
  fail_user("{}: needs the graph attribute '{}'", where, name);
}

class GraphConverter {
 public:
  GraphConverter(const onnx::GraphProto& graph, const std::string& origin)
      : onnx_graph_(graph), origin_(origin), node_names_(node_names(graph)), value_names_(value_names(graph)) {}

  Graph convert() { return convert_with({}); }

  // A subgraph, closed: `inputs` first (Loop's iteration, cond and carried values, then what it
  // reads from outside; If's branches only the latter), then its own initializers and nodes.
  Graph convert_with(const std::vector<SubgraphInput>& inputs) {
    for (const SubgraphInput& in : inputs) define(in.name, graph_.add_input(in.name, in.dtype, in.shape));
    const onnx::GraphProto& g = onnx_graph_;
    if (!g.name().empty()) graph_.name = g.name();
    std::set<std::string> initializer_names;
    for (const auto& init : g.initializer()) {
      initializer_names.insert(init.name());
      define(init.name(), graph_.add_constant(init.name(), tensor_from_proto(init, origin_ + ": initializer")));
    }
    // The spec allows an initializer to be listed as an input too (a default); it stays a constant.
    for (const auto& input : g.input()) {
      if (!initializer_names.count(input.name()) && !values_.count(input.name())) add_input(input);
    }
    for (const auto& node : g.node()) add_node(node);
    for (const auto& output : g.output()) graph_.add_output(lookup(output.name(), "graph output"));
    return std::move(graph_);
  }

 private:
  static std::set<std::string> node_names(const onnx::GraphProto& g) {
    std::set<std::string> names;
    for (const auto& node : g.node()) names.insert(node.name());
    return names;
  }

  static std::set<std::string> value_names(const onnx::GraphProto& g) {
    std::set<std::string> names;
    for (const auto& input : g.input()) names.insert(input.name());
    for (const auto& init : g.initializer()) names.insert(init.name());
    for (const auto& node : g.node()) names.insert(node.output().begin(), node.output().end());
    return names;
  }

  // check_model_structure has made sure each value is defined once, before its uses.
  void define(const std::string& name, Value* value) {
    if (!values_.emplace(name, value).second) fail_internal("{}: value '{}' defined twice", origin_, name);
  }

  Value* lookup(const std::string& name, const std::string& user) const {
    auto it = values_.find(name);
    if (it == values_.end()) fail_internal("{}: {} uses undefined value '{}'", origin_, user, name);
    return it->second;
  }

  void add_input(const onnx::ValueInfoProto& input) {
    std::string where = fmt::format("{}: graph input '{}'", origin_, input.name());
    // check_model_structure made sure it is a tensor with an element type and a shape.
    const auto& tensor_type = input.type().tensor_type();
    std::optional<DType> dtype = dtype_from_onnx(tensor_type.elem_type());
    if (!dtype) fail_user("{}: element type {} is not supported", where, tensor_type.elem_type());
    Shape shape;
    for (const auto& dim : tensor_type.shape().dim()) {
      if (dim.has_dim_value()) {
        if (dim.dim_value() < 0) fail_user("{}: dimension {} is negative", where, dim.dim_value());
        shape.push_back(Dim(dim.dim_value()));
      } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
        shape.push_back(symbols_.symbol_for(dim.dim_param()));
      } else {
        shape.push_back(symbols_.fresh());
      }
    }
    define(input.name(), graph_.add_input(input.name(), *dtype, std::move(shape)));
  }

  void add_node(const onnx::NodeProto& node) {
    std::string name = node.name().empty() || !used_node_names_.insert(node.name()).second
                           ? node_names_.fresh(node.op_type())
                           : node.name();
    used_node_names_.insert(name);
    std::string where = fmt::format("{}: node '{}' ({})", origin_, name, node.op_type());
    if ((node.op_type() == "If" || node.op_type() == "Loop") && node.domain().empty()) {
      add_control_flow_node(node, name, where);
      return;
    }
    AttributeMap attrs = convert_attributes(node, where);
    if (node.op_type() == "Constant" && node.domain().empty()) {
      add_constant_node(node, std::move(attrs), where);
      return;
    }
    std::vector<Value*> inputs;
    for (const auto& in : node.input()) inputs.push_back(in.empty() ? nullptr : lookup(in, where));
    // Trailing empty output names are omitted optional outputs; inner ones still exist, unnamed.
    int n_outputs = node.output_size();
    while (n_outputs > 0 && node.output(n_outputs - 1).empty()) --n_outputs;
    std::vector<std::string> output_names;
    for (int i = 0; i < n_outputs; ++i) {
      output_names.push_back(node.output(i).empty() ? value_names_.fresh(name + "_out") : node.output(i));
    }
    Node* n = graph_.add_node(ir_op_name(node), name, std::move(inputs), output_names, std::move(attrs));
    for (Value* out : n->outputs) define(out->name, out);
  }

  // If and Loop in the IR's closed form (ir/ops/control_flow_ops.cpp): what a subgraph reads
  // from outside becomes an input of the node and of the subgraph.
  void add_control_flow_node(const onnx::NodeProto& node, const std::string& name, const std::string& where) {
    const bool is_if = node.op_type() == "If";
    std::vector<const onnx::GraphProto*> graphs;
    for (const char* attr : is_if ? std::vector<const char*>{"then_branch", "else_branch"} : std::vector<const char*>{"body"}) {
      graphs.push_back(&graph_attribute(node, attr, where));
    }
    std::vector<std::string> captured;
    std::set<std::string> seen;
    for (const onnx::GraphProto* g : graphs) outer_names(*g, {}, captured, seen);
    graph_.infer_shapes();  // the types of what the subgraphs receive, known so far
    std::vector<Value*> inputs;
    for (const auto& in : node.input()) inputs.push_back(in.empty() ? nullptr : lookup(in, where));
    std::vector<SubgraphInput> leading;
    const size_t carried = is_if ? 0 : static_cast<size_t>(std::max(0, node.input_size() - 2));
    if (!is_if) {
      const onnx::GraphProto& body = *graphs[0];
      if (body.input_size() != static_cast<int>(2 + carried)) {
        fail_user("{}: its body takes {} inputs, the Loop passes {}", where, body.input_size(), 2 + carried);
      }
      leading.push_back({body.input(0).name(), DType::i64, {}});
      leading.push_back({body.input(1).name(), DType::boolean, {}});
      for (size_t i = 0; i < carried; ++i) {
        const Value* v = inputs[2 + i];
        if (v == nullptr) fail_user("{}: loop-carried value {} is missing", where, i);
        leading.push_back({body.input(static_cast<int>(2 + i)).name(), v->dtype, v->shape});
      }
    }
    for (const std::string& c : captured) {
      Value* v = lookup(c, where);
      inputs.push_back(v);
      leading.push_back({c, v->dtype, v->shape});
    }
    AttributeMap attrs;
    for (size_t i = 0; i < graphs.size(); ++i) {
      const std::string attr = is_if ? (i == 0 ? "then_branch" : "else_branch") : "body";
      auto g = std::make_shared<Graph>(
          GraphConverter(*graphs[i], fmt::format("{} {}.{}", origin_, name, attr)).convert_with(leading));
      g->infer_shapes();  // the node's own inference reads its subgraphs' output types
      attrs[attr] = std::move(g);
    }
    if (!is_if) attrs["carried"] = static_cast<int64_t>(carried);
    std::vector<std::string> output_names;
    for (const auto& out : node.output()) output_names.push_back(out.empty() ? value_names_.fresh(name + "_out") : out);
    Node* n = graph_.add_node(node.op_type(), name, std::move(inputs), output_names, std::move(attrs));
    for (Value* out : n->outputs) define(out->name, out);
  }

  // ONNX Constant: exactly one of value / value_float(s) / value_int(s) (the checker ensures one).
  void add_constant_node(const onnx::NodeProto& node, AttributeMap attrs, const std::string& where) {
    if (node.output_size() != 1 || attrs.size() != 1) {
      fail_user("{}: a Constant needs exactly one output and one value attribute", where);
    }
    const auto& [key, attr] = *attrs.begin();
    Tensor data;
    if (key == "value" && attr_kind(attr) == AttrKind::Tensor) {
      data = std::get<Tensor>(attr);
    } else if (key == "value_float" && attr_kind(attr) == AttrKind::Float) {
      data = Tensor::scalar_f32(static_cast<float>(std::get<double>(attr)));
    } else if (key == "value_int" && attr_kind(attr) == AttrKind::Int) {
      data = Tensor::scalar_i64(std::get<int64_t>(attr));
    } else if (key == "value_floats" && attr_kind(attr) == AttrKind::Floats) {
      const auto& v = std::get<std::vector<double>>(attr);
      data = Tensor::from_vector(DType::f32, {static_cast<int64_t>(v.size())}, v);
    } else if (key == "value_ints" && attr_kind(attr) == AttrKind::Ints) {
      const auto& v = std::get<std::vector<int64_t>>(attr);
      data = Tensor::from_vector(DType::i64, {static_cast<int64_t>(v.size())}, v);
    } else {
      fail_user("{}: attribute '{}' of kind {} is not supported for Constant", where, key,
                attr_kind_name(attr_kind(attr)));
    }
    define(node.output(0), graph_.add_constant(node.output(0), std::move(data)));
  }

  const onnx::GraphProto& onnx_graph_;
  const std::string origin_;
  Graph graph_;
  std::unordered_map<std::string, Value*> values_;
  std::set<std::string> used_node_names_;
  NameAllocator node_names_;
  NameAllocator value_names_;
  SymbolNamer symbols_;
};

}  // namespace

Graph convert_graph(const onnx::ModelProto& model, const std::string& origin) {
  return GraphConverter(model.graph(), origin).convert();
}

}  // namespace tilefuse::frontend
