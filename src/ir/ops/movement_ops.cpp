// Data-movement ops: Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Expand, Concat, Split,
// Slice and Gather, with ONNX opset-17 semantics.
//
// Their shape-like inputs (Reshape's shape, Slice's bounds, axes, ...) are read through
// known_int_values, so a symbolic dim carried in a sym_value (Shape -> Gather -> Concat) ends
// up in the output shape. When such an input is unknown, output dims become fresh symbols if
// the rank is still known. Gather, Concat, Squeeze, Unsqueeze, Slice and Reshape also pass the
// contents of small integer tensors on (sym_value).
#include <numeric>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/infer_util.h"
#include "ir/ops/slice_dims.h"

namespace tilefuse {
namespace {

using namespace ops;

void infer_transpose(Node& node, Graph&) {
  const Value* in = node.input(0);
  std::vector<int64_t> perm(in->shape.size());
  std::iota(perm.rbegin(), perm.rend(), int64_t{0});  // default: reverse the dims
  perm = node.attr_ints("perm", perm);
  if (static_cast<int64_t>(perm.size()) != in->rank()) {
    fail_user("{}: attribute 'perm' {} has {} entries but the input has rank {}", node.describe(),
              dims_to_string(perm), perm.size(), in->rank());
  }
  Shape out;
  for (int64_t axis : node_axes(node, perm, in->rank(), "attribute 'perm'")) out.push_back(in->shape[axis]);
  set_output(node, 0, in->dtype, out);
}

// The -1 dim of a Reshape: the input's element count over the product of the other output dims.
// Dims equal on both sides cancel first, so [N, 12, 64] -> [N, -1] gives 768, not (N*768)//N.
Dim inferred_reshape_dim(const Node& node, const Shape& in, const Shape& out, size_t at) {
  Shape remaining = in;
  Dim divisor = 1;
  for (size_t j = 0; j < out.size(); ++j) {
    if (j == at) continue;
    auto it = std::find(remaining.begin(), remaining.end(), out[j]);
    if (it != remaining.end()) {
      remaining.erase(it);
    } else {
      divisor = divisor * out[j];
    }
  }
  Dim numerator = num_elements(remaining);
  if (divisor == Dim(0)) {
    fail_user("{}: target shape {} has a 0 dim next to -1, which leaves -1 undetermined", node.describe(),
              shape_to_string(out));
  }
  if (numerator.is_const() && divisor.is_const() && numerator.value() % divisor.value() != 0) {
    fail_user("{}: cannot reshape {} into {}: {} elements do not divide into the other dims' {}",
              node.describe(), shape_to_string(in), shape_to_string(out), num_elements(in).to_string(),
              num_elements(out).to_string());
  }
  return floordiv(numerator, divisor);
}

// Reshape's target shape: 0 copies the input dim (unless allowzero), -1 is inferred.
Shape reshape_target(const Node& node, const Shape& in, const Values& target) {
  bool allowzero = node.attr_int("allowzero", 0) != 0;
  Shape out;
  std::optional<size_t> infer_at;
  bool has_zero = false;
  for (size_t i = 0; i < target.size(); ++i) {
    const Dim& d = target[i];
    int64_t v = d.is_const() ? d.value() : 1;
    if (v == -1) {
      if (infer_at) fail_user("{}: target shape {} has more than one -1", node.describe(), shape_to_string(target));
      infer_at = i;
    } else if (v < -1) {
      fail_user("{}: target shape {} has dim {}; dims must be >= -1", node.describe(), shape_to_string(target), v);
    } else if (v == 0 && !allowzero) {
      if (i >= in.size()) {
        fail_user("{}: target shape {} copies dim {} (0) but the input {} has rank {}", node.describe(),
                  shape_to_string(target), i, shape_to_string(in), in.size());
      }
      out.push_back(in[i]);
      continue;
    }
    has_zero = has_zero || v == 0;
    out.push_back(d);
  }
  if (!infer_at) {
    Dim want = num_elements(in);
    Dim got = num_elements(out);
    if (want.is_const() && got.is_const() && want != got) {
      fail_user("{}: cannot reshape {} ({} elements) into {} ({} elements)", node.describe(), shape_to_string(in),
                want.to_string(), shape_to_string(out), got.to_string());
    }
    return out;
  }
  if (has_zero) fail_user("{}: with allowzero=1 a target shape may not hold both 0 and -1", node.describe());
  out[*infer_at] = inferred_reshape_dim(node, in, out, *infer_at);
  return out;
}

void infer_reshape(Node& node, Graph& graph) {
  require_dtype(node, 1, {DType::i64});
  require_rank(node, 1, 1);
  const Value* in = node.input(0);
  auto target = known_int_values(node.input(1));
  Shape out;
  if (target) {
    out = reshape_target(node, in->shape, *target);
  } else if (auto length = static_length(node.input(1))) {
    out = fresh_shape(graph, static_cast<size_t>(*length));
  } else {
    fail_unknown_rank(node, 1);
  }
  set_output(node, 0, in->dtype, out, known_int_values(in));
}

// Flatten: [d0 .. d(axis-1)] and [d(axis) ..] each collapse into one dim; axis is in [-r, r].
void infer_flatten(Node& node, Graph&) {
  const Value* in = node.input(0);
  int64_t axis = node.attr_int("axis", 1);
  int64_t rank = in->rank();
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a > rank) {
    fail_user("{}: attribute 'axis' {} is out of range for rank {} (allowed [{}, {}])", node.describe(), axis,
              rank, -rank, rank);
  }
  Shape outer(in->shape.begin(), in->shape.begin() + a);
  Shape inner(in->shape.begin() + a, in->shape.end());
  set_output(node, 0, in->dtype, {num_elements(outer), num_elements(inner)});
}

// Squeeze's axes from input 1, normalised; nullopt when not known at compile time.
std::optional<std::vector<int64_t>> squeeze_axes_input(const Node& node) {
  require_dtype(node, 1, {DType::i64});
  auto axes = known_const_ints(node.input(1));
  if (!axes) return std::nullopt;
  return node_axes(node, *axes, node.input(0)->rank(), describe_input(node, 1));
}

// Without axes Squeeze removes every dim of size 1, which a symbolic dim cannot promise either way.
std::vector<int64_t> unit_axes(const Node& node) {
  const Shape& shape = node.input(0)->shape;
  std::vector<int64_t> axes;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!shape[i].is_const()) {
      fail_user("{}: without axes Squeeze removes the dims equal to 1, but dim {} of {} is symbolic; give axes",
                node.describe(), i, shape_to_string(shape));
    }
    if (shape[i] == Dim(1)) axes.push_back(static_cast<int64_t>(i));
  }
  return axes;
}

