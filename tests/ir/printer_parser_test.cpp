#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <type_traits>
#include <variant>

#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace tilefuse {
namespace {

const Dim N = Dim::symbol("N");

// print(parse(text)) == text, for text that print_graph wrote.
void expect_round_trip(const std::string& text) {
  Graph parsed = parse_graph(text);
  EXPECT_EQ(print_graph(parsed), text);
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

std::string parse_error(std::string_view text) {
  try {
    parse_graph(text);
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "parsed without error:\n" << text;
  return "";
}

TEST(PrinterTest, PrintsTheDocumentedFormat) {
  Graph g;
  g.name = "mlp";
  Value* x = g.add_input("x", DType::f32, {N, 2});
  Value* w = g.add_constant("w", Tensor::from_vector(DType::f32, {2, 2}, std::vector<float>{1, 0.5f, -2, 3}));
  Node* mm = g.add_node("MatMul", "mm0", {x, w}, {"h"});
  mm->outputs[0]->shape = {N, 2};
  Node* split = g.add_node("Split", "split0", {mm->outputs[0], nullptr}, {"lo", "hi"}, {{"axis", int64_t{1}}});
  for (Value* v : split->outputs) v->shape = {N, 1};
  Node* add = g.add_node("Add", "add0", {split->outputs[0], split->outputs[1]}, {"out"});
  add->outputs[0]->shape = {N, 1};
  g.add_output(add->outputs[0]);
  EXPECT_EQ(print_graph(g),
            "graph mlp(%x: f32[N, 2]) -> (%out) {\n"
            "  %w: f32[2, 2] = const dense<1, 0.5, -2, 3>\n"
            "  %h: f32[N, 2] = MatMul(%x, %w) @mm0\n"
            "  %lo: f32[N, 1], %hi: f32[N, 1] = Split(%h, none) {axis = 1} @split0\n"
            "  %out: f32[N, 1] = Add(%lo, %hi) @add0\n"
            "}\n");
}

TEST(PrinterTest, QuotesNamesThatAreNotPlainWords) {
  Graph g;
  g.name = "my graph";
  Value* x = g.add_input("onnx::Add_3", DType::f32, {});
  Node* n = g.add_node("const", "/ln/Add_1", {x}, {"a\"b"});
  g.add_output(n->outputs[0]);
  EXPECT_EQ(print_graph(g),
            "graph \"my graph\"(%\"onnx::Add_3\": f32[]) -> (%\"a\\\"b\") {\n"
            "  %\"a\\\"b\": f32[] = \"const\"(%\"onnx::Add_3\") @/ln/Add_1\n"
            "}\n");
  expect_round_trip(print_graph(g));
}

TEST(PrinterTest, AttributesOfEveryKind) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {2});
  AttributeMap attrs = {
      {"i", int64_t{-7}},
      {"f", 2.0},
      {"tiny", 5e-324},
      {"big", 1e300},
      {"third", 1.0 / 3},
      {"neg_inf", -std::numeric_limits<double>::infinity()},
      {"s", std::string("a \"q\" \\ \n\t\x01 \xc3\xa9")},
      {"ints", std::vector<int64_t>{1, -2, 3}},
      {"floats", std::vector<double>{0.1, -1.0}},
      {"strings", std::vector<std::string>{"x", ""}},
      {"no_ints", std::vector<int64_t>{}},
      {"no_floats", std::vector<double>{}},
      {"no_strings", std::vector<std::string>{}},
      {"t", Tensor::from_vector(DType::i64, {2}, std::vector<int64_t>{4, 5})},
  };
  Node* n = g.add_node("Custom", "c", {x}, {"y"}, attrs);
  g.add_output(n->outputs[0]);
  std::string text = print_graph(g);
  EXPECT_NE(text.find("f = 2.0"), std::string::npos) << text;  // a float never looks like an int
  EXPECT_NE(text.find("i = -7"), std::string::npos) << text;
  EXPECT_NE(text.find("no_ints = ints[]"), std::string::npos) << text;
  EXPECT_NE(text.find("t = i64[2] dense<4, 5>"), std::string::npos) << text;
  EXPECT_NE(text.find("s = \"a \\\"q\\\" \\\\ \\n\\t\\x01 \xc3\xa9\""), std::string::npos) << text;

  Graph parsed = parse_graph(text);
  const Node* back = parsed.find_node("c");
  ASSERT_NE(back, nullptr);
  ASSERT_EQ(back->attrs.size(), attrs.size());
  for (const auto& [key, attr] : attrs) {
    const Attribute& got = back->attrs.at(key);
    ASSERT_EQ(attr_kind(got), attr_kind(attr)) << key;
    std::visit(
        [&](const auto& expected) {
          using T = std::decay_t<decltype(expected)>;
          const T& actual = std::get<T>(got);
          if constexpr (std::is_same_v<T, Tensor>) {
            EXPECT_TRUE(actual.same_bytes(expected)) << key;
          } else if constexpr (std::is_same_v<T, double>) {
            EXPECT_EQ(std::bit_cast<uint64_t>(actual), std::bit_cast<uint64_t>(expected)) << key;
          } else {
            EXPECT_EQ(actual, expected) << key;  // exact, also for the doubles in a list
          }
        },
        attr);
  }
  EXPECT_EQ(print_graph(parsed), text);
}

TEST(PrinterTest, NanAttribute) {
  Graph g = parse_graph("graph g() -> () {\n  Op() {v = nan, w = [inf, -inf, 1]} @n\n}\n");
  const Node* n = g.find_node("n");
  EXPECT_TRUE(std::isnan(std::get<double>(n->attrs.at("v"))));
  EXPECT_EQ(std::get<std::vector<double>>(n->attrs.at("w")),
            (std::vector<double>{INFINITY, -INFINITY, 1.0}));
}

// One constant of each dtype holding its edge values; the bytes must survive print -> parse.
TEST(PrinterTest, ConstantDataRoundTripsExactlyForEveryDtype) {
  Graph g;
  auto add = [&](const char* name, Tensor t) { g.add_output(g.add_constant(name, std::move(t))); };
  Tensor f32 = Tensor::from_vector(DType::f32, {8}, std::vector<float>{0.1f, -0.0f, 1e-45f, 3.4028235e38f, INFINITY,
                                                                        -INFINITY, NAN, 0});
  f32.data<uint32_t>()[7] = 0xffc00123u;  // a negative NaN with a payload
  add("f32", f32);
  Tensor f64 = Tensor::from_vector(DType::f64, {6}, std::vector<double>{0.1, 1.0 / 3, 5e-324, -1.7976931348623157e308,
                                                                        NAN, 0});
  f64.data<uint64_t>()[5] = 0x7ff0000000000001ull;  // a signalling NaN
  add("f64", f64);
  add("i8", Tensor::from_vector(DType::i8, {2}, std::vector<int>{-128, 127}));
  add("u8", Tensor::from_vector(DType::u8, {2}, std::vector<int>{0, 255}));
  add("i32", Tensor::from_vector(DType::i32, {2}, std::vector<int64_t>{INT32_MIN, INT32_MAX}));
  add("i64", Tensor::from_vector(DType::i64, {2}, std::vector<int64_t>{INT64_MIN, INT64_MAX}));
  add("b", Tensor::from_vector(DType::boolean, {3}, std::vector<int>{1, 0, 1}));
  add("scalar", Tensor::scalar_i64(-3));
  add("empty", Tensor(DType::f32, {0, 3}));
  // Every 16-bit pattern, NaNs with payloads included.
  Tensor f16(DType::f16, {65536});
  Tensor bf16(DType::bf16, {65536});
  for (uint32_t i = 0; i < 65536; ++i) f16.data<uint16_t>()[i] = bf16.data<uint16_t>()[i] = static_cast<uint16_t>(i);
  add("f16", f16);
  add("f16_short", Tensor::from_vector(DType::f16, {4}, std::vector<double>{0.1, 65504, 1.0 / 3, -5.960464477539063e-08}));
  add("bf16_short", Tensor::from_vector(DType::bf16, {2}, std::vector<double>{0.1, 3.140625}));
  add("bf16", bf16);

  std::string text = print_graph(g);
  EXPECT_NE(text.find("%b: bool[3] = const dense<true, false, true>"), std::string::npos);
  EXPECT_NE(text.find("%scalar: i64[] = const dense<-3>"), std::string::npos);
  EXPECT_NE(text.find("%empty: f32[0, 3] = const dense<>"), std::string::npos);
  // f16/bf16 print the shortest decimal that maps back to their bits.
  EXPECT_NE(text.find("%f16_short: f16[4] = const dense<0.1, 65504, 0.3333, -6e-08>"), std::string::npos) << text.substr(text.find("%f16_short: "), 80);
  EXPECT_NE(text.find("%bf16_short: bf16[2] = const dense<0.1, 3.14>"), std::string::npos);
  EXPECT_NE(text.find("dense<0.1, -0, 1e-45, 3.4028235e+38, inf, -inf, nan, 0xffc00123>"), std::string::npos) << text.substr(0, 400);
  Graph parsed = parse_graph(text);
  for (const Value* v : g.outputs()) {
    const Value* back = parsed.find_value(v->name);
    ASSERT_NE(back, nullptr) << v->name;
    ASSERT_TRUE(back->is_constant());
    EXPECT_TRUE(back->constant->same_bytes(*v->constant)) << v->name;
  }
  EXPECT_EQ(print_graph(parsed), text);
}

TEST(PrinterTest, ElidesLargeConstantsOnlyWhenAsked) {
  Graph g;
  g.add_output(g.add_constant("small", Tensor(DType::f32, {16})));
  g.add_output(g.add_constant("large", Tensor(DType::f32, {17})));
  Node* n = g.add_node("Op", "n", {}, {"y"}, {{"t", Tensor(DType::i32, {4, 5})}});
  g.add_output(n->outputs[0]);
  PrintOptions golden;
  golden.elide_large_constants = true;
  std::string elided = print_graph(g, golden);
  EXPECT_NE(elided.find("%small: f32[16] = const dense<0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>"),
            std::string::npos) << elided;
  EXPECT_NE(elided.find("%large: f32[17] = const dense<...>"), std::string::npos) << elided;
  EXPECT_NE(elided.find("{t = i32[4, 5] dense<...>}"), std::string::npos) << elided;
  EXPECT_EQ(print_graph(g).find("..."), std::string::npos);
  // Elided data cannot come back: parsing it must fail rather than invent values.
  EXPECT_NE(parse_error(elided).find("elided"), std::string::npos);
}

TEST(PrinterTest, SymbolicShapesSymValuesAndDataOnAnyValue) {
  Graph g;
  Dim M = Dim::symbol("M");
  Value* x = g.add_input("x", DType::f32, {N, 2 * N + 1, max(N, M), floordiv(N, 2), mod(N + 1, 3), 1 - M});
  Value* s = g.add_input("s", DType::i64, {3});
  s->sym_value = std::vector<Dim>{N, 4, floordiv(M, 2)};
  Value* with_default = g.add_input("d", DType::f32, {2});
  with_default->constant = Tensor::from_vector(DType::f32, {2}, std::vector<float>{1.5f, 2});
  Node* n = g.add_node("Shape", "shape", {x}, {"shp"});
  Value* shp = n->outputs[0];
  shp->dtype = DType::i64;
  shp->shape = {6};
  shp->sym_value = std::vector<Dim>{N, 2 * N + 1, max(N, M), floordiv(N, 2), mod(N + 1, 3), 1 - M};
  shp->constant = std::nullopt;
  Node* folded = g.add_node("Neg", "neg", {with_default}, {"folded"});
  folded->outputs[0]->shape = {2};
  folded->outputs[0]->constant = Tensor::from_vector(DType::f32, {2}, std::vector<float>{-1.5f, -2});
  g.set_outputs({shp, s, folded->outputs[0], x});
  std::string text = print_graph(g);
  EXPECT_NE(text.find("%x: f32[N, 2*N + 1, max(M, N), N//2, (N + 1)%3, -M + 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("%s: i64[3] sym<N, 4, M//2>"), std::string::npos) << text;
  EXPECT_NE(text.find("%d: f32[2] dense<1.5, 2>"), std::string::npos) << text;
  EXPECT_NE(text.find("%folded: f32[2] dense<-1.5, -2> = Neg(%d) @neg"), std::string::npos) << text;
  Graph parsed = parse_graph(text);
  EXPECT_EQ(parsed.find_value("x")->shape, x->shape);
  EXPECT_EQ(*parsed.find_value("shp")->sym_value, *shp->sym_value);
  EXPECT_TRUE(parsed.find_value("d")->constant->same_bytes(*with_default->constant));
  EXPECT_EQ(parsed.inputs().size(), 3u);
  EXPECT_EQ(print_graph(parsed), text);
}

TEST(PrinterTest, OmittedInputsMultipleAndZeroOutputsAndOutputOrder) {
  std::string text =
      "graph g(%x: f32[4], %lo: f32[2]) -> (%b, %x, %c, %b) {\n"
      "  %c: i64[] = const dense<7>\n"
      "  %a: f32[4] = Clip(%x, none, %c) @clip\n"
      "  %b: f32[2], %e: f32[2] = Split(%a) @split\n"
      "  Print(%b, none, none) {tag = \"t\"} @print\n"
      "  %z: f32[] = Zero() @zero\n"
      "}\n";
  Graph g = parse_graph(text);
  EXPECT_EQ(print_graph(g), text);
  const Node* clip = g.find_node("clip");
  ASSERT_EQ(clip->inputs.size(), 3u);
  EXPECT_EQ(clip->inputs[1], nullptr);
  EXPECT_EQ(clip->inputs[2], g.find_value("c"));
  EXPECT_EQ(g.find_node("print")->inputs.size(), 3u);
  EXPECT_TRUE(g.find_node("print")->outputs.empty());
  EXPECT_EQ(g.find_node("split")->outputs.size(), 2u);
  EXPECT_EQ(g.find_value("e")->producer, g.find_node("split"));
  EXPECT_EQ(g.outputs().size(), 4u);
  EXPECT_EQ(g.outputs()[0], g.outputs()[3]);
  EXPECT_EQ(g.find_value("x")->users.size(), 1u);
  EXPECT_EQ(g.find_value("b")->users, (std::vector<Node*>{g.find_node("print")}));
}

// Random graphs with every feature of the format: names that need quoting, symbolic dims,
// sym_values, data of every dtype from random bytes (NaN payloads, subnormals, -0), every
// attribute kind, omitted inputs, multi- and zero-output nodes.
class RandomGraph {
 public:
  explicit RandomGraph(uint64_t seed) : rng_(seed) {}

  Graph make() {
    Graph g;
    g.name = name();
    std::vector<Value*> available;
    for (int i = below(4); i > 0; --i) available.push_back(random_input(g));
    for (int i = below(4); i > 0; --i) available.push_back(g.add_constant(unique_name(g), tensor()));
    for (int i = below(7); i > 0; --i) {
      std::vector<Value*> inputs;
      for (int j = below(4); j > 0; --j) inputs.push_back(available.empty() || below(4) == 0 ? nullptr : pick(available));
      std::vector<std::string> outputs;
      for (int j = below(3); j > 0; --j) outputs.push_back(unique_name(g, outputs));
      AttributeMap attrs;
      for (int j = below(4); j > 0; --j) attrs[name()] = attribute();
      Node* n = g.add_node(pick(kOps), name(), inputs, outputs, attrs);
      for (Value* out : n->outputs) {
        describe(*out);
        available.push_back(out);
      }
    }
    for (int i = below(4); i > 0 && !available.empty(); --i) g.add_output(pick(available));
    return g;
  }

 private:
  static constexpr const char* kOps[] = {"Add", "MatMul", "const", "none", "com.microsoft.Gelu", "a b"};

  int below(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  template <typename C>
  std::decay_t<decltype(std::declval<const C&>()[0])> pick(const C& items) {
    return items[below(static_cast<int>(std::size(items)))];
  }
  std::string name() {
    static const std::string pool = "aZ_9./-:%@#\"\\\n\t\x01 ";
    std::string out;
    for (int i = below(5); i >= 0; --i) out += pool[below(static_cast<int>(pool.size()))];
    return out;
  }
  std::string unique_name(const Graph& g, const std::vector<std::string>& taken = {}) {
    while (true) {
      std::string n = name();
      if (g.find_value(n) == nullptr && std::find(taken.begin(), taken.end(), n) == taken.end()) return n;
    }
  }
  Dim dim() {
    Dim n = Dim::symbol("N"), m = Dim::symbol("M");
    switch (below(6)) {
      case 0: return 2 * n + 1;
      case 1: return floordiv(n, 2) * m;
      case 2: return max(n, m);
      case 3: return n;
      default: return below(5);
    }
  }
  Tensor tensor() {
    std::vector<int64_t> dims;
    for (int i = below(3); i > 0; --i) dims.push_back(below(4));
    Tensor t(pick(kAllDTypes), dims);
    auto* bytes = static_cast<uint8_t*>(t.raw());
    for (size_t i = 0; i < t.nbytes(); ++i) bytes[i] = static_cast<uint8_t>(rng_());
    if (t.dtype() == DType::boolean) {
      for (int64_t i = 0; i < t.numel(); ++i) bytes[i] &= 1;
    }
    return t;
  }
  void describe(Value& v) {
    v.dtype = pick(kAllDTypes);
    v.shape.clear();
    for (int i = below(4); i > 0; --i) v.shape.push_back(dim());
    if (below(4) == 0) {
      v.dtype = DType::i64;
      v.shape = {2};
      v.sym_value = std::vector<Dim>{dim(), dim()};
    } else if (below(5) == 0) {
      v.constant = tensor();
      v.dtype = v.constant->dtype();
      v.shape = shape_of(v.constant->shape());
    }
  }
  Value* random_input(Graph& g) {
    Value* v = g.add_input(unique_name(g), DType::f32, {});
    describe(*v);
    return v;
  }
  Attribute attribute() {
    auto number = [&] { return std::bit_cast<double>(rng_()); };
    switch (below(7)) {
      case 0: return static_cast<int64_t>(rng_());
      case 1: return number();
      case 2: return name();
      case 3: return std::vector<int64_t>(below(3), static_cast<int64_t>(rng_()));
      case 4: return std::vector<double>(below(3), number());
      case 5: return std::vector<std::string>(below(3), name());
      default: return tensor();
    }
  }

  std::mt19937_64 rng_;
};

TEST(PrinterTest, RandomGraphsRoundTrip) {
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Graph g = RandomGraph(seed).make();
    std::string text = print_graph(g);
    Graph parsed;
    try {
      parsed = parse_graph(text);
    } catch (const UserError& e) {
      FAIL() << "seed " << seed << ": " << e.what() << "\n" << text;
    }
    ASSERT_EQ(print_graph(parsed), text) << "seed " << seed;
    ASSERT_EQ(parsed.num_nodes(), g.num_nodes());
  }
}

TEST(ParserTest, InfersTheTypesLeftOut) {
  Graph g = parse_graph(
      "graph g(%x: f32[N, 4], %b: f32[4]) -> (%y) {\n"
      "  %s = Add(%x, %b) @add\n"
      "  %y = Neg(%s) @neg\n"
      "}\n");
  EXPECT_EQ(g.find_value("s")->type_string(), "f32[N, 4]");
  EXPECT_EQ(g.find_value("y")->type_string(), "f32[N, 4]");
  std::string msg = parse_error(
      "graph g(%x: f32[N, 4], %b: f32[3]) -> () {\n"
      "  %s = Add(%x, %b) @add\n"
      "}\n");
  EXPECT_HAS(msg, "IR text 2:8:");
  EXPECT_HAS(msg, "node 'add' (Add)");
}

TEST(ParserTest, AcceptsCommentsWhitespaceAndMissingNodeNames) {
  Graph g = parse_graph(
      "# a golden input\n"
      "graph   g ( %x : f32 [ N ] )->(%y){   # header\n"
      "  %y: f32[N] = Relu(%x)   # no @name\n"
      "}  \n");
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_FALSE(g.nodes()[0]->name.empty());
  EXPECT_EQ(g.find_value("x")->shape, (Shape{N}));
  EXPECT_EQ(g.outputs()[0], g.find_value("y"));
}

TEST(ParserTest, ErrorsNameLineColumnAndExpectation) {
  struct Case {
    const char* text;
    const char* where;
    const char* what;
  };
  const Case cases[] = {
      {"graph g(%x: f32[2]) -> (%y) {\n  %y: f32[2] = Relu(%z) @r\n}\n", "2:21", "%z is not defined"},
      {"graph g(%x: f32[2]) -> (%x) {\n  %x: f32[2] = Relu(%x) @r\n}\n", "2:3", "defined twice"},
      {"graph g(%x: f33[2]) -> () {\n}\n", "1:13", "element type"},
      {"graph g(%x: f32[2) -> () {\n}\n", "1:18", "',' or ']'"},
      {"graph g(%x: f32[N +]) -> () {\n}\n", "1:17", "cannot parse dimension"},
      {"graph g(%x: f32[-2]) -> () {\n}\n", "1:17", "negative"},
      {"graph g() -> (%c) {\n  %c: i8[2] = const dense<1, 200>\n}\n", "2:30", "does not fit in i8"},
      {"graph g() -> (%c) {\n  %c: f32[2] = const dense<1, 2, 3>\n}\n", "2:34", "more than the 2 elements"},
      {"graph g() -> (%c) {\n  %c: f32[3] = const dense<1, 2>\n}\n", "2:22", "needs 3 elements, got 2"},
      {"graph g() -> (%c) {\n  %c: f32[N] = const dense<1>\n}\n", "2:22", "static shape"},
      {"graph g() -> (%c) {\n  %c: bool[1] = const dense<2>\n}\n", "2:29", "true or false"},
      {"graph g(%x: f32[]) -> () {\n  Op(%x) {s = \"abc}\n}\n", "2:15", "no closing '\"'"},
      {"graph g(%x: f32[]) -> () {\n  Op(%x) {a = 1, a = 2}\n}\n", "2:18", "given twice"},
      {"graph g(%x: f32[]) -> () {\n  Op(%x) {a = []}\n}\n", "2:15", "typed empty list"},
      {"graph g(%x: f32[]) -> () {\n  Op(%x) {a = [1, \"s\"]}\n}\n", "2:15", "strings only"},
      {"graph g(%x: f32[]) -> () {\n  Op(%x) {a = bogus}\n}\n", "2:15", "attribute value"},
      {"graph g(%x: f32[]) -> () {\n  Op(%x x)\n}\n", "2:9", "')'"},
      {"graph g(%x: f32[]) -> () {\n  %a, %b: f32[] = Op(%x)\n}\n", "2:19", "every output"},
      {"graph g(%x) -> () {\n}\n", "1:11", "':' and a type"},
      {"graph g() -> () {\n}\nextra", "3:1", "end of input"},
      {"graph g() -> () {\n", "2:1", "an op name"},
      {"graph g() -> (%nope) {\n}\n", "1:15", "%nope is not defined"},
      {"graf g() -> () {}", "1:1", "'graph'"},
      {"graph g() -> () {\n  assume positive(N) \"r\"\n}\n", "2:10", "nonnegative or broadcast"},
      {"graph g() -> () {\n  assume broadcast(N) \"r\"\n}\n", "2:10", "takes 2 dims, got 1"},
  };
  for (const Case& c : cases) {
    std::string msg = parse_error(c.text);
    EXPECT_NE(msg.find(std::string("IR text ") + c.where + ":"), std::string::npos) << c.text << "\n-> " << msg;
    EXPECT_NE(msg.find(c.what), std::string::npos) << c.text << "\n-> " << msg;
  }
}

// What inference assumed about the symbols is part of the text, so a model package read back
// still refuses the shapes that break it.
TEST(PrinterParser, AssumptionsRoundTrip) {
  const std::string text =
      "graph g(%s: f32[B, 128], %m: f32[B, seq]) -> (%y) {\n"
      "  assume nonnegative(seq - 1) \"a reason\"\n"
      "  assume broadcast(seq, max(128, seq)) \"node 'add' (Add) broadcasts\"\n"
      "  %y: f32[B, max(128, seq)] = Add(%s, %m) @add\n"
      "}\n";
  Graph g = parse_graph(text);
  ASSERT_EQ(g.assumptions().size(), 1u);
  ASSERT_EQ(g.broadcast_assumptions().size(), 1u);
  EXPECT_EQ(g.broadcast_assumptions()[0].result.to_string(), "max(128, seq)");
  EXPECT_THROW(g.check_assumptions({{"B", 1}, {"seq", 64}}), UserError);
  expect_round_trip(text);
}

// A model package keeps large tensors out of the text: the printer hands them to place_data
// and prints external<OFFSET>; the parser asks external_data for them back.
TEST(PrinterParser, LargeTensorsGoToExternalDataAndComeBack) {
  Graph g = parse_graph(
      "graph g(%x: f32[2, 20]) -> (%y) {\n"
      "  %w: f32[20] = const dense<1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20>\n"
      "  %b: f32[2] = const dense<0.5, -1>\n"
      "  %m: f32[2, 20] = Mul(%x, %w) @mul\n"
      "  %y: f32[2, 20] = Add(%m, %m) @add\n"
      "}\n");
  std::vector<Tensor> placed;
  PrintOptions print;
  print.place_data = [&](const Tensor& t) {
    placed.push_back(t);
    return static_cast<int64_t>(placed.size() - 1) * 64;
  };
  const std::string text = print_graph(g, print);
  EXPECT_NE(text.find("%w: f32[20] = const external<0>"), std::string::npos) << text;
  EXPECT_NE(text.find("dense<0.5, -1>"), std::string::npos) << text;  // small: inline
  ASSERT_EQ(placed.size(), 1u);

  ParseOptions parse;
  parse.external_data = [&](DType dtype, const std::vector<int64_t>& dims, int64_t offset) {
    EXPECT_EQ(dtype, DType::f32);
    EXPECT_EQ(dims, std::vector<int64_t>{20});
    return placed.at(static_cast<size_t>(offset / 64));
  };
  EXPECT_EQ(print_graph(parse_graph(text, parse)), print_graph(g));

  const std::string refused = parse_error(text);
  EXPECT_NE(refused.find("external<OFFSET> data outside a model package"), std::string::npos) << refused;
}

// If's branches are graph attributes, printed as graphs one level deeper, and read back.
TEST(PrinterParser, SubgraphAttributesRoundTrip) {
  const std::string text =
      "graph g(%c: bool[], %x: f32[N, 3]) -> (%y) {\n"
      "  %y: f32[N, 3] = If(%c, %x) {else_branch = graph no(%x: f32[N, 3]) -> (%n) {\n"
      "      %n: f32[N, 3] = Neg(%x) @neg\n"
      "    }, then_branch = graph yes(%x: f32[N, 3]) -> (%x) {\n"
      "    }} @branch\n"
      "}\n";
  const Graph g = parse_graph(text);
  EXPECT_EQ(print_graph(g), text);
  const Node& node = *g.nodes().at(0);
  EXPECT_EQ(attr_kind(node.attrs.at("then_branch")), AttrKind::Graph);
  EXPECT_EQ(std::get<GraphRef>(node.attrs.at("else_branch"))->nodes().at(0)->op, "Neg");
  EXPECT_EQ(g.outputs().at(0)->shape, (Shape{Dim::symbol("N"), Dim(3)}));  // If's inference
}

}  // namespace
}  // namespace tilefuse
