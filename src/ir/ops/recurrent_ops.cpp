// The recurrent ops RNN, GRU and LSTM (opset 14 forms, with `layout`): X is [seq, batch, input]
// (layout 0) or [batch, seq, input] (layout 1); W, R and B hold one slice per direction.
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/infer_util.h"

namespace tilefuse {
namespace {

using namespace ops;

int64_t gate_count(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

void infer_recurrent(Node& node, Graph&) {
  const Value* x = node.input(0);
  require_rank(node, 0, 3);
  for (size_t i : {1, 2}) {
    require_same_dtype(node, i, 0);
    require_rank(node, i, 3);
  }
  const std::string direction = node.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    fail_user("{}: attribute 'direction' is '{}'; it must be forward, reverse or bidirectional", node.describe(),
              direction);
  }
  const int64_t hidden = node.attr_int("hidden_size", 0);
  if (hidden < 1) fail_user("{}: attribute 'hidden_size' must be given and positive", node.describe());
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const bool batch_first = node.attr_int("layout", 0) != 0;
  const Dim seq = x->shape[batch_first ? 1 : 0], batch = x->shape[batch_first ? 0 : 1];
  const Value* w = node.input(1);
  unify_dims(node, w->shape[0], Dim(dirs), "W's dim 0 and the number of directions");
  unify_dims(node, w->shape[1], Dim(gate_count(node.op) * hidden), "W's dim 1 and gates * hidden_size");
  unify_dims(node, w->shape[2], x->shape[2], "W's dim 2 and the input size");
  require_dtype(node, 4, {DType::i32});
  const DType t = x->dtype;
  Shape y = batch_first ? Shape{batch, seq, Dim(dirs), Dim(hidden)} : Shape{seq, Dim(dirs), batch, Dim(hidden)};
  Shape state = batch_first ? Shape{batch, Dim(dirs), Dim(hidden)} : Shape{Dim(dirs), batch, Dim(hidden)};
  set_output(node, 0, t, y);
  set_output(node, 1, t, state);
  set_output(node, 2, t, state);  // LSTM's Y_c
}

}  // namespace

void register_recurrent_ops(OpRegistry& r) {
  const std::vector<AttrSpec> attrs = {{"activation_alpha", AttrKind::Floats}, {"activation_beta", AttrKind::Floats},
                                       {"activations", AttrKind::Strings},     {"clip", AttrKind::Float},
                                       {"direction", AttrKind::String},        {"hidden_size", AttrKind::Int, true},
                                       {"layout", AttrKind::Int},              {"linear_before_reset", AttrKind::Int},
                                       {"input_forget", AttrKind::Int}};
  const std::vector<DType> floats = {DType::f16, DType::f32, DType::f64, DType::bf16};
  // Inputs: X, W, R, B, sequence_lens, initial_h (and LSTM's initial_c, P).
  r.add({.name = "RNN", .min_inputs = 3, .max_inputs = 6, .max_outputs = 2, .attrs = attrs, .input_dtypes = floats,
         .infer = infer_recurrent});
  r.add({.name = "GRU", .min_inputs = 3, .max_inputs = 6, .max_outputs = 2, .attrs = attrs, .input_dtypes = floats,
         .infer = infer_recurrent});
  r.add({.name = "LSTM", .min_inputs = 3, .max_inputs = 8, .max_outputs = 3, .attrs = attrs, .input_dtypes = floats,
         .infer = infer_recurrent});
}

}  // namespace tilefuse
