#include "runtime/axis_parts_call.h"

#include <cstring>

#include "ir/error.h"
#include "ir/shape.h"

namespace tilefuse::runtime {

namespace {

int64_t normalized_axis(const Node& node, int64_t rank) {
  const int64_t axis = node.attr_int("axis", 0);
  return axis < 0 ? axis + rank : axis;
}

// The whole tensor (Split's input, Concat's output) and its parts (the other side), the
// parts' sizes along the axis taken from the node's planned shapes (an unbound part, one nothing
// reads, still occupies its place).
class AxisPartsCall : public LibraryCall {
 public:
  explicit AxisPartsCall(const Node& node) : node_(node), split_(node.op == "Split") {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const Tensor& whole = split_ ? in[0] : outs[0];
    const std::vector<Tensor>& parts = split_ ? outs : in;
    const std::vector<Value*>& part_values = split_ ? node_.outputs : node_.inputs;
    const int64_t axis = normalized_axis(node_, whole.rank());
    const std::vector<int64_t>& shape = whole.shape();
    // The whole is [outer, axis, inner]; part i is [outer, size_i, inner] at offset first_i.
    const int64_t outer = product(std::vector<int64_t>(shape.begin(), shape.begin() + axis));
    const auto inner_bytes = static_cast<int64_t>(
        product(std::vector<int64_t>(shape.begin() + axis + 1, shape.end())) * dtype_size(whole.dtype()));
    std::vector<int64_t> first(parts.size()), size(parts.size());
    int64_t total = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      first[i] = total;
      size[i] = parts[i].defined() ? parts[i].shape()[axis] : part_values[i]->shape[axis].value();
      total += size[i];
    }
    if (total != shape[axis]) {
      fail_user("{}: the parts' sizes along axis {} sum to {}, but the whole has {}", node_.describe(), axis, total,
                shape[axis]);
    }
    auto* whole_bytes = static_cast<uint8_t*>(const_cast<void*>(whole.raw()));
    team.run(outer, [&](int, int64_t begin, int64_t end) {
      for (size_t i = 0; i < parts.size(); ++i) {
        if (!parts[i].defined()) continue;
        const int64_t run = size[i] * inner_bytes;
        auto* part = static_cast<uint8_t*>(const_cast<void*>(parts[i].raw()));
        for (int64_t o = begin; o < end; ++o) {
          uint8_t* w = whole_bytes + (o * shape[axis] + first[i]) * inner_bytes;
          uint8_t* p = part + o * run;
          split_ ? std::memcpy(p, w, static_cast<size_t>(run)) : std::memcpy(w, p, static_cast<size_t>(run));
        }
      }
    });
  }

 private:
  const Node& node_;
  bool split_;
};

}  // namespace

bool axis_parts_call_supports(const Node& node) {
  const bool split = node.op == "Split";
  if (!split && node.op != "Concat") return false;
  const Value* whole = split ? node.input(0) : node.outputs[0];
  const std::vector<Value*>& parts = split ? node.outputs : node.inputs;
  if (whole->rank() == 0) return false;
  const int64_t axis = normalized_axis(node, whole->rank());
  for (const Value* part : parts) {
    if (part == nullptr || part->rank() != whole->rank()) return false;
    // A Split output nothing reads is not bound at run time: its size must be known now. A
    // Concat's inputs are all bound: their sizes may be symbols (a dynamic export's rotary
    // halves, a KV cache's length).
    if (split && !part->shape[axis].is_const()) return false;
  }
  return true;
}

std::unique_ptr<LibraryCall> prepare_axis_parts_call(const Node& node) { return std::make_unique<AxisPartsCall>(node); }

}  // namespace tilefuse::runtime
