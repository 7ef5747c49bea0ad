// Einsum, by its definition: every combination of label values is visited once (output labels
// outermost), and the product of the operands' elements there is added to the output element.
// Accumulates in double (int64 for integers). Diagonals ("ii->i") and broadcasting ellipsis dims
// fall out of the per-label strides.
#include <algorithm>
#include <map>

#include "ir/ops/einsum_equation.h"
#include "reference/element_types.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

struct LabelSpace {
  std::vector<int> order;             // output labels, then the contracted ones
  std::vector<int64_t> sizes;         // per position in `order`
  std::vector<std::vector<int64_t>> strides;  // [operand][position]: element stride of that label
};

LabelSpace label_space(const Node& node, const EinsumEquation& eq, const std::vector<Tensor>& in) {
  std::map<int, int64_t> size;
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    for (size_t d = 0; d < eq.inputs[i].size(); ++d) {
      const int64_t n = in[i].shape()[d];
      auto [it, fresh] = size.emplace(eq.inputs[i][d], n);
      if (fresh || n == 1) continue;
      if (it->second != 1 && it->second != n) {
        fail_user("{}: a subscript has sizes {} and {} in different places", node.describe(), it->second, n);
      }
      it->second = n;
    }
  }
  LabelSpace s;
  s.order = eq.output;
  for (auto [label, n] : size) {
    if (std::find(eq.output.begin(), eq.output.end(), label) == eq.output.end()) s.order.push_back(label);
  }
  for (int l : s.order) s.sizes.push_back(size.at(l));
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    std::vector<int64_t> strides(s.order.size(), 0);
    int64_t stride = 1;
    for (size_t d = eq.inputs[i].size(); d-- > 0;) {
      const size_t pos = std::find(s.order.begin(), s.order.end(), eq.inputs[i][d]) - s.order.begin();
      if (in[i].shape()[d] != 1) strides[pos] += stride;  // a size-1 dim broadcasts: stride 0
      stride *= in[i].shape()[d];
    }
    s.strides.push_back(std::move(strides));
  }
  return s;
}

template <typename E>
Tensor contract(const EinsumEquation& eq, const LabelSpace& s, const std::vector<Tensor>& in) {
  using A = std::conditional_t<std::is_floating_point_v<typename E::Compute>, double, int64_t>;
  std::vector<int64_t> out_shape(s.sizes.begin(), s.sizes.begin() + eq.output.size());
  Tensor out(E::dtype, out_shape);
  const int64_t outputs = product(out_shape), inner = product(std::vector<int64_t>(s.sizes.begin() + eq.output.size(), s.sizes.end()));
  std::vector<int64_t> counter(s.sizes.size(), 0), offset(in.size(), 0);
  auto* po = out.data<typename E::Storage>();
  for (int64_t o = 0; o < outputs; ++o) {
    A acc = 0;
    for (int64_t r = 0; r < inner; ++r) {
      A term = 1;
      for (size_t i = 0; i < in.size(); ++i) term *= static_cast<A>(E::load(in[i].data<typename E::Storage>()[offset[i]]));
      acc += term;
      // Odometer step over all labels (the last one fastest), keeping operand offsets in step.
      for (size_t p = s.sizes.size(); p-- > 0;) {
        for (size_t i = 0; i < in.size(); ++i) offset[i] += s.strides[i][p];
        if (++counter[p] < s.sizes[p]) break;
        for (size_t i = 0; i < in.size(); ++i) offset[i] -= s.strides[i][p] * s.sizes[p];
        counter[p] = 0;
      }
    }
    if (outputs > 0) po[o] = E::store(static_cast<typename E::Compute>(acc));
  }
  return out;
}

std::vector<Tensor> einsum_kernel(const Node& node, const std::vector<Tensor>& in) {
  std::vector<int64_t> ranks;
  for (size_t i = 0; i < in.size(); ++i) {
    require_same_dtype(node, required_input(node, in, 0), required_input(node, in, i));
    ranks.push_back(in[i].rank());
  }
  EinsumEquation eq = parse_einsum(node, node.attr_string("equation", ""), ranks);
  LabelSpace s = label_space(node, eq, in);
  return {visit_dtype<TypeSet::Numeric>(node, in[0].dtype(), [&](auto elem) { return contract<decltype(elem)>(eq, s, in); })};
}

}  // namespace

void register_einsum_kernel(KernelTable& table) { table["Einsum"] = einsum_kernel; }

}  // namespace tilefuse::reference
