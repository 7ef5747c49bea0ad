// The table from op name to reference kernel. Each kernel file registers its op group.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace tilefuse::reference {

// Computes a node's outputs from its input tensors (same contract as evaluate_node). A kernel
// returns at least as many tensors as the node has outputs.
using Kernel = std::function<std::vector<Tensor>(const Node& node, const std::vector<Tensor>& inputs)>;
using KernelTable = std::map<std::string, Kernel, std::less<>>;

// The kernel for `op`, or nullptr when the reference has none.
const Kernel* find_kernel(std::string_view op);

void register_unary_kernels(KernelTable& table);
void register_binary_kernels(KernelTable& table);
void register_conversion_kernels(KernelTable& table);
void register_reduction_kernels(KernelTable& table);
void register_normalization_kernels(KernelTable& table);
void register_layout_kernels(KernelTable& table);
void register_selection_kernels(KernelTable& table);
void register_shape_kernels(KernelTable& table);
void register_matmul_kernels(KernelTable& table);
void register_window_kernels(KernelTable& table);
void register_index_kernels(KernelTable& table);
void register_einsum_kernel(KernelTable& table);
void register_resize_kernel(KernelTable& table);
void register_grid_sample_kernel(KernelTable& table);
void register_detection_kernels(KernelTable& table);
void register_recurrent_kernels(KernelTable& table);
void register_control_flow_kernels(KernelTable& table);

}  // namespace tilefuse::reference
