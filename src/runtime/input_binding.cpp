#include "runtime/input_binding.h"

#include <algorithm>
#include <set>

#include <fmt/ranges.h>

#include "ir/log.h"
#include "runtime/random_fill.h"
#include "ir/error.h"

namespace tilefuse::runtime {
namespace {

std::string describe_inputs(const Graph& graph) {
  std::vector<std::string> parts;
  for (const Value* input : graph.inputs()) parts.push_back(fmt::format("'{}' {}", input->name, input->type_string()));
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

bool is_graph_input(const Graph& graph, const std::string& name) {
  return std::any_of(graph.inputs().begin(), graph.inputs().end(), [&](const Value* v) { return v->name == name; });
}

void check_names_known(const Graph& graph, const std::map<std::string, Tensor>& given) {
  for (const auto& [name, tensor] : given) {
    if (!is_graph_input(graph, name)) {
      fail_user("unknown input '{}': the model's inputs are {}", name, describe_inputs(graph));
    }
    if (!tensor.defined()) fail_user("input '{}': no tensor given", name);
  }
}

[[noreturn]] void fail_mismatch(const Value& input, const Tensor& tensor, const std::string& detail) {
  fail_user("input '{}': expected {}, got {} ({})", input.name, input.type_string(), tensor.summary(), detail);
}

// Dtype, rank and the constant dims: everything checkable without the other inputs.
void check_fixed_type(const Value& input, const Tensor& tensor) {
  if (tensor.dtype() != input.dtype) {
    fail_mismatch(input, tensor, fmt::format("dtype is {}, expected {}", dtype_name(tensor.dtype()), dtype_name(input.dtype)));
  }
  if (tensor.rank() != input.rank()) {
    fail_mismatch(input, tensor, fmt::format("rank is {}, expected {}", tensor.rank(), input.rank()));
  }
  for (size_t i = 0; i < input.shape.size(); ++i) {
    std::optional<int64_t> expected = input.shape[i].const_value();
    if (expected && *expected != tensor.shape()[i]) {
      fail_mismatch(input, tensor, fmt::format("dim {} is {}, expected {}", i, tensor.shape()[i], *expected));
    }
  }
}

// Gives each symbol its value from the first input whose dim is exactly that symbol, and checks
// every later occurrence against it.
class SymbolBinder {
 public:
  void bind(const Value& input, const Tensor& tensor) {
    for (size_t i = 0; i < input.shape.size(); ++i) {
      if (!input.shape[i].is_symbol()) continue;
      const std::string& symbol = input.shape[i].name();
      const int64_t actual = tensor.shape()[i];
      auto [it, inserted] = values_.try_emplace(symbol, actual);
      if (inserted) {
        bound_by_[symbol] = input.name;
      } else if (it->second != actual) {
        fail_mismatch(input, tensor, fmt::format("dim {} is {}, but {} is {} from input '{}'", i, actual, symbol,
                                                 it->second, bound_by_.at(symbol)));
      }
    }
  }

  // Dims such as N+1 can only be checked once every plain symbol is bound.
  void check_expressions(const Value& input, const Tensor& tensor) const {
    for (size_t i = 0; i < input.shape.size(); ++i) {
      const Dim& dim = input.shape[i];
      if (dim.is_const() || dim.is_symbol()) continue;
      for (const std::string& symbol : dim.symbols()) {
        if (values_.count(symbol) == 0) {
          fail_mismatch(input, tensor, fmt::format("dim {} is the expression {}, and no input has {} as a plain dim "
                                                   "to take its value from", i, dim.to_string(), symbol));
        }
      }
      const int64_t expected = dim.evaluate(values_);
      if (expected != tensor.shape()[i]) {
        fail_mismatch(input, tensor, fmt::format("dim {} is {}, expected {} = {}", i, tensor.shape()[i],
                                                 dim.to_string(), expected));
      }
    }
  }

  const SymbolBindings& values() const { return values_; }

 private:
  SymbolBindings values_;
  std::map<std::string, std::string> bound_by_;  // symbol -> the input that fixed it
};

// The concrete dims of an input that was not given; every symbol must be fixed by given inputs.
std::vector<int64_t> dims_of_missing(const Value& input, SymbolBindings& symbols,
                                     std::optional<int64_t> unbound_value) {
  std::vector<int64_t> dims;
  std::set<std::string> unbound;
  for (const Dim& dim : input.shape) {
    Dim known = dim.substitute(symbols);
    if (!known.is_const() && unbound_value) {
      for (const std::string& s : known.symbols()) {
        if (symbols.emplace(s, *unbound_value).second) {
          logger().info("symbol {}: no given input fixes it, so it is {}", s, *unbound_value);
        }
      }
      known = dim.substitute(symbols);
    }
    if (known.is_const()) {
      dims.push_back(known.value());
    } else {
      for (const std::string& s : known.symbols()) unbound.insert(s);
    }
  }
  if (!unbound.empty()) {
    fail_user("input '{}' ({}) was not given, and no given input fixes its symbolic dim {}: pass input '{}' "
              "as a .npy file (--input {}=FILE.npy)",
              input.name, input.type_string(), fmt::join(unbound, ", "), input.name, input.name);
  }
  return dims;
}

}  // namespace

std::map<std::string, Tensor> BoundInputs::by_name() const {
  std::map<std::string, Tensor> out;
  for (const BoundInput& input : inputs) out.emplace(input.name, input.tensor);
  return out;
}

BoundInputs bind_inputs(const Graph& graph, const std::map<std::string, Tensor>& given, const BindOptions& options) {
  check_names_known(graph, given);
  SymbolBinder binder;
  for (const Value* input : graph.inputs()) {
    auto it = given.find(input->name);
    if (it == given.end()) continue;
    check_fixed_type(*input, it->second);
    binder.bind(*input, it->second);
  }
  SymbolBindings symbols = binder.values();  // and those that missing inputs' sizes fix
  BoundInputs bound;
  for (const Value* input : graph.inputs()) {
    auto it = given.find(input->name);
    if (it != given.end()) {
      binder.check_expressions(*input, it->second);
      bound.inputs.push_back({input->name, it->second, false});
      continue;
    }
    if (!options.fill_missing_randomly) {
      fail_user("input '{}' ({}) is missing; the model's inputs are {}", input->name, input->type_string(),
                describe_inputs(graph));
    }
    std::mt19937_64 rng = input_rng(options.seed, input->name);
    Tensor data = random_tensor(input->dtype, dims_of_missing(*input, symbols, options.unbound_symbol_value), rng);
    logger().info("input '{}': random {} (seed {})", input->name, data.summary(), options.seed);
    bound.inputs.push_back({input->name, std::move(data), true});
  }
  bound.symbols = std::move(symbols);
  return bound;
}

}  // namespace tilefuse::runtime
