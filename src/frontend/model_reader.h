// Reading and validating an ONNX ModelProto through the onnx library: parsing, structural
// pre-checks that keep hostile input away from onnx's own code, the checker and onnx shape
// inference. Every failure is a UserError naming `origin` (the file, or "<memory>").
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

namespace tilefuse::frontend {

// Parses the bytes; truncated or non-protobuf data is an error.
onnx::ModelProto parse_model(const std::string& bytes, const std::string& origin);

// Rejects what we do not import before onnx's code sees it: external or sparse tensor data,
// subgraph attributes, model-local functions, graph inputs without element type or shape,
// values used before (or without) being defined or defined twice.
void check_model_structure(const onnx::ModelProto& model, const std::string& origin);

// onnx::checker::check_model; its ValidationError becomes a UserError.
// Lowers an IR version newer than the library knows to the newest it knows (see the .cpp).
void check_model(onnx::ModelProto& model, const std::string& origin);

// onnx shape inference in strict mode (node-level errors and type mismatches are errors).
void infer_onnx_shapes(onnx::ModelProto& model, const std::string& origin);

}  // namespace tilefuse::frontend
