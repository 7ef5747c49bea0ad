// Node attributes: the ONNX attribute kinds tilefuse uses. Floats are kept as double.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace tilefuse {

enum class AttrKind { Int, Float, String, Ints, Floats, Strings, Tensor };

using Attribute = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>, Tensor>;
using AttributeMap = std::map<std::string, Attribute, std::less<>>;

AttrKind attr_kind(const Attribute& a);
std::string_view attr_kind_name(AttrKind kind);

}  // namespace tilefuse
