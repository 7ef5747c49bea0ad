// Checked access to a kernel's inputs: presence, element types, integer lists and axes. Every
// failure is a UserError naming the node and the rule.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace tilefuse::reference {

// inputs[i], which the op requires.
const Tensor& required_input(const Node& node, const std::vector<Tensor>& inputs, size_t i);
// inputs[i], or nullptr when the optional input is omitted.
const Tensor* optional_input(const std::vector<Tensor>& inputs, size_t i);

void require_same_dtype(const Node& node, const Tensor& a, const Tensor& b);
void require_dtype(const Node& node, const Tensor& t, std::initializer_list<DType> accepted, std::string_view what);

// Contents of an integer tensor of rank <= 1 (shapes, axes, starts, ...); `what` names it.
std::vector<int64_t> int_list(const Node& node, const Tensor& t, std::string_view what);
// The single element of a one-element tensor, as double; `what` names it.
double scalar_value(const Node& node, const Tensor& t, std::string_view what);

int64_t node_axis(const Node& node, int64_t axis, int64_t rank);
// Normalised axes, each in [-rank, rank), no duplicates.
std::vector<int64_t> node_axes(const Node& node, const std::vector<int64_t>& axes, int64_t rank);

}  // namespace tilefuse::reference
