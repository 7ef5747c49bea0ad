// The op registry: what each operator is (traits), what it takes (arity, attributes, dtypes) and
// how its output types and shapes follow from its inputs. Every layer asks the registry instead
// of switching on op names, so a new op is one registration.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/dtype.h"

namespace tilefuse {

class Graph;
class Node;

// Bit flags; an op may have several (Add is Pointwise | Broadcasting).
enum OpTrait : uint32_t {
  kPointwise = 1u << 0,      // output element i depends only on input element i (after broadcast)
  kBroadcasting = 1u << 1,   // inputs broadcast numpy-style to the output shape
  kReduction = 1u << 2,      // reduces one or more axes (ReduceSum, and Softmax/LayerNorm inside)
  kDataMovement = 1u << 3,   // moves or selects elements without arithmetic (Transpose, Slice, ...)
  kLibraryCall = 1u << 4,    // opaque, compute-bound: run by a library (MatMul/Gemm via BLAS)
  kShapeOp = 1u << 5,        // computes shape metadata (Shape, ConstantOfShape, Range)
  kComposite = 1u << 6,      // a normalisation or activation made of several steps (Softmax, LayerNorm)
};

struct AttrSpec {
  std::string name;
  AttrKind kind;
  bool required = false;
};

// Output types and shapes of `node` from its inputs' types, shapes, constants and sym_values.
// Throws UserError (naming the node and the rule) on inconsistent inputs.
using InferFn = std::function<void(Node& node, Graph& graph)>;

struct OpDef {
  std::string name;
  uint32_t traits = 0;
  int min_inputs = 1;
  int max_inputs = 1;
  int min_outputs = 1;
  int max_outputs = 1;
  std::vector<AttrSpec> attrs;
  // Element types accepted for the first input (empty = any).
  std::vector<DType> input_dtypes;
  InferFn infer;

  bool has(OpTrait trait) const { return (traits & trait) != 0; }
  const AttrSpec* find_attr(std::string_view attr) const;
};

class OpRegistry {
 public:
  // The process-wide registry, with every built-in op registered on first use.
  static OpRegistry& global();

  void add(OpDef def);
  const OpDef* find(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  std::vector<OpDef> defs_;
};

// Built-in op groups, each registered by its own file under ir/ops/.
void register_elementwise_ops(OpRegistry& registry);
void register_reduction_ops(OpRegistry& registry);
void register_movement_ops(OpRegistry& registry);
void register_shape_ops(OpRegistry& registry);
void register_nn_ops(OpRegistry& registry);
void register_matmul_ops(OpRegistry& registry);
void register_window_ops(OpRegistry& registry);
void register_index_ops(OpRegistry& registry);
void register_resize_ops(OpRegistry& registry);
void register_control_flow_ops(OpRegistry& registry);
void register_recurrent_ops(OpRegistry& registry);
void register_detection_ops(OpRegistry& registry);

// Checks that the op is registered and the node's arity, attribute kinds and input dtype fit
// its OpDef; returns the OpDef. Throws UserError naming the node. Shared by infer_node and the
// verifier.
const OpDef& check_node(const Node& node, const OpRegistry& registry = OpRegistry::global());

// check_node, then the op's inference. Throws UserError naming the node.
void infer_node(Node& node, Graph& graph);

}  // namespace tilefuse