void infer_squeeze(Node& node, Graph& graph) {
  const Value* in = node.input(0);
  std::optional<std::vector<int64_t>> axes = node.has_input(1) ? squeeze_axes_input(node) : unit_axes(node);
  if (!axes) {
    set_output(node, 0, in->dtype, fresh_shape_without_axes(node, graph, 1));
    return;
  }
  Shape out;
  for (int64_t i = 0; i < in->rank(); ++i) {
    bool squeezed = std::find(axes->begin(), axes->end(), i) != axes->end();
    if (!squeezed) {
      out.push_back(in->shape[i]);
    } else if (in->shape[i].is_const() && in->shape[i] != Dim(1)) {
      fail_user("{}: cannot squeeze axis {} of {}: its size is {}, not 1", node.describe(), i,
                in->type_string(), in->shape[i].to_string());
    }
  }
  set_output(node, 0, in->dtype, out, known_int_values(in));
}

void infer_unsqueeze(Node& node, Graph& graph) {
  require_dtype(node, 1, {DType::i64});
  const Value* in = node.input(0);
  auto axes = known_const_ints(node.input(1));
  auto count = axes ? std::optional<int64_t>(axes->size()) : static_length(node.input(1));
  if (!count) fail_unknown_rank(node, 1);
  int64_t out_rank = in->rank() + *count;
  if (!axes) {
    set_output(node, 0, in->dtype, fresh_shape(graph, static_cast<size_t>(out_rank)));
    return;
  }
  std::vector<int64_t> inserted_at = node_axes(node, *axes, out_rank, describe_input(node, 1));
  Shape out;
  auto next = in->shape.begin();
  for (int64_t i = 0; i < out_rank; ++i) {
    bool inserted = std::find(inserted_at.begin(), inserted_at.end(), i) != inserted_at.end();
    out.push_back(inserted ? Dim(1) : *next++);
  }
  set_output(node, 0, in->dtype, out, known_int_values(in));
}

