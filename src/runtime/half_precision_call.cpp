#include "runtime/half_precision_call.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "runtime/cast_call.h"

namespace tilefuse::runtime {

namespace {

// to = from converted, over the team; `to` keeps its buffer when its shape is unchanged.
void convert_on_team(ThreadTeam& team, const Tensor& from, Tensor& to) {
  if (!to.defined() || to.shape() != from.shape()) to = Tensor(to.defined() ? to.dtype() : DType::f32, from.shape());
  cast_on_team(team, from, to);
}

class HalfPrecisionCall : public LibraryCall {
 public:
  HalfPrecisionCall(const Node& node, const GemmBlocking& blocking, Precision precision)
      : half_(node.outputs[0]->dtype) {
    // The node over f32 values: constants converted once, every other operand an f32 input.
    std::map<const Value*, Value*> copies;
    std::vector<Value*> inputs;
    for (const Value* v : node.inputs) {
      if (v == nullptr) {
        inputs.push_back(nullptr);
        continue;
      }
      auto [it, fresh] = copies.try_emplace(v, nullptr);
      if (fresh) {
        it->second = v->constant ? graph_.add_constant(v->name, v->constant->cast(DType::f32))
                                 : graph_.add_input(v->name, DType::f32, v->shape);
      }
      inputs.push_back(it->second);
    }
    Node* copy = graph_.add_node(node.op, node.name, inputs, {node.outputs[0]->name}, node.attrs);
    graph_.infer_shapes();
    // A product of bf16 operands multiplies them exactly as bf16 pairs. Not a convolution's: Winograd
    // multiplies transformed values, which bf16 would round.
    const bool product = node.op != "Conv" && node.op != "FusedConv";
    inner_ = prepare_library_call(*copy, blocking, half_ == DType::bf16 && product ? Precision::bf16 : precision);
    for (const Value* v : copy->inputs) {
      constant_.push_back(v != nullptr && v->constant.has_value());
      in_f32_.push_back(constant_.back() ? *v->constant : Tensor());
    }
    out_f32_.resize(1);
  }

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i].defined() && !constant_[i]) convert_on_team(team, in[i], in_f32_[i]);
    }
    if (!out_f32_[0].defined() || out_f32_[0].shape() != outs[0].shape()) out_f32_[0] = Tensor(DType::f32, outs[0].shape());
    inner_->run(team, in_f32_, out_f32_);
    convert_on_team(team, out_f32_[0], outs[0]);
  }

  size_t packed_bytes() const override { return inner_->packed_bytes(); }
  std::vector<const PackedOperand*> packed_operands() const override { return inner_->packed_operands(); }
  bool tunes_blocking() const override { return inner_->tunes_blocking(); }
  void set_blocking(const GemmBlocking& blocking) override { inner_->set_blocking(blocking); }
  GemmBlocking blocking() const override { return inner_->blocking(); }

 private:
  DType half_;
  Graph graph_;
  std::unique_ptr<LibraryCall> inner_;
  std::vector<bool> constant_;            // per input: converted once, when prepared
  std::vector<Tensor> in_f32_, out_f32_;  // reused across runs
};

}  // namespace

bool half_precision_call_supports(const Node& node) {
  static const std::set<std::string, std::less<>> ops = {"MatMul", "FusedMatMul", "Gemm", "Conv", "FusedConv"};
  if (!ops.count(node.op)) return false;
  const DType half = node.outputs[0]->dtype;
  if (half != DType::f16 && half != DType::bf16) return false;
  const bool conv = node.op == "Conv" || node.op == "FusedConv";
  if (conv && node.input(0)->rank() != 3 && node.input(0)->rank() != 4) return false;
  return std::all_of(node.inputs.begin(), node.inputs.end(), [&](const Value* v) { return v == nullptr || v->dtype == half; });
}

std::unique_ptr<LibraryCall> prepare_half_precision_call(const Node& node, const GemmBlocking& blocking,
                                                         Precision precision) {
  return std::make_unique<HalfPrecisionCall>(node, blocking, precision);
}

}  // namespace tilefuse::runtime
