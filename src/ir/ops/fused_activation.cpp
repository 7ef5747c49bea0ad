#include "ir/ops/fused_activation.h"

#include "ir/error.h"

namespace tilefuse {

namespace {

// Clip's bound input `index` as a float, if it is a constant of one element (absent: `fallback`).
std::optional<double> clip_bound(const Node& clip, size_t index, double fallback) {
  const Value* v = clip.input(index);
  if (v == nullptr) return fallback;
  if (!v->constant || v->constant->numel() != 1) return std::nullopt;
  return v->constant->get_f64(0);
}

}  // namespace

bool FusedActivation::identity() const {
  return form == Form::clamp && scale == 1.0f && shift == 0.0f && lo == -std::numeric_limits<float>::infinity() &&
         hi == std::numeric_limits<float>::infinity() && !times_input;
}

FusedActivation fused_activation(const Node& node, std::string_view prefix) {
  const std::string key = std::string(prefix) + "activation";
  const std::string name = node.attr_string(key, "");
  const std::vector<double> p = node.attr_floats(key + "_params");
  auto params = [&](size_t count) {
    if (p.size() != count) {
      fail_user("{}: {} {} takes {} {}_params, got {}", node.describe(), key, name, count, key, p.size());
    }
  };
  FusedActivation a;
  if (name.empty()) {
    params(0);
  } else if (name == "Relu") {
    params(0);
    a.lo = 0.0f;
  } else if (name == "Clip") {
    params(2);
    a.lo = static_cast<float>(p[0]), a.hi = static_cast<float>(p[1]);
  } else if (name == "HardSigmoid") {
    params(2);
    a.scale = static_cast<float>(p[0]), a.shift = static_cast<float>(p[1]), a.lo = 0.0f, a.hi = 1.0f;
  } else if (name == "HardSwish") {
    params(0);
    a.scale = 1.0f / 6.0f, a.shift = 0.5f, a.lo = 0.0f, a.hi = 1.0f, a.times_input = true;
  } else if (name == "Gelu") {
    params(0);
    a.form = FusedActivation::Form::gelu;
  } else if (name == "GeluTanh") {
    params(0);
    a.form = FusedActivation::Form::gelu_tanh;
  } else if (name == "Sigmoid") {
    params(0);
    a.form = FusedActivation::Form::sigmoid;
  } else if (name == "Silu") {
    params(0);
    a.form = FusedActivation::Form::silu;
  } else {
    fail_user("{}: {} '{}' is not one of Relu, Clip, HardSigmoid, HardSwish, Gelu, GeluTanh, Sigmoid, Silu",
              node.describe(), key, name);
  }
  return a;
}

std::optional<AttributeMap> activation_attributes(const Node& node) {
  if (node.outputs.size() != 1 || node.outputs[0]->dtype != DType::f32) return std::nullopt;
  if (node.op == "Relu" || node.op == "HardSwish" || node.op == "Sigmoid") return AttributeMap{{"activation", node.op}};
  if (node.op == "Gelu") {
    const std::string approximate = node.attr_string("approximate", "none");
    if (approximate == "none") return AttributeMap{{"activation", std::string("Gelu")}};
    if (approximate == "tanh") return AttributeMap{{"activation", std::string("GeluTanh")}};
    return std::nullopt;
  }
  if (node.op == "HardSigmoid") {
    return AttributeMap{{"activation", node.op},
                        {"activation_params", std::vector<double>{node.attr_float("alpha", 0.2), node.attr_float("beta", 0.5)}}};
  }
  if (node.op != "Clip") return std::nullopt;
  const std::optional<double> lo = clip_bound(node, 1, -std::numeric_limits<double>::infinity());
  const std::optional<double> hi = clip_bound(node, 2, std::numeric_limits<double>::infinity());
  if (!lo || !hi) return std::nullopt;
  return AttributeMap{{"activation", node.op}, {"activation_params", std::vector<double>{*lo, *hi}}};
}

}  // namespace tilefuse
