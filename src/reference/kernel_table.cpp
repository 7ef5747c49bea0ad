#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

KernelTable build_table() {
  KernelTable table;
  register_unary_kernels(table);
  register_binary_kernels(table);
  register_conversion_kernels(table);
  register_reduction_kernels(table);
  register_normalization_kernels(table);
  register_layout_kernels(table);
  register_selection_kernels(table);
  register_shape_kernels(table);
  register_matmul_kernels(table);
  register_window_kernels(table);
  register_index_kernels(table);
  register_einsum_kernel(table);
  register_resize_kernel(table);
  register_grid_sample_kernel(table);
  register_detection_kernels(table);
  register_recurrent_kernels(table);
  register_control_flow_kernels(table);
  return table;
}

}  // namespace

const Kernel* find_kernel(std::string_view op) {
  static const KernelTable table = build_table();
  auto it = table.find(op);
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace tilefuse::reference