// Expand broadcasts input and target shape both ways. With an unknown target of static length,
// only the input dims that are constant and not 1 survive for sure.
void infer_expand(Node& node, Graph& graph) {
  require_dtype(node, 1, {DType::i64});
  require_rank(node, 1, 1);
  const Value* in = node.input(0);
  if (auto target = known_int_values(node.input(1))) {
    for (const Dim& d : *target) {
      if (d.is_const() && d.value() < 0) {
        fail_user("{}: target shape {} has a negative dim", node.describe(), shape_to_string(*target));
      }
    }
    set_output(node, 0, in->dtype, broadcast_assuming(graph, in->shape, *target, node.describe()));
    return;
  }
  auto length = static_length(node.input(1));
  if (!length) fail_unknown_rank(node, 1);
  size_t rank = std::max(in->shape.size(), static_cast<size_t>(*length));
  Shape out = fresh_shape(graph, rank);
  for (size_t i = 0; i < in->shape.size(); ++i) {
    const Dim& d = in->shape[i];
    if (d.is_const() && d != Dim(1)) out[rank - in->shape.size() + i] = d;
  }
  set_output(node, 0, in->dtype, out);
}

// Concatenation of the inputs' known contents (1-D shape pieces), if all are known.
std::optional<Values> concat_known(const Node& node) {
  Values out;
  for (const Value* in : node.inputs) {
    auto v = known_int_values(in);
    if (!v) return std::nullopt;
    out.insert(out.end(), v->begin(), v->end());
  }
  return out;
}

void infer_concat(Node& node, Graph&) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!node.has_input(i)) fail_user("{}: input {} is missing; Concat inputs are not optional", node.describe(), i);
  }
  const Value* first = node.input(0);
  if (first->rank() == 0) fail_user("{}: {} is a scalar; Concat needs rank >= 1", node.describe(), describe_input(node, 0));
  int64_t axis = node_axis(node, node.attr_int("axis", 0), first->rank(), "attribute 'axis'");
  Shape out = first->shape;
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    require_same_dtype(node, i, 0);
    const Value* in = node.input(i);
    if (in->rank() != first->rank()) {
      fail_user("{}: {} has rank {} but {} has rank {}; Concat needs equal ranks", node.describe(),
                describe_input(node, i), in->rank(), describe_input(node, 0), first->rank());
    }
    for (int64_t d = 0; d < first->rank(); ++d) {
      if (d == axis) {
        out[d] = out[d] + in->shape[d];
      } else {
        out[d] = unify_dims(node, out[d], in->shape[d], fmt::format("dim {} of every input (non-concat axis)", d));
      }
    }
  }
  set_output(node, 0, first->dtype, out, concat_known(node));
}

// Sizes of Split's outputs along the axis: from the `split` input, or `num_outputs` parts of
// ceil(dim / parts) with a smaller last part (opset 18), or equal parts (opset 13).
std::vector<Dim> split_sizes(const Node& node, Graph& graph, const Dim& dim) {
  size_t parts = node.outputs.size();
  if (!node.has_input(1) && node.has_attr("num_outputs")) {
    if (node.attr_int("num_outputs", 0) != static_cast<int64_t>(parts)) {
      fail_user("{}: attribute 'num_outputs' = {} but the node has {} outputs", node.describe(),
                node.attr_int("num_outputs", 0), parts);
    }
    const Dim n(static_cast<int64_t>(parts));
    Dim chunk = floordiv(dim + n - Dim(1), n);
    std::vector<Dim> sizes(parts, chunk);
    sizes.back() = dim - chunk * Dim(static_cast<int64_t>(parts - 1));
    if (sizes.back().is_const() && sizes.back().value() < 0) {
      fail_user("{}: axis of size {} cannot be split into {} parts of {}", node.describe(), dim.to_string(), parts,
                chunk.to_string());
    }
    return sizes;
  }
  if (!node.has_input(1)) {
    if (dim.is_const() && dim.value() % static_cast<int64_t>(parts) != 0) {
      fail_user("{}: axis of size {} does not split into {} equal parts; give the 'split' input", node.describe(),
                dim.to_string(), parts);
    }
    return std::vector<Dim>(parts, floordiv(dim, Dim(static_cast<int64_t>(parts))));
  }
  require_dtype(node, 1, {DType::i64});
  auto sizes = known_int_values(node.input(1));
  if (!sizes) return fresh_shape(graph, parts);
  if (sizes->size() != parts) {
    fail_user("{}: {} has {} sizes for {} outputs", node.describe(), describe_input(node, 1), sizes->size(), parts);
  }
  Dim total = 0;
  for (const Dim& s : *sizes) total = total + s;
  if (total.is_const() && dim.is_const() && total != dim) {
    fail_user("{}: split sizes {} add up to {}, not the axis size {}", node.describe(), shape_to_string(*sizes),
              total.to_string(), dim.to_string());
  }
  return *sizes;
}

