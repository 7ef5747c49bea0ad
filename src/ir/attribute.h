// Node attributes: the ONNX attribute kinds tilefuse uses. Floats are kept as double.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace tilefuse {

enum class AttrKind { Int, Float, String, Ints, Floats, Strings, Tensor, Graph };

class Graph;
// A subgraph (If's branches, Loop's body): closed (it reads only its own inputs and constants:
// the importer turns ONNX's outer-scope references into inputs of the node) and never changed
// after it is built, so copies of a node share it.
using GraphRef = std::shared_ptr<const Graph>;

using Attribute = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>, Tensor, GraphRef>;
using AttributeMap = std::map<std::string, Attribute, std::less<>>;

AttrKind attr_kind(const Attribute& a);
std::string_view attr_kind_name(AttrKind kind);

}  // namespace tilefuse
