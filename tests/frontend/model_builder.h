// Builds small ONNX models in memory with the onnx protobuf API, for frontend tests and fuzz seeds.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <onnx/onnx_pb.h>

namespace tilefuse::test {

// A dim of an input/output: a size, a dim_param name, or unknown (std::monostate).
using DimSpec = std::variant<int64_t, std::string, std::monostate>;

inline onnx::TensorProto make_tensor(const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(elem_type);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

inline onnx::TensorProto f32_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                    const std::vector<float>& values) {
  onnx::TensorProto t = make_tensor(name, onnx::TensorProto::FLOAT, dims);
  for (float v : values) t.add_float_data(v);
  return t;
}

inline onnx::TensorProto i64_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& values) {
  onnx::TensorProto t = make_tensor(name, onnx::TensorProto::INT64, dims);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

inline void set_type(onnx::ValueInfoProto* info, int elem_type, const std::vector<DimSpec>& dims) {
  auto* tensor_type = info->mutable_type()->mutable_tensor_type();
  tensor_type->set_elem_type(elem_type);
  auto* shape = tensor_type->mutable_shape();
  for (const DimSpec& d : dims) {
    auto* dim = shape->add_dim();
    if (const auto* v = std::get_if<int64_t>(&d)) dim->set_dim_value(*v);
    if (const auto* p = std::get_if<std::string>(&d)) dim->set_dim_param(*p);
  }
}

inline void add_attr(onnx::NodeProto& node, const std::string& name, int64_t v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void add_attr(onnx::NodeProto& node, const std::string& name, float v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline void add_attr(onnx::NodeProto& node, const std::string& name, const std::string& v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

inline void add_attr(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline void add_attr(onnx::NodeProto& node, const std::string& name, const onnx::TensorProto& v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = v;
}

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17) {
    model_.set_ir_version(8);
    model_.set_producer_name("tilefuse-tests");
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name("test_graph");
  }

  ModelBuilder& opset(const std::string& domain, int64_t version) {
    auto* op = model_.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
    return *this;
  }

  ModelBuilder& input(const std::string& name, int elem_type, const std::vector<DimSpec>& dims) {
    auto* info = model_.mutable_graph()->add_input();
    info->set_name(name);
    set_type(info, elem_type, dims);
    return *this;
  }

  ModelBuilder& output(const std::string& name, int elem_type, const std::vector<DimSpec>& dims) {
    auto* info = model_.mutable_graph()->add_output();
    info->set_name(name);
    set_type(info, elem_type, dims);
    return *this;
  }

  ModelBuilder& initializer(const onnx::TensorProto& t) {
    *model_.mutable_graph()->add_initializer() = t;
    return *this;
  }

  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "",
                        const std::string& domain = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  onnx::ModelProto& proto() { return model_; }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

}  // namespace tilefuse::test
