#include "ir/parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>
#include <tuple>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/printer.h"

namespace tilefuse {

namespace {

bool fits(int64_t v, DType integer_type) {
  switch (integer_type) {
    case DType::i8: return v >= std::numeric_limits<int8_t>::min() && v <= std::numeric_limits<int8_t>::max();
    case DType::u8: return v >= 0 && v <= std::numeric_limits<uint8_t>::max();
    case DType::i32: return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
    default: return true;
  }
}

// What a definition (`%x: f32[N] sym<N> dense<...>`) says about a value before the value exists.
struct Declaration {
  std::string name;
  size_t pos = 0;  // where it starts, for errors
  bool typed = false;
  DType dtype = DType::f32;
  Shape shape;
  std::optional<std::vector<Dim>> sym_value;
  std::optional<Tensor> data;
};

// Recursive descent over the characters; every error names line:column and what was expected.
class IrParser {
 public:
  IrParser(std::string_view text, const ParseOptions& options) : text_(text), options_(options) {}

  Graph parse() {
    Graph g = graph_body();
    skip_space();
    if (pos_ != text_.size()) error("end of input after the graph's '}'");
    return g;
  }

 private:
  // `graph name(inputs) -> (outputs) { statements }`, at the top or as a subgraph attribute.
  Graph graph_body() {
    expect_keyword("graph");
    graph_.name = name("a graph name");
    expect("(");
    if (!accept(")")) {
      do {
        Declaration d = declaration(true);
        define(graph_.add_input(d.name, d.dtype, d.shape), d);
      } while (accept(","));
      expect(")");
    }
    expect("->");
    std::vector<std::pair<std::string, size_t>> outputs = output_list();
    expect("{");
    while (!accept("}")) statement();
    for (const auto& [out, pos] : outputs) graph_.add_output(lookup(out, pos));
    return std::move(graph_);
  }

  // A subgraph has names of its own: a parser of its own over the same text.
  GraphRef subgraph() {
    IrParser nested(text_, options_);
    nested.pos_ = pos_;
    auto g = std::make_shared<Graph>(nested.graph_body());
    pos_ = nested.pos_;
    return g;
  }

