// The graph IR: Values (typed, shaped edges), Nodes (operator applications) and the Graph that
// owns them. Op names and semantics follow ONNX opset 17 (see op_registry.h): a node's inputs
// and attributes mean what they mean in the ONNX operator spec, so the importer, the reference
// interpreter and the passes agree without translation tables.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/dtype.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace tilefuse {

class Node;
struct OpDef;

struct Value {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  Node* producer = nullptr;   // null for graph inputs and constants
  std::vector<Node*> users;   // one entry per use (a node using it twice appears twice)
  std::optional<Tensor> constant;  // data of initializers and folded constants
  // Known contents of a small 1-D/0-D integer tensor whose data may be symbolic, e.g. the output
  // of Shape on a tensor with a symbolic batch dim. Lets Reshape/Expand/... keep symbols.
  std::optional<std::vector<Dim>> sym_value;

  bool is_constant() const { return constant.has_value(); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  std::string type_string() const;  // "f32[N, 128]"
};

class Node {
 public:
  std::string op;    // ONNX op type, e.g. "Add"
  std::string name;  // unique within the graph
  std::vector<Value*> inputs;   // nullptr marks an omitted optional input
  std::vector<Value*> outputs;
  AttributeMap attrs;

  const OpDef& def() const;  // throws InternalError for an unregistered op
  Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  bool has_input(size_t i) const { return input(i) != nullptr; }

  bool has_attr(std::string_view key) const { return attrs.find(key) != attrs.end(); }
  int64_t attr_int(std::string_view key, int64_t fallback) const;
  double attr_float(std::string_view key, double fallback) const;
  std::string attr_string(std::string_view key, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(std::string_view key, const std::vector<int64_t>& fallback = {}) const;
  std::vector<double> attr_floats(std::string_view key) const;
  const Tensor* attr_tensor(std::string_view key) const;

  // "node 'ln/Add_1' (Add)": how error messages name a node.
  std::string describe() const;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;

  std::string name = "graph";

  Value* add_input(std::string name, DType dtype, Shape shape);
  Value* add_constant(std::string name, Tensor data);
  // Appends a node; creates `num_outputs` outputs named after `output_names` (or generated).
  Node* add_node(std::string op, std::string name, std::vector<Value*> inputs,
                 std::vector<std::string> output_names, AttributeMap attrs = {});
  void add_output(Value* value) { outputs_.push_back(value); }
  void set_outputs(std::vector<Value*> values) { outputs_ = std::move(values); }

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  bool is_output(const Value* v) const { return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end(); }
  // Nodes in topological order (maintained by add_node and the mutators below).
  std::vector<Node*> nodes() const;
  std::vector<Value*> values() const;
  size_t num_nodes() const { return nodes_.size(); }

  Value* find_value(std::string_view name) const;
  Node* find_node(std::string_view name) const;

  // Rewires every use of `from` (node inputs and graph outputs) to `to`.
  void replace_all_uses(Value* from, Value* to);
  // Removes nodes whose outputs are unused and not graph outputs, then unused constants.
  void remove_dead_nodes();
  void remove_node(Node* node);
  // Re-sorts nodes topologically (stable); throws InternalError on a cycle.
  void topo_sort();
  // Runs each node's shape/dtype inference in order (see op_registry.h).
  void infer_shapes();

  // A symbol name not used in the graph yet ("_d0", "_d1", ...), for dims only known at run time.
  Dim fresh_symbol(std::string_view prefix = "_d");
  std::string unique_value_name(std::string_view base) const;

  // What shape inference took for granted about the symbols (`dim` >= 0, e.g. `seq - 1` of a
  // sliced shape compared with -1), with the reason. Every run checks them against the input
  // shapes, so an assumption can stop a run but never make it wrong.
  struct Assumption {
    Dim dim;
    std::string reason;
  };
  void assume_nonnegative(Dim dim, std::string reason);
  const std::vector<Assumption>& assumptions() const { return assumptions_; }
  // Where two different symbolic dims broadcast, inference makes the result their max and takes
  // each operand dim to be 1 or that max (numpy's rule), so kernels may read an operand with a
  // stride settled at run time (fusion/iteration_space.cpp).
  struct BroadcastAssumption {
    Dim operand;
    Dim result;
    std::string reason;
  };
  void assume_broadcast(Dim operand, Dim result, std::string reason);
  const std::vector<BroadcastAssumption>& broadcast_assumptions() const { return broadcast_assumptions_; }
  // Throws UserError naming the first assumption `bindings` break: a dim below 0, or an operand
  // dim that is neither 1 nor its broadcast result.
  void check_assumptions(const SymbolBindings& bindings) const;

 private:
  std::vector<Assumption> assumptions_;
  std::vector<BroadcastAssumption> broadcast_assumptions_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  int64_t next_symbol_ = 0;
};

}  // namespace tilefuse
