#include "ir/attribute.h"

namespace tilefuse {

AttrKind attr_kind(const Attribute& a) { return static_cast<AttrKind>(a.index()); }

std::string_view attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::Int: return "int";
    case AttrKind::Float: return "float";
    case AttrKind::String: return "string";
    case AttrKind::Ints: return "ints";
    case AttrKind::Floats: return "floats";
    case AttrKind::Strings: return "strings";
    case AttrKind::Tensor: return "tensor";
    case AttrKind::Graph: return "graph";
  }
  return "?";
}

}  // namespace tilefuse
