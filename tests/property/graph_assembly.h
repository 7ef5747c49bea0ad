// What the property builders that draw one kind of graph share (window_spec.h, product_spec.h):
// a graph under construction whose inputs are named in order and have concrete dims (their
// symbols evaluated under the assembly's bindings), whose nodes are named by a running id with
// shapes inferred after each, and whose constants hold values from a seeded generator.
#pragma once

#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "property/graph_builder.h"

namespace tilefuse::property {

class GraphAssembly {
 public:
  explicit GraphAssembly(uint64_t seed) : rng_(seed) {}

  // Binds a symbol for the inputs made after this.
  void bind(const std::string& symbol, int64_t value) { out_.bindings[symbol] = value; }

  Value* input(const Shape& shape, DType dtype = DType::f32) {
    std::string name = fmt::format("in{}", out_.input_dims.size());
    std::vector<int64_t>& dims = out_.input_dims[name];
    for (const Dim& d : shape) dims.push_back(d.evaluate(out_.bindings));
    return out_.graph.add_input(name, dtype, shape);
  }

  Value* node(const std::string& op, std::vector<Value*> inputs, AttributeMap attrs = {}) {
    std::string id = fmt::format("{}", next_id_++);
    Value* v = out_.graph.add_node(op, op + id, std::move(inputs), {"v" + id}, std::move(attrs))->outputs[0];
    out_.graph.infer_shapes();
    return v;
  }

  // A constant of uniform values in [-0.5, 0.5) from the seed.
  Value* weights(std::vector<int64_t> shape, DType dtype = DType::f32) {
    Tensor t(dtype, std::move(shape));
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, u(rng_));
    return constant(std::move(t));
  }

  Value* constant(Tensor t) { return out_.graph.add_constant(fmt::format("c{}", next_id_++), std::move(t)); }
  Value* scalar(float v) { return constant(Tensor::scalar_f32(v)); }
  Value* i64s(const std::vector<int64_t>& values) {
    return constant(Tensor::from_vector(DType::i64, {static_cast<int64_t>(values.size())}, values));
  }

  Graph& graph() { return out_.graph; }

  BuiltGraph finish(const std::vector<Value*>& outputs) {
    for (Value* v : outputs) out_.graph.add_output(v);
    return std::move(out_);
  }

 private:
  std::mt19937_64 rng_;
  BuiltGraph out_;
  int next_id_ = 0;
};

}  // namespace tilefuse::property