void infer_split(Node& node, Graph& graph) {
  const Value* in = node.input(0);
  int64_t axis = node_axis(node, node.attr_int("axis", 0), in->rank(), "attribute 'axis'");
  std::vector<Dim> sizes = split_sizes(node, graph, in->shape[axis]);
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape out = in->shape;
    out[axis] = sizes[i];
    set_output(node, i, in->dtype, out);
  }
}

// The axes Slice applies to: input 3 (normalised), else 0 .. len(starts)-1. nullopt if unknown.
std::optional<std::vector<int64_t>> slice_axes(const Node& node) {
  int64_t rank = node.input(0)->rank();
  if (node.has_input(3)) {
    auto axes = known_const_ints(node.input(3));
    if (!axes) return std::nullopt;
    return node_axes(node, *axes, rank, describe_input(node, 3));
  }
  auto starts = known_int_values(node.input(1));
  auto count = starts ? std::optional<int64_t>(starts->size()) : static_length(node.input(1));
  if (!count) return std::nullopt;
  std::vector<int64_t> axes(static_cast<size_t>(*count));
  std::iota(axes.begin(), axes.end(), int64_t{0});
  return node_axes(node, axes, rank, "the default axes");
}

// Slice params known at compile time: one entry per sliced axis.
struct SliceParams {
  Values starts, ends;
  std::vector<int64_t> steps;
};

std::optional<SliceParams> known_slice_params(const Node& node, size_t num_axes) {
  auto starts = known_int_values(node.input(1));
  auto ends = known_int_values(node.input(2));
  auto steps = node.has_input(4) ? known_const_ints(node.input(4)) : std::vector<int64_t>(num_axes, 1);
  if (!starts || !ends || !steps) return std::nullopt;
  if (starts->size() != num_axes || ends->size() != num_axes || steps->size() != num_axes) {
    fail_user("{}: starts, ends, axes and steps must have equal lengths, got {}, {}, {} axes and {}",
              node.describe(), starts->size(), ends->size(), num_axes, steps->size());
  }
  if (std::find(steps->begin(), steps->end(), 0) != steps->end()) {
    fail_user("{}: steps {} contain 0; Slice needs non-zero steps", node.describe(), dims_to_string(*steps));
  }
  return SliceParams{*starts, *ends, *steps};
}

// Slicing a known 1-D integer tensor (a shape piece) with constant bounds keeps its contents known.
std::optional<Values> slice_known(const Value* data, const SliceParams& p) {
  auto values = known_int_values(data);
  if (!values || data->rank() != 1 || p.starts.size() != 1) return std::nullopt;
  if (!p.starts[0].is_const() || !p.ends[0].is_const()) return std::nullopt;
  auto n = static_cast<int64_t>(values->size());
  int64_t count = slice_dim(n, p.starts[0], p.ends[0], p.steps[0]).value();
  int64_t start = clamp_slice_bound(p.starts[0].value(), n, p.steps[0]);
  Values out;
  for (int64_t i = 0; i < count; ++i) out.push_back((*values)[start + i * p.steps[0]]);
  return out;
}