  // ---- characters and errors
  [[noreturn]] void error_at(size_t pos, const std::string& message) {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    fail_user("IR text {}:{}: {}", line, column, message);
  }
  [[noreturn]] void error(const std::string& expected) {
    skip_space();
    std::string found = "end of input";
    if (pos_ < text_.size()) {
      size_t end = pos_;
      while (end < text_.size() && end - pos_ < 12 && !std::isspace(static_cast<unsigned char>(text_[end]))) ++end;
      found = "'" + std::string(text_.substr(pos_, std::max<size_t>(end - pos_, 1))) + "'";
    }
    error_at(pos_, fmt::format("expected {}, found {}", expected, found));
  }
  void skip_space() {
    while (pos_ < text_.size()) {
      if (text_[pos_] == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(text_[pos_]))) {
        ++pos_;
      } else {
        return;
      }
    }
  }
  bool peek(std::string_view token) {
    skip_space();
    return text_.substr(pos_, token.size()) == token;
  }
  bool accept(std::string_view token) {
    if (!peek(token)) return false;
    pos_ += token.size();
    return true;
  }
  void expect(std::string_view token) {
    if (!accept(token)) error("'" + std::string(token) + "'");
  }
  std::string word() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && is_plain_name_char(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  bool accept_keyword(std::string_view keyword) {
    size_t start = pos_;
    if (word() == keyword) return true;
    pos_ = start;
    return false;
  }
  void expect_keyword(std::string_view keyword) {
    if (!accept_keyword(keyword)) error("'" + std::string(keyword) + "'");
  }

  // ---- names and strings
  std::string quoted() {
    expect("\"");
    size_t open = pos_ - 1;
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) error_at(open, "this string has no closing '\"'");
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) error("an escape sequence");
      char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'x': out += static_cast<char>(hex_byte()); break;
        default: --pos_; error("an escape (\\\" \\\\ \\n \\t \\r \\xHH)");
      }
    }
  }
  int hex_byte() {
    int value = 0;
    for (int i = 0; i < 2; ++i) {
      char c = pos_ < text_.size() ? text_[pos_] : '\0';
      if (!std::isxdigit(static_cast<unsigned char>(c))) error("two hex digits after \\x");
      value = value * 16 + (std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10);
      ++pos_;
    }
    return value;
  }
  std::string name(const char* what) {
    if (peek("\"")) return quoted();
    std::string w = word();
    if (w.empty()) error(what);
    return w;
  }
  std::string value_name() {
    expect("%");
    return name("a value name after '%'");
  }

  // ---- types: f32[N, 2*M + 1]
  std::vector<Dim> dim_list(char close) {
    std::vector<Dim> dims;
    if (accept(std::string_view(&close, 1))) return dims;
    while (true) {
      skip_space();
      size_t start = pos_;
      // A dim ends at a ',' or the closing bracket outside parentheses, or at a stray ')'.
      for (int depth = 0; pos_ < text_.size() && text_[pos_] != '\n'; ++pos_) {
        char c = text_[pos_];
        if (depth == 0 && (c == ',' || c == close)) break;
        depth += c == '(' ? 1 : c == ')' ? -1 : 0;
        if (depth < 0) break;
      }
      try {
        dims.push_back(SymExpr::parse(text_.substr(start, pos_ - start)));
      } catch (const UserError& e) {
        error_at(start, e.what());
      }
      if (accept(std::string_view(&close, 1))) return dims;
      if (!accept(",")) error(fmt::format("',' or '{}'", close));
    }
  }
  std::pair<DType, Shape> type() {
    skip_space();
    size_t start = pos_;
    std::string dtype_word = word();
    std::optional<DType> dtype = parse_dtype(dtype_word);
    if (!dtype) {
      pos_ = start;
      error("an element type (f32 f16 bf16 f64 i8 i32 i64 u8 bool)");
    }
    expect("[");
    size_t dims_pos = pos_;
    Shape shape = dim_list(']');
    for (const Dim& d : shape) {
      if (d.is_const() && d.value() < 0) error_at(dims_pos, fmt::format("dimension {} is negative", d.value()));
    }
    return {*dtype, shape};
  }

  // ---- tensor data: dense<1, 2.5, nan, 0x7fc00001>
  std::string number_token() {
    skip_space();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      bool sign_of_exponent = (c == '+' || c == '-') && pos_ > start && (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E');
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && !sign_of_exponent) break;
      ++pos_;
    }
    if (pos_ == start) error("a number");
    return std::string(text_.substr(start, pos_ - start));
  }
  template <typename T>
  bool parse_number(const std::string& token, T& out) {
    auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), out);
    return ec == std::errc() && end == token.data() + token.size();
  }
  void set_element(Tensor& t, int64_t i, const std::string& token, size_t pos) {
    DType dtype = t.dtype();
    if (dtype == DType::boolean) {
      if (token != "true" && token != "false") error_at(pos, "expected true or false, found '" + token + "'");
      t.data<uint8_t>()[i] = token == "true";
    } else if (is_float(dtype)) {
      set_float_element(t, i, token, pos);
    } else {
      int64_t v = 0;
      if (!parse_number(token, v)) error_at(pos, fmt::format("expected an integer of type {}, found '{}'", dtype_name(dtype), token));
      if (!fits(v, dtype)) error_at(pos, fmt::format("{} does not fit in {}", v, dtype_name(dtype)));
      t.set_i64(i, v);
    }
  }
  void set_float_element(Tensor& t, int64_t i, const std::string& token, size_t pos) {
    size_t size = dtype_size(t.dtype());
    void* dst = static_cast<uint8_t*>(t.raw()) + i * size;
    if (token.rfind("0x", 0) == 0) {  // raw bits (NaN payloads)
      uint64_t bits = 0;
      auto [end, ec] = std::from_chars(token.data() + 2, token.data() + token.size(), bits, 16);
      if (ec != std::errc() || end != token.data() + token.size() || (size < 8 && bits >> (8 * size) != 0)) {
        error_at(pos, fmt::format("'{}' is not the bits of a {}", token, dtype_name(t.dtype())));
      }
      std::memcpy(dst, &bits, size);  // little-endian
      return;
    }
    if (t.dtype() == DType::f64) {
      double v = 0;
      if (!parse_number(token, v)) error_at(pos, "expected a f64 number, found '" + token + "'");
      t.set_f64(i, v);
    } else {
      float v = 0;  // f16/bf16 go through float, where every printed value is exact
      if (!parse_number(token, v)) {
        error_at(pos, fmt::format("expected a {} number, found '{}'", dtype_name(t.dtype()), token));
      }
      t.set_f64(i, v);
    }
  }
  // dense<...> or external<OFFSET>.
  Tensor dense(DType dtype, const Shape& shape, size_t type_pos) {
    if (accept_keyword("external")) return external(dtype, shape, type_pos);
    expect_keyword("dense");
    expect("<");
    if (peek("...")) error("tensor data: this text was printed with its large constants elided");
    if (!is_static(shape)) error_at(type_pos, "a tensor with data needs a static shape, got " + shape_to_string(shape));
    Tensor t(dtype, static_dims(shape));
    int64_t count = 0;
    if (!accept(">")) {
      do {
        skip_space();
        size_t pos = pos_;
        std::string token = number_token();
        if (count >= t.numel()) error_at(pos, fmt::format("more than the {} elements of {}", t.numel(), t.summary()));
        set_element(t, count++, token, pos);
      } while (accept(","));
      expect(">");
    }
    if (count != t.numel()) error_at(type_pos, fmt::format("{} needs {} elements, got {}", t.summary(), t.numel(), count));
    return t;
  }

  Tensor external(DType dtype, const Shape& shape, size_t type_pos) {
    expect("<");
    skip_space();
    const size_t pos = pos_;
    int64_t offset = -1;
    if (!parse_number(number_token(), offset) || offset < 0) error_at(pos, "a byte offset (a non-negative integer)");
    expect(">");
    if (!options_.external_data) error_at(pos, "external<OFFSET> data outside a model package");
    if (!is_static(shape)) error_at(type_pos, "a tensor with data needs a static shape, got " + shape_to_string(shape));
    try {
      return options_.external_data(dtype, static_dims(shape), offset);
    } catch (const UserError& e) {
      error_at(pos, e.what());
    }
  }

  // ---- definitions
  Declaration declaration(bool type_required) {
    Declaration d;
    skip_space();
    d.pos = pos_;
    d.name = value_name();
    if (accept(":")) {
      skip_space();
      size_t type_pos = pos_;
      std::tie(d.dtype, d.shape) = type();
      d.typed = true;
      if (accept_keyword("sym")) {
        expect("<");
        d.sym_value = dim_list('>');
      }
      if (peek("dense") || peek("external")) d.data = dense(d.dtype, d.shape, type_pos);
    } else if (type_required) {
      error("':' and a type after %" + d.name);
    }
    return d;
  }
  void define(Value* v, const Declaration& d) {
    if (values_.count(d.name)) error_at(d.pos, fmt::format("value %{} is defined twice", d.name));
    values_[d.name] = v;
    v->name = d.name;
    if (!d.typed) return;
    v->dtype = d.dtype;
    v->shape = d.shape;
    v->sym_value = d.sym_value;
    v->constant = d.data;
  }
  Value* lookup(const std::string& name, size_t pos) {
    auto it = values_.find(name);
    if (it == values_.end()) error_at(pos, fmt::format("value %{} is not defined before this use", name));
    return it->second;
  }
  std::vector<std::pair<std::string, size_t>> output_list() {
    std::vector<std::pair<std::string, size_t>> outputs;
    expect("(");
    if (accept(")")) return outputs;
    do {
      skip_space();
      size_t pos = pos_;
      outputs.emplace_back(value_name(), pos);
    } while (accept(","));
    expect(")");
    return outputs;
  }

  // ---- statements: constants and nodes
  void statement() {
    if (accept_keyword("assume")) return assumption();
    std::vector<Declaration> outputs;
    if (peek("%")) {
      do {
        outputs.push_back(declaration(false));
      } while (accept(","));
      expect("=");
      if (accept_keyword("const")) return constant(outputs);
    }
    node(outputs);
  }
  // `assume nonnegative(DIM) "reason"` or `assume broadcast(DIM, DIM) "reason"` (Graph::assume_*).
  void assumption() {
    skip_space();
    const size_t pos = pos_;
    const std::string kind = word();
    if (kind != "nonnegative" && kind != "broadcast") error_at(pos, "expected nonnegative or broadcast after assume");
    expect("(");
    const std::vector<Dim> dims = dim_list(')');
    if (dims.size() != (kind == "broadcast" ? 2u : 1u)) {
      error_at(pos, fmt::format("assume {} takes {} dims, got {}", kind, kind == "broadcast" ? 2 : 1, dims.size()));
    }
    skip_space();
    std::string reason = quoted();
    if (kind == "broadcast") {
      graph_.assume_broadcast(dims[0], dims[1], std::move(reason));
    } else {
      graph_.assume_nonnegative(dims[0], std::move(reason));
    }
  }
  void constant(std::vector<Declaration>& decls) {
    Declaration& d = decls.front();
    if (decls.size() != 1 || !d.typed || d.data) error_at(d.pos, "a constant is one typed value: %name: f32[2] = const dense<...>");
    skip_space();
    d.data = dense(d.dtype, d.shape, pos_);
    define(graph_.add_constant(d.name, *d.data), d);
  }
  void node(const std::vector<Declaration>& outputs) {
    skip_space();
    size_t op_pos = pos_;
    std::string op = name("an op name");
    std::vector<Value*> inputs = node_inputs();
    AttributeMap attrs = peek("{") ? attributes() : AttributeMap{};
    std::optional<std::string> node_name;
    if (accept("@")) node_name = name("a node name after '@'");
    std::vector<std::string> output_names(outputs.size());
    Node* n = graph_.add_node(op, node_name.value_or(""), inputs, output_names, std::move(attrs));
    if (node_name) n->name = *node_name;  // add_node would make up a name for ""
    size_t typed = 0;
    for (size_t i = 0; i < outputs.size(); ++i) {
      define(n->outputs[i], outputs[i]);
      typed += outputs[i].typed;
    }
    if (typed == outputs.size()) return;
    if (typed != 0) error_at(op_pos, "either every output of a node has a type or none has (then it is inferred)");
    try {
      infer_node(*n, graph_);
    } catch (const UserError& e) {
      error_at(op_pos, e.what());
    }
  }
  std::vector<Value*> node_inputs() {
    std::vector<Value*> inputs;
    expect("(");
    if (accept(")")) return inputs;
    do {
      skip_space();
      size_t pos = pos_;
      if (accept_keyword("none")) {
        inputs.push_back(nullptr);
      } else if (peek("%")) {
        inputs.push_back(lookup(value_name(), pos));
      } else {
        error("an input (%name or none)");
      }
    } while (accept(","));
    expect(")");
    return inputs;
  }

  // ---- attributes: {axis = -1, perm = [1, 0], mode = "constant"}
  AttributeMap attributes() {
    AttributeMap attrs;
    expect("{");
    do {
      skip_space();
      size_t pos = pos_;
      std::string key = name("an attribute name");
      expect("=");
      if (!attrs.emplace(key, attribute()).second) error_at(pos, fmt::format("attribute '{}' is given twice", key));
    } while (accept(","));
    expect("}");
    return attrs;
  }
  Attribute attribute() {
    skip_space();
    if (peek("\"")) return quoted();
    if (peek("[")) return list(std::nullopt);
    char c = pos_ < text_.size() ? text_[pos_] : '\0';
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.') return number();
    size_t start = pos_;
    std::string w = word();
    if (w == "inf" || w == "nan") {
      pos_ = start;
      return number();
    }
    if (w == "graph") {
      pos_ = start;
      return subgraph();
    }
    if (w == "ints") return list(AttrKind::Ints);
    if (w == "floats") return list(AttrKind::Floats);
    if (w == "strings") return list(AttrKind::Strings);
    if (parse_dtype(w)) {
      pos_ = start;
      auto [dtype, shape] = type();
      return dense(dtype, shape, start);
    }
    pos_ = start;
    error("an attribute value (number, \"string\", [list], ints[], floats[], strings[], f32[2] dense<...> or graph)");
  }
  // An int unless it shows a '.', an exponent, inf or nan.
  Attribute number() {
    skip_space();
    size_t pos = pos_;
    std::string token = number_token();
    bool is_double = token.find_first_of(".eEn") != std::string::npos;
    if (is_double) {
      double v = 0;
      if (parse_number(token, v)) return v;
    } else {
      int64_t v = 0;
      if (parse_number(token, v)) return v;
    }
    error_at(pos, "expected a number, found '" + token + "'");
  }
  Attribute list(std::optional<AttrKind> kind) {
    skip_space();
    size_t start = pos_;
    expect("[");
    std::vector<Attribute> items;
    if (!accept("]")) {
      do {
        skip_space();
        items.push_back(peek("\"") ? Attribute(quoted()) : number());
      } while (accept(","));
      expect("]");
    }
    return list_of(items, kind, start);
  }
  // Strings stay strings; numbers are floats when any of them is (or when the list says so).
  Attribute list_of(const std::vector<Attribute>& items, std::optional<AttrKind> kind, size_t pos) {
    auto fail = [&](const char* expected) { error_at(pos, std::string("expected ") + expected); };
    auto is = [&](AttrKind k) { return [k](const Attribute& a) { return attr_kind(a) == k; }; };
    if (!kind) {
      if (items.empty()) fail("a typed empty list (ints[], floats[], strings[])");
      kind = std::any_of(items.begin(), items.end(), is(AttrKind::String)) ? AttrKind::Strings
             : std::any_of(items.begin(), items.end(), is(AttrKind::Float)) ? AttrKind::Floats
                                                                              : AttrKind::Ints;
    }
    if (*kind == AttrKind::Strings) {
      if (!std::all_of(items.begin(), items.end(), is(AttrKind::String))) fail("a list of strings only");
      std::vector<std::string> out;
      for (const auto& a : items) out.push_back(std::get<std::string>(a));
      return out;
    }
    if (std::any_of(items.begin(), items.end(), is(AttrKind::String))) fail("a list of numbers only");
    if (*kind == AttrKind::Ints) {
      if (!std::all_of(items.begin(), items.end(), is(AttrKind::Int))) fail("a list of integers only");
      std::vector<int64_t> out;
      for (const auto& a : items) out.push_back(std::get<int64_t>(a));
      return out;
    }
    std::vector<double> out;
    for (const auto& a : items) {
      out.push_back(attr_kind(a) == AttrKind::Int ? static_cast<double>(std::get<int64_t>(a)) : std::get<double>(a));
    }
    return out;
  }

  std::string_view text_;
  const ParseOptions& options_;
  size_t pos_ = 0;
  Graph graph_;
  std::map<std::string, Value*, std::less<>> values_;
};

}  // namespace

Graph parse_graph(std::string_view text, const ParseOptions& options) { return IrParser(text, options).parse(); }

}  // namespace tilefuse
