// onnx::AttributeProto -> Attribute (the kinds our ops use).
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "ir/attribute.h"

namespace tilefuse::frontend {

// Converts every attribute of `node`. Kinds other than INT, FLOAT, STRING, INTS, FLOATS, STRINGS
// and TENSOR (graphs, sparse tensors, type protos) are rejected with a UserError prefixed with
// `where` and naming the attribute.
AttributeMap convert_attributes(const onnx::NodeProto& node, const std::string& where);

}  // namespace tilefuse::frontend
