#include "ir/printer.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "ir/error.h"
#include "ir/half.h"

namespace tilefuse {

bool is_plain_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-';
}

namespace {

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        // Other control bytes are escaped so a printed line never breaks; UTF-8 passes through.
        if (u < 0x20 || u == 0x7f) {
          out += fmt::format("\\x{:02x}", u);
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Names of values, nodes, graphs and ops: bare when they are plain words, quoted otherwise.
// `const` is quoted because the parser reads a bare `= const` as a constant definition.
std::string name_text(std::string_view name) {
  bool plain = !name.empty() && name != "const" && name != "none" &&
               std::all_of(name.begin(), name.end(), is_plain_name_char);
  return plain ? std::string(name) : quote(name);
}

std::string value_ref(const Value* v) { return v == nullptr ? "none" : "%" + name_text(v->name); }

uint64_t raw_bits(const Tensor& t, int64_t i) {
  uint64_t bits = 0;
  size_t size = dtype_size(t.dtype());
  std::memcpy(&bits, static_cast<const uint8_t*>(t.raw()) + i * size, size);  // little-endian
  return bits;
}

uint64_t canonical_nan_bits(DType t) {
  switch (t) {
    case DType::f32: return 0x7fc00000u;
    case DType::f64: return 0x7ff8000000000000u;
    case DType::f16: return 0x7e00u;
    case DType::bf16: return 0x7fc0u;
    default: fail_internal("canonical_nan_bits: {} is not a float type", dtype_name(t));
  }
}

// The shortest text that the parser's path (decimal -> float -> 16 bits) maps back to the
// same bits: 0.1 rather than 0.099975586 for the f16 nearest to 0.1, 65504 rather than 6.55e+04.
std::string half_element(DType dtype, uint16_t bits, float value) {
  std::string exact = fmt::format("{}", value);  // every f16/bf16 value is a float
  for (int precision = 1; precision < 9; ++precision) {
    std::string text = fmt::format("{:.{}g}", value, precision);
    float parsed = 0;
    std::from_chars(text.data(), text.data() + text.size(), parsed);
    if ((dtype == DType::f16 ? f32_to_f16(parsed) : f32_to_bf16(parsed)) == bits) {
      return text.size() < exact.size() ? text : exact;
    }
  }
  return exact;
}

// Shortest decimal that reads back to the same value. NaNs other than the canonical one keep
// their bits.
std::string float_element(const Tensor& t, int64_t i) {
  double v = t.get_f64(i);
  uint64_t bits = raw_bits(t, i);
  if (std::isnan(v)) return bits == canonical_nan_bits(t.dtype()) ? "nan" : fmt::format("0x{:x}", bits);
  switch (t.dtype()) {
    case DType::f64: return fmt::format("{}", v);
    case DType::f32: return fmt::format("{}", static_cast<float>(v));
    default: return half_element(t.dtype(), static_cast<uint16_t>(bits), static_cast<float>(v));
  }
}

std::string element_text(const Tensor& t, int64_t i) {
  if (is_float(t.dtype())) return float_element(t, i);
  if (t.dtype() == DType::boolean) return t.data<uint8_t>()[i] != 0 ? "true" : "false";
  return fmt::format("{}", t.get_i64(i));
}

std::string dense_text(const Tensor& t, const PrintOptions& options) {
  if (options.place_data && t.numel() > options.place_above_elements) {
    return fmt::format("external<{}>", options.place_data(t));
  }
  if (options.elide_large_constants && t.numel() > options.elide_above_elements) return "dense<...>";
  std::string out = "dense<";
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (i) out += ", ";
    out += element_text(t, i);
  }
  return out + ">";
}

// A double attribute always shows it is a float (a '.', an exponent, inf or nan).
std::string double_text(double v) {
  if (std::isnan(v)) return "nan";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // 'n' covers inf
  return s;
}

template <typename T, typename F>
std::string list_text(const std::vector<T>& items, std::string_view empty, F&& item_text) {
  if (items.empty()) return std::string(empty);
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += item_text(items[i]);
  }
  return out + "]";
}

