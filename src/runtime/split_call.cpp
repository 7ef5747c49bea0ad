#include "runtime/split_call.h"

#include <cstring>

#include "ir/error.h"
#include "ir/shape.h"

namespace tilefuse::runtime {

namespace {

class SplitCall : public LibraryCall {
 public:
  explicit SplitCall(const Node& node) : node_(node) {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const Tensor& x = in[0];
    const int64_t axis = normalized_axis(x.rank());
    const std::vector<int64_t>& shape = x.shape();
    // x is [outer, axis, inner]; output i takes a [outer, size_i, inner] part of it.
    const int64_t outer = product(std::vector<int64_t>(shape.begin(), shape.begin() + axis));
    const auto inner_bytes = static_cast<int64_t>(
        product(std::vector<int64_t>(shape.begin() + axis + 1, shape.end())) * dtype_size(x.dtype()));
    std::vector<int64_t> first(outs.size());
    int64_t total = 0;
    for (size_t i = 0; i < outs.size(); ++i) {
      first[i] = total;
      total += node_.outputs[i]->rank() == 0 ? 0 : planned_size(outs, i, axis);
    }
    if (total != shape[axis]) {
      fail_user("{}: the outputs' sizes along axis {} sum to {}, but the input has {}", node_.describe(), axis, total,
                shape[axis]);
    }
    const auto* src = static_cast<const uint8_t*>(x.raw());
    team.run(outer, [&](int, int64_t begin, int64_t end) {
      for (size_t i = 0; i < outs.size(); ++i) {
        if (!outs[i].defined()) continue;
        const int64_t run = outs[i].shape()[axis] * inner_bytes;
        auto* dst = static_cast<uint8_t*>(outs[i].raw());
        for (int64_t o = begin; o < end; ++o) {
          std::memcpy(dst + o * run, src + (o * shape[axis] + first[i]) * inner_bytes, static_cast<size_t>(run));
        }
      }
    });
  }

 private:
  int64_t normalized_axis(int64_t rank) const {
    const int64_t axis = node_.attr_int("axis", 0);
    return axis < 0 ? axis + rank : axis;
  }
  // An unread output is not bound; its planned size comes from its value's (static) shape.
  int64_t planned_size(const std::vector<Tensor>& outs, size_t i, int64_t axis) const {
    if (outs[i].defined()) return outs[i].shape()[axis];
    return node_.outputs[i]->shape[axis].value();
  }

  const Node& node_;
};

}  // namespace

bool split_call_supports(const Node& node) {
  if (node.op != "Split" || node.input(0)->rank() == 0) return false;
  // Every output's size along the axis must be known when an output is not bound.
  for (const Value* out : node.outputs) {
    if (out->rank() != node.input(0)->rank()) return false;
  }
  const int64_t rank = node.input(0)->rank(), axis = node.attr_int("axis", 0);
  const int64_t a = axis < 0 ? axis + rank : axis;
  for (const Value* out : node.outputs) {
    if (!out->shape[a].is_const()) return false;
  }
  return true;
}

std::unique_ptr<LibraryCall> prepare_split_call(const Node& node) { return std::make_unique<SplitCall>(node); }

}  // namespace tilefuse::runtime
