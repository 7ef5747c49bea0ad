// The Reduce* ops. Axes come from the `axes` attribute (opset <= 17 form) or from optional
// input 1 (opset 18 form, and ReduceSum since opset 13), never both.
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/infer_util.h"

namespace tilefuse {
namespace {

using namespace ops;

// The requested axes (possibly empty), or nullopt when input 1 is not known at compile time.
std::optional<std::vector<int64_t>> requested_axes(const Node& node) {
  if (!node.has_input(1)) return node.attr_ints("axes");
  if (node.has_attr("axes")) {
    fail_user("{}: axes are given both as attribute and as {}; give one", node.describe(),
              describe_input(node, 1));
  }
  require_dtype(node, 1, {DType::i64});
  return known_const_ints(node.input(1));
}

// Axes known only at run time: with keepdims each dim is either kept or becomes 1, which only a
// fresh symbol can say (a dim that is already 1 stays 1); without keepdims the output rank
// follows from the number of axes, if that is static.
Shape shape_for_unknown_axes(const Node& node, Graph& graph, bool keepdims) {
  const Value* in = node.input(0);
  if (keepdims) {
    Shape out;
    for (const Dim& d : in->shape) out.push_back(d == Dim(1) ? d : graph.fresh_symbol());
    return out;
  }
  return fresh_shape_without_axes(node, graph, 1);
}

void infer_reduce(Node& node, Graph& graph) {
  const Value* in = node.input(0);
  bool keepdims = node.attr_int("keepdims", 1) != 0;
  auto axes = requested_axes(node);
  if (!axes) {
    set_output(node, 0, in->dtype, shape_for_unknown_axes(node, graph, keepdims));
    return;
  }
  if (axes->empty()) {
    if (node.attr_int("noop_with_empty_axes", 0) != 0) {
      set_output(node, 0, in->dtype, in->shape);
      return;
    }
    for (int64_t i = 0; i < in->rank(); ++i) axes->push_back(i);
  }
  std::vector<bool> reduced(in->shape.size(), false);
  for (int64_t a : node_axes(node, *axes, in->rank(), "axes")) {
    if (a < in->rank()) reduced[a] = true;  // a rank-0 input accepts axis 0 and has nothing to reduce
  }
  Shape out;
  for (size_t i = 0; i < in->shape.size(); ++i) {
    if (!reduced[i]) {
      out.push_back(in->shape[i]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  set_output(node, 0, in->dtype, out);
}

void add_reduce(OpRegistry& r, std::string name, std::vector<DType> types) {
  r.add({.name = std::move(name),
         .traits = kReduction,
         .min_inputs = 1,
         .max_inputs = 2,
         .attrs = {{"axes", AttrKind::Ints}, {"keepdims", AttrKind::Int}, {"noop_with_empty_axes", AttrKind::Int}},
         .input_dtypes = std::move(types),
         .infer = infer_reduce});
}

// ArgMax/ArgMin reduce one axis to the index of its extremum (i64).
void infer_arg_extremum(Node& node, Graph&) {
  const Value* in = node.input(0);
  int64_t axis = node_axis(node, node.attr_int("axis", 0), in->rank(), "attribute 'axis'");
  Shape out = in->shape;
  if (node.attr_int("keepdims", 1) != 0) {
    out[axis] = Dim(1);
  } else {
    out.erase(out.begin() + axis);
  }
  set_output(node, 0, DType::i64, out);
}

}  // namespace

void register_reduction_ops(OpRegistry& registry) {
  const std::vector<DType> arithmetic = {DType::f16, DType::f32, DType::f64, DType::bf16, DType::i32, DType::i64};
  std::vector<DType> ordered = arithmetic;  // Max/Min also take 8-bit integers
  ordered.push_back(DType::i8);
  ordered.push_back(DType::u8);
  add_reduce(registry, "ReduceSum", arithmetic);
  add_reduce(registry, "ReduceMean", arithmetic);
  add_reduce(registry, "ReduceProd", arithmetic);
  add_reduce(registry, "ReduceMax", ordered);
  add_reduce(registry, "ReduceMin", ordered);
  for (const char* name : {"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) {
    add_reduce(registry, name, arithmetic);
  }
  for (const char* name : {"ArgMax", "ArgMin"}) {
    registry.add({.name = name,
                  .attrs = {{"axis", AttrKind::Int}, {"keepdims", AttrKind::Int}, {"select_last_index", AttrKind::Int}},
                  .input_dtypes = ordered,
                  .infer = infer_arg_extremum});
  }
}

}  // namespace tilefuse