void infer_slice(Node& node, Graph& graph) {
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    require_dtype(node, i, kIndexTypes);
    require_same_dtype(node, i, 1);
  }
  const Value* in = node.input(0);
  auto axes = slice_axes(node);
  if (!axes) {
    set_output(node, 0, in->dtype, fresh_shape(graph, in->shape.size()));
    return;
  }
  Shape out = in->shape;
  auto params = known_slice_params(node, axes->size());
  for (size_t k = 0; k < axes->size(); ++k) {
    Dim& d = out[(*axes)[k]];
    if (!params) {
      d = graph.fresh_symbol();
      continue;
    }
    for (Dim& bound : slice_dim_assumptions(d, params->starts[k], params->ends[k], params->steps[k])) {
      graph.assume_nonnegative(std::move(bound), fmt::format("{} slices axis {} of {} from {} to {} by {}",
                                                             node.describe(), (*axes)[k], shape_to_string(in->shape),
                                                             params->starts[k].to_string(), params->ends[k].to_string(),
                                                             params->steps[k]));
    }
    d = slice_dim(d, params->starts[k], params->ends[k], params->steps[k]);
  }
  set_output(node, 0, in->dtype, out, params ? slice_known(in, *params) : std::nullopt);
}

// Gather with constant indices into a known 1-D tensor (Shape -> Gather picks one dim).
std::optional<Values> gather_known(const Node& node, int64_t axis) {
  auto data = known_int_values(node.input(0));
  auto indices = known_const_ints(node.input(1));
  const Value* in = node.input(0);
  if (!indices || !in->shape[axis].is_const()) return std::nullopt;
  int64_t n = in->shape[axis].value();
  for (int64_t& i : *indices) {
    if (i < -n || i >= n) {
      fail_user("{}: index {} is out of range for axis {} of size {} (allowed [{}, {}])", node.describe(), i,
                axis, n, -n, n - 1);
    }
    if (i < 0) i += n;
  }
  if (!data || in->rank() != 1) return std::nullopt;
  Values out;
  for (int64_t i : *indices) out.push_back((*data)[i]);
  return out;
}

void infer_gather(Node& node, Graph&) {
  require_dtype(node, 1, kIndexTypes);
  const Value* in = node.input(0);
  const Value* indices = node.input(1);
  if (in->rank() == 0) fail_user("{}: {} is a scalar; Gather needs rank >= 1", node.describe(), describe_input(node, 0));
  int64_t axis = node_axis(node, node.attr_int("axis", 0), in->rank(), "attribute 'axis'");
  Shape out(in->shape.begin(), in->shape.begin() + axis);
  out.insert(out.end(), indices->shape.begin(), indices->shape.end());
  out.insert(out.end(), in->shape.begin() + axis + 1, in->shape.end());
  set_output(node, 0, in->dtype, out, gather_known(node, axis));
}

OpDef movement_op(std::string name, int min_inputs, int max_inputs, std::vector<AttrSpec> attrs, InferFn infer) {
  return {.name = std::move(name),
          .traits = kDataMovement,
          .min_inputs = min_inputs,
          .max_inputs = max_inputs,
          .attrs = std::move(attrs),
          .input_dtypes = kAllTypes,
          .infer = std::move(infer)};
}

}  // namespace

void register_movement_ops(OpRegistry& registry) {
  registry.add(movement_op("Transpose", 1, 1, {{"perm", AttrKind::Ints}}, infer_transpose));
  registry.add(movement_op("Reshape", 2, 2, {{"allowzero", AttrKind::Int}}, infer_reshape));
  registry.add(movement_op("Flatten", 1, 1, {{"axis", AttrKind::Int}}, infer_flatten));
  registry.add(movement_op("Squeeze", 1, 2, {}, infer_squeeze));
  registry.add(movement_op("Unsqueeze", 2, 2, {}, infer_unsqueeze));
  registry.add(movement_op("Expand", 2, 2, {}, infer_expand));
  registry.add(movement_op("Concat", 1, kVariadic, {{"axis", AttrKind::Int, true}}, infer_concat));
  registry.add(movement_op("Slice", 3, 5, {}, infer_slice));
  registry.add(movement_op("Gather", 2, 2, {{"axis", AttrKind::Int}}, infer_gather));
  OpDef split = movement_op("Split", 1, 2, {{"axis", AttrKind::Int}, {"num_outputs", AttrKind::Int}}, infer_split);
  split.max_outputs = kVariadic;
  registry.add(std::move(split));
}

}  // namespace tilefuse
