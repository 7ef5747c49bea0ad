#include "runtime/cast_call.h"

#include "ir/error.h"
#include "runtime/float_conversion.h"

namespace tilefuse::runtime {

namespace {

// Elements per unit of work: large enough that a unit outweighs handing it out.
constexpr int64_t kElementsPerUnit = 16384;

class CastCall : public LibraryCall {
 public:
  explicit CastCall(const Node& node) : node_(node) {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    Tensor& out = outs[0];
    if (!out.defined()) return;
    const Tensor& x = in[0];
    if (x.numel() != out.numel()) {
      fail_user("{}: input {} and planned output {} differ in size", node_.describe(), x.summary(), out.summary());
    }
    cast_on_team(team, x, out);
  }

 private:
  const Node& node_;
};

}  // namespace

void cast_on_team(ThreadTeam& team, const Tensor& from, Tensor& to) {
  const int64_t units = (from.numel() + kElementsPerUnit - 1) / kElementsPerUnit;
  const bool floats = converts_floats(from.dtype(), to.dtype());
  team.run(units, [&](int, int64_t first, int64_t end) {
    const int64_t begin = first * kElementsPerUnit, stop = std::min(from.numel(), end * kElementsPerUnit);
    if (floats) {
      convert_floats(from.raw(), from.dtype(), to.raw(), to.dtype(), begin, stop);
    } else {
      from.cast_into(to, begin, stop);
    }
  });
}

bool cast_call_supports(const Node& node) {
  return node.inputs.size() == 1 && node.input(0) != nullptr && node.outputs.size() == 1;
}

std::unique_ptr<LibraryCall> prepare_cast_call(const Node& node) { return std::make_unique<CastCall>(node); }

}  // namespace tilefuse::runtime
