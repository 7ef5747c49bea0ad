#include "frontend/model_reader.h"

#include <set>
#include <vector>

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include "ir/error.h"
#include "ir/log.h"

namespace tilefuse::frontend {

namespace {

bool is_external(const onnx::TensorProto& t) { return t.data_location() == onnx::TensorProto::EXTERNAL; }

void check_attribute_structure(const onnx::NodeProto& node, const onnx::AttributeProto& attr,
                               const std::string& origin) {
  using A = onnx::AttributeProto;
  switch (attr.type()) {
    case A::GRAPH:
      if ((node.op_type() == "If" || node.op_type() == "Loop") && node.domain().empty()) {
        for (const auto& inner : attr.g().node()) {
          for (const auto& inner_attr : inner.attribute()) check_attribute_structure(inner, inner_attr, origin);
        }
        return;
      }
      [[fallthrough]];
    case A::GRAPHS:
      fail_user("{}: node '{}' ({}): attribute '{}' holds a subgraph; subgraphs are supported for If and Loop only",
                origin, node.name(), node.op_type(), attr.name());
    case A::SPARSE_TENSOR:
    case A::SPARSE_TENSORS:
      fail_user("{}: node '{}' ({}): attribute '{}' holds a sparse tensor; sparse tensors are not supported",
                origin, node.name(), node.op_type(), attr.name());
    default: break;
  }
  bool external = is_external(attr.t());
  for (const auto& t : attr.tensors()) external = external || is_external(t);
  if (external) {
    fail_user("{}: node '{}' ({}): attribute '{}' refers to external tensor data, which is not supported; "
              "save the model with its data inline",
              origin, node.name(), node.op_type(), attr.name());
  }
}

// Graph inputs must say what they are: onnx's checker would reject these too, without naming
// the input.
void check_graph_input(const onnx::ValueInfoProto& input, const std::string& origin) {
  std::string where = fmt::format("{}: graph input '{}'", origin, input.name());
  if (!input.type().has_tensor_type()) fail_user("{} is not a tensor", where);
  const auto& tensor_type = input.type().tensor_type();
  if (!tensor_type.has_elem_type()) fail_user("{} has no element type", where);
  if (!tensor_type.has_shape()) fail_user("{} has no shape (its rank must be known)", where);
}

// Every value is defined once, before its uses, and every graph output is defined. onnx's
// checker leaves graph outputs unchecked, and its version converter crashes on an undefined one.
void check_dataflow(const onnx::GraphProto& graph, const std::string& origin) {
  std::set<std::string> defined;
  auto define = [&](const std::string& name, const std::string& what) {
    if (!defined.insert(name).second) fail_user("{}: value '{}' ({}) is defined more than once", origin, name, what);
  };
  for (const auto& init : graph.initializer()) define(init.name(), "initializer");
  for (const auto& input : graph.input()) {
    // An initializer may also be listed as an input (it is then the input's default).
    if (!defined.count(input.name())) define(input.name(), "graph input");
  }
  for (const auto& node : graph.node()) {
    for (const auto& in : node.input()) {
      if (!in.empty() && !defined.count(in)) {
        fail_user("{}: node '{}' ({}) uses value '{}', which is not defined before it", origin, node.name(),
                  node.op_type(), in);
      }
    }
    for (const auto& out : node.output()) {
      if (!out.empty()) define(out, fmt::format("output of node '{}'", node.name()));
    }
  }
  for (const auto& output : graph.output()) {
    if (!defined.count(output.name())) fail_user("{}: graph output '{}' is not defined", origin, output.name());
  }
}

}  // namespace

onnx::ModelProto parse_model(const std::string& bytes, const std::string& origin) {
  if (bytes.empty()) fail_user("{}: the file is empty, not an ONNX model", origin);
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    fail_user("{}: not a valid or complete ONNX protobuf (parsing failed: truncated or not an ONNX model)",
              origin);
  }
  if (!model.has_graph()) {
    fail_user("{}: not a valid or complete ONNX protobuf (the model has no graph; truncated or not an ONNX "
              "model)",
              origin);
  }
  return model;
}

void check_model_structure(const onnx::ModelProto& model, const std::string& origin) {
  const onnx::GraphProto& graph = model.graph();
  if (model.functions_size() > 0) fail_user("{}: model-local functions are not supported", origin);
  if (graph.sparse_initializer_size() > 0) fail_user("{}: sparse initializers are not supported", origin);
  for (const auto& init : graph.initializer()) {
    if (is_external(init)) {
      fail_user("{}: initializer '{}' refers to external tensor data, which can only be read when the model is "
                "loaded from a file (its folder holds the data)",
                origin, init.name());
    }
  }
  for (const auto& input : graph.input()) check_graph_input(input, origin);
  check_dataflow(graph, origin);
  for (const auto& node : graph.node()) {
    for (const auto& attr : node.attribute()) check_attribute_structure(node, attr, origin);
  }
}

void check_model(onnx::ModelProto& model, const std::string& origin) {
  // onnx 1.12 refuses any IR version newer than its own outright. What we import (no float8 or
  // 4-bit types, no subgraphs or functions) reads the same under the newest version it knows.
  if (model.ir_version() > onnx::IR_VERSION) {
    logger().info("{}: IR version {} is newer than the onnx library knows; checking it as IR version {}",
                 origin, model.ir_version(), static_cast<int>(onnx::IR_VERSION));
    model.set_ir_version(onnx::IR_VERSION);
  }
  // A graph output may leave its shape out (ONNX Runtime accepts that, and shape inference fills
  // it in), but onnx's checker demands one: such outputs get an empty shape for the check only.
  std::vector<onnx::TypeProto_Tensor*> shapeless;
  for (onnx::ValueInfoProto& output : *model.mutable_graph()->mutable_output()) {
    if (!output.type().has_tensor_type() || output.type().tensor_type().has_shape()) continue;
    onnx::TypeProto_Tensor* tensor = output.mutable_type()->mutable_tensor_type();
    tensor->mutable_shape();
    shapeless.push_back(tensor);
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {  // ValidationError, and whatever else onnx throws on bad input
    fail_user("{}: invalid ONNX model: {}", origin, e.what());
  }
  for (onnx::TypeProto_Tensor* tensor : shapeless) tensor->clear_shape();
}

void infer_onnx_shapes(onnx::ModelProto& model, const std::string& origin) {
  onnx::ShapeInferenceOptions options(/*check_type=*/true, /*strict_mode=*/1, /*data_prop=*/false);
  try {
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {  // InferenceError, ValidationError
    fail_user("{}: ONNX shape inference failed: {}", origin, e.what());
  }
}

}  // namespace tilefuse::frontend