// A subgraph attribute: the graph's own text, its lines indented one level deeper.
std::string subgraph_text(const Graph& graph, const PrintOptions& options) {
  const std::string text = print_graph(graph, options);
  std::string out;
  for (size_t i = 0; i + 1 < text.size(); ++i) out += text[i] == '\n' ? std::string("\n    ") : std::string(1, text[i]);
  return out;
}

std::string attribute_text(const Attribute& attr, const PrintOptions& options) {
  return std::visit(
      [&](const auto& a) -> std::string {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          return fmt::format("{}", a);
        } else if constexpr (std::is_same_v<T, double>) {
          return double_text(a);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return quote(a);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return list_text(a, "ints[]", [](int64_t x) { return fmt::format("{}", x); });
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          return list_text(a, "floats[]", double_text);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          return list_text(a, "strings[]", [](const std::string& x) { return quote(x); });
        } else if constexpr (std::is_same_v<T, Tensor>) {
          return a.summary() + " " + dense_text(a, options);
        } else {
          return subgraph_text(*a, options);
        }
      },
      attr);
}

std::string attributes_text(const AttributeMap& attrs, const PrintOptions& options) {
  if (attrs.empty()) return "";
  std::string out = " {";
  bool first = true;
  for (const auto& [key, attr] : attrs) {
    if (!first) out += ", ";
    first = false;
    out += name_text(key) + " = " + attribute_text(attr, options);
  }
  return out + "}";
}

std::string sym_value_text(const Value& v) {
  if (!v.sym_value) return "";
  std::string out = " sym<";
  for (size_t i = 0; i < v.sym_value->size(); ++i) {
    if (i) out += ", ";
    out += (*v.sym_value)[i].to_string();
  }
  return out + ">";
}

// `%name: f32[N, 4]` plus what else the value knows about its contents.
std::string declaration(const Value& v, bool with_data, const PrintOptions& options) {
  std::string out = "%" + name_text(v.name) + ": " + v.type_string() + sym_value_text(v);
  if (with_data && v.constant) out += " " + dense_text(*v.constant, options);
  return out;
}

std::string node_text(const Node& node, const PrintOptions& options) {
  std::string out;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    out += (i ? ", " : "") + declaration(*node.outputs[i], true, options);
  }
  if (!node.outputs.empty()) out += " = ";
  out += name_text(node.op) + "(";
  for (size_t i = 0; i < node.inputs.size(); ++i) out += (i ? ", " : "") + value_ref(node.inputs[i]);
  return out + ")" + attributes_text(node.attrs, options) + " @" + name_text(node.name);
}

std::string header_text(const Graph& graph, const PrintOptions& options) {
  std::string out = "graph " + name_text(graph.name) + "(";
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    out += (i ? ", " : "") + declaration(*graph.inputs()[i], true, options);
  }
  out += ") -> (";
  for (size_t i = 0; i < graph.outputs().size(); ++i) out += (i ? ", " : "") + value_ref(graph.outputs()[i]);
  return out + ") {\n";
}

// What inference took for granted about the symbols (Graph::assume_*), so that a graph read
// back (a model package) still checks it on every set of input shapes.
std::string assumptions_text(const Graph& graph) {
  std::string out;
  for (const Graph::Assumption& a : graph.assumptions()) {
    out += fmt::format("  assume nonnegative({}) {}\n", a.dim.to_string(), quote(a.reason));
  }
  for (const Graph::BroadcastAssumption& a : graph.broadcast_assumptions()) {
    out += fmt::format("  assume broadcast({}, {}) {}\n", a.operand.to_string(), a.result.to_string(), quote(a.reason));
  }
  return out;
}

}  // namespace

std::string print_graph(const Graph& graph, const PrintOptions& options) {
  std::string out = header_text(graph, options) + assumptions_text(graph);
  const auto& inputs = graph.inputs();
  for (const Value* v : graph.values()) {
    bool is_input = std::find(inputs.begin(), inputs.end(), v) != inputs.end();
    if (v->producer != nullptr || is_input || !v->constant) continue;
    out += "  " + declaration(*v, false, options) + " = const " + dense_text(*v->constant, options) + "\n";
  }
  for (const Node* node : graph.nodes()) out += "  " + node_text(*node, options) + "\n";
  return out + "}\n";
}

}  // namespace tilefuse
