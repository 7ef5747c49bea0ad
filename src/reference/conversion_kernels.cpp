// Kernels that pass data through or change its element type: Cast, Identity, Dropout (inference).
#include "ir/error.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

std::vector<Tensor> cast(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  if (!node.has_attr("to")) fail_user("{}: attribute 'to' is required", node.describe());
  int64_t to = node.attr_int("to", 0);
  std::optional<DType> target = dtype_from_onnx(static_cast<int>(to));
  if (!target) fail_user("{}: 'to' = {} is not a supported ONNX element type", node.describe(), to);
  return {x.cast(*target)};
}

std::vector<Tensor> identity(const Node& node, const std::vector<Tensor>& in) {
  return {required_input(node, in, 0).clone()};
}

// Dropout at inference is the identity with an all-true mask. Training mode drops at random,
// which an oracle cannot reproduce, unless the ratio is 0 (nothing is dropped).
std::vector<Tensor> dropout(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const Tensor* ratio = optional_input(in, 1);
  const Tensor* training = optional_input(in, 2);
  if (training != nullptr && scalar_value(node, *training, "input 2 (training_mode)") != 0) {
    double r = ratio != nullptr ? scalar_value(node, *ratio, "input 1 (ratio)") : 0.5;
    if (r != 0) {
      fail_user("{}: training_mode is true with ratio {}; the reference runs Dropout in inference mode only",
                node.describe(), r);
    }
  }
  Tensor mask(DType::boolean, x.shape());
  for (int64_t i = 0; i < mask.numel(); ++i) mask.data<uint8_t>()[i] = 1;
  return {x.clone(), mask};
}

}  // namespace

void register_conversion_kernels(KernelTable& table) {
  table["Cast"] = cast;
  table["Identity"] = identity;
  table["Dropout"] = dropout;
}

}  // namespace tilefuse::reference
