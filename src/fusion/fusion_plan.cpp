#include "fusion/fusion_plan.h"

#include "ir/error.h"

namespace tilefuse::fusion {

namespace {

Dim bytes_of(const Value* v) { return num_elements(v->shape) * Dim(static_cast<int64_t>(dtype_size(v->dtype))); }

Dim sum_bytes(const std::vector<Value*>& values) {
  Dim total = 0;
  for (const Value* v : values) total = total + bytes_of(v);
  return total;
}

std::vector<Value*> present(const std::vector<Value*>& values) {
  std::vector<Value*> out;
  for (Value* v : values) {
    if (v != nullptr) out.push_back(v);
  }
  return out;
}

std::string value_list(const std::vector<Value*>& values) {
  std::string out;
  for (const Value* v : values) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", v->name, v->type_string());
  return out;
}

std::string axes_text(const std::vector<int64_t>& axes) {
  std::string out;
  for (int64_t a : axes) out += fmt::format("{}{}", out.empty() ? "" : ", ", a);
  return "(" + out + ")";
}

}  // namespace

Dim FusedKernel::bytes_read() const { return sum_bytes(inputs); }
Dim FusedKernel::bytes_written() const { return sum_bytes(outputs); }

std::string_view step_kind_name(StepKind kind) {
  switch (kind) {
    case StepKind::Kernel: return "kernel";
    case StepKind::LibraryCall: return "library";
    case StepKind::View: return "view";
    case StepKind::Host: return "host";
  }
  return "?";
}

Dim step_bytes(const PlanStep& step) {
  switch (step.kind) {
    case StepKind::Kernel: return step.kernel.bytes_read() + step.kernel.bytes_written();
    case StepKind::View: return 0;
    default: return sum_bytes(present(step.node->inputs)) + sum_bytes(step.node->outputs);
  }
}

int64_t FusionPlan::num_kernels() const {
  int64_t n = 0;
  for (const auto& s : steps) n += s.kind != StepKind::View;
  return n;
}

Dim FusionPlan::compulsory_bytes() const {
  Dim total = 0;
  for (const auto& s : steps) total = total + step_bytes(s);
  return total;
}

std::string print_plan(const FusionPlan& plan) {
  std::string out = fmt::format("plan '{}': {} launches, {} compulsory bytes\n", plan.graph_name, plan.num_kernels(),
                                plan.compulsory_bytes().to_string());
  for (const auto& step : plan.steps) {
    if (step.kind != StepKind::Kernel) {
      out += fmt::format("{} {} '{}'\n", step_kind_name(step.kind), step.node->op, step.node->name);
      continue;
    }
    const FusedKernel& k = step.kernel;
    out += fmt::format("kernel {} domain {}", k.name, shape_to_string(k.space.domain));
    if (!k.space.reduced_axes.empty()) out += " reduce " + axes_text(k.space.reduced_axes);
    out += "\n  ops:";
    for (const Node* n : k.nodes) out += fmt::format(" {}({})", n->op, n->name);
    if (!k.patterns.empty()) {
      out += "\n  patterns:";
      for (const auto& p : k.patterns) out += " " + p;
    }
    out += "\n  in: " + value_list(k.inputs) + "\n  out: " + value_list(k.outputs) + "\n";
  }
  for (const RowChain& c : plan.row_chains) {
    out += fmt::format("row chain '{}' -> {} -> '{}'\n", plan.steps[c.first_product].node->name,
                       plan.steps[c.kernel].kernel.name, plan.steps[c.second_product].node->name);
  }
  return out;
}

}  // namespace tilefuse::fusion
