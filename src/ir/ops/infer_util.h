// Helpers shared by the op registrations under ir/ops/: the ONNX type-constraint sets, reading
// shape-like inputs that are known at compile time (constant data or sym_value), setting outputs,
// and the checks every op needs, each failing with a UserError that names the node and the rule.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/op_registry.h"

namespace tilefuse::ops {

// ONNX type constraints restricted to tilefuse's element types.
extern const std::vector<DType> kFloatTypes;    // f16 f32 f64 bf16
extern const std::vector<DType> kNumericTypes;  // floats, i8 i32 i64 u8
extern const std::vector<DType> kSignedTypes;   // floats, i8 i32 i64
extern const std::vector<DType> kAllTypes;      // numeric and bool
extern const std::vector<DType> kIndexTypes;    // i32 i64

// max_inputs / max_outputs of a variadic op.
inline constexpr int kVariadic = std::numeric_limits<int>::max();

// Integer tensors up to this many elements carry sym_value (shape tensors are this small; larger
// tensors never determine a shape).
inline constexpr int64_t kMaxSymValueElements = 64;

using Values = std::vector<Dim>;

// Contents of a small integer or bool tensor known at compile time, from its sym_value or its
// constant data, flattened row-major. nullopt when unknown (or too large to matter).
std::optional<Values> known_int_values(const Value* value);
// Same, but only when every entry is a plain integer (axes, pads, ...).
std::optional<std::vector<int64_t>> known_const_ints(const Value* value);
// A scalar float or integer constant, for Range's float operands.
std::optional<double> known_scalar(const Value* value);
// The element count of a 1-D input whose length is static, even if its contents are not known.
std::optional<int64_t> static_length(const Value* value);

// The sym_value an output of this type and shape may carry: `values` for a small integer or bool
// tensor of rank <= 1, nullopt for anything else.
std::optional<Values> sym_value_for(DType dtype, const Shape& shape, std::optional<Values> values);

// Sets output `index` (if the node has it). sym_value is always overwritten, so re-running
// inference after a graph change never leaves stale contents behind.
void set_output(Node& node, size_t index, DType dtype, Shape shape,
                std::optional<Values> sym_value = std::nullopt);

// InferFn of ops whose single output has input 0's type and shape (unary elementwise ops).
void infer_like_input(Node& node, Graph& graph);

// "input 1 ('shape')": how messages name an input.
std::string describe_input(const Node& node, size_t index);
void require_dtype(const Node& node, size_t index, const std::vector<DType>& allowed);
// Input `index` (if present) must have input `like`'s element type (ONNX's shared "T").
void require_same_dtype(const Node& node, size_t index, size_t like);
void require_rank(const Node& node, size_t index, int64_t rank);
// A 0-D or single-element input (Clip's min/max, Dropout's ratio).
void require_scalar(const Node& node, size_t index);

// Normalises an axis against `rank`; `what` names where it came from ("attribute 'axis'").
int64_t node_axis(const Node& node, int64_t axis, int64_t rank, std::string_view what);
// Normalises a list of axes and rejects duplicates.
std::vector<int64_t> node_axes(const Node& node, const std::vector<int64_t>& axes, int64_t rank,
                               std::string_view what);

// Numpy broadcast of two shapes (broadcast_shapes), recording in `graph` what it takes for
// granted where two different symbolic dims meet: each is 1 or their max (checked on every set
// of input shapes, Graph::check_assumptions).
Shape broadcast_assuming(Graph& graph, const Shape& a, const Shape& b, const std::string& where);
// Numpy broadcast of the shapes of all present inputs (broadcast_assuming).
Shape broadcast_inputs(const Node& node, Graph& graph);
// Two dims that must be equal: a constant conflict is a UserError; a symbol next to a constant
// resolves to the constant; two different symbols are taken to be equal (checked at run time).
Dim unify_dims(const Node& node, const Dim& a, const Dim& b, std::string_view what);
// `from` must broadcast to `to` without changing `to` (ONNX unidirectional broadcasting).
void require_unidirectional_broadcast(const Node& node, size_t index, const Shape& to);

// A shape of `rank` fresh symbols: the rank is known, the dims only at run time.
Shape fresh_shape(Graph& graph, size_t rank);
// Output of an op that removes the axes listed in input `axes_input` (Squeeze, Reduce* without
// keepdims) when their values are unknown: fresh dims, as many as the input rank minus the
// static number of axes.
Shape fresh_shape_without_axes(const Node& node, Graph& graph, size_t axes_input);
// A shape-like input whose contents and length are both unknown leaves the output rank unknown,
// which the IR cannot represent.
[[noreturn]] void fail_unknown_rank(const Node& node, size_t index);

}  // namespace tilefuse::ops
