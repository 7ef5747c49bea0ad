#include "frontend/attribute_conversion.h"

#include "frontend/tensor_proto_conversion.h"
#include "ir/error.h"

namespace tilefuse::frontend {

namespace {

Attribute convert_attribute(const onnx::AttributeProto& attr, const std::string& where) {
  using A = onnx::AttributeProto;
  switch (attr.type()) {
    case A::INT: return attr.i();
    case A::FLOAT: return static_cast<double>(attr.f());
    case A::STRING: return attr.s();
    case A::INTS: return std::vector<int64_t>(attr.ints().begin(), attr.ints().end());
    case A::FLOATS: return std::vector<double>(attr.floats().begin(), attr.floats().end());
    case A::STRINGS: return std::vector<std::string>(attr.strings().begin(), attr.strings().end());
    case A::TENSOR: return tensor_from_proto(attr.t(), fmt::format("{}: attribute '{}'", where, attr.name()));
    default:
      fail_user("{}: attribute '{}' has type {}, which is not supported (only int, float, string, tensor "
                "and lists of int, float, string)",
                where, attr.name(),
                A::AttributeType_IsValid(attr.type())
                    ? A::AttributeType_Name(static_cast<A::AttributeType>(attr.type()))
                    : std::to_string(attr.type()));
  }
}

}  // namespace

AttributeMap convert_attributes(const onnx::NodeProto& node, const std::string& where) {
  AttributeMap attrs;
  for (const auto& attr : node.attribute()) {
    if (!attrs.emplace(attr.name(), convert_attribute(attr, where)).second) {
      fail_user("{}: attribute '{}' is given twice", where, attr.name());
    }
  }
  return attrs;
}

}  // namespace tilefuse::frontend
