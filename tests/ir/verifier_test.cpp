#include "ir/verifier.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/parser.h"

namespace tilefuse {
namespace {

OpDef op(const char* name, int min_inputs, int max_inputs, int max_outputs) {
  OpDef def;
  def.name = name;
  def.min_inputs = min_inputs;
  def.max_inputs = max_inputs;
  def.max_outputs = max_outputs;
  return def;
}

// A private registry, so these tests depend on no built-in op.
const OpRegistry& test_ops() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    r.add(op("Unary", 1, 1, 1));
    r.add(op("Binary", 2, 2, 1));
    OpDef halves = op("Halves", 1, 1, 2);
    halves.attrs = {{"axis", AttrKind::Int, true}};
    r.add(halves);
    OpDef clamp = op("Clamp", 1, 3, 1);  // Clip-like: inputs 2 and 3 are optional
    clamp.input_dtypes = {DType::f32};
    r.add(clamp);
    return r;
  }();
  return registry;
}

// x -> Unary -> a; (a, c) -> Binary -> b; b -> Halves -> (lo, hi); outputs b, lo.
struct TestGraph {
  Graph g;
  Value* x;
  Value* c;
  Node* unary;
  Node* binary;
  Node* halves;

  TestGraph() {
    g.name = "t";
    x = g.add_input("x", DType::f32, {Dim::symbol("N"), 4});
    c = g.add_constant("c", Tensor(DType::f32, {4}));
    unary = g.add_node("Unary", "u", {x}, {"a"});
    binary = g.add_node("Binary", "bin", {unary->outputs[0], c}, {"b"});
    halves = g.add_node("Halves", "h", {binary->outputs[0]}, {"lo", "hi"}, {{"axis", int64_t{0}}});
    g.set_outputs({binary->outputs[0], halves->outputs[0]});
  }
};

std::string verify_error_with(const Graph& g, const OpRegistry& registry) {
  try {
    verify_graph(g, registry);
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "verified without error";
  return "";
}

std::string verify_error(const Graph& g) { return verify_error_with(g, test_ops()); }

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(VerifierTest, AcceptsAValidGraph) {
  TestGraph t;
  EXPECT_NO_THROW(verify_graph(t.g, test_ops()));
  t.g.add_node("Clamp", "clamp", {t.x, nullptr, t.c}, {"clamped"});  // omitted optional input
  EXPECT_NO_THROW(verify_graph(t.g, test_ops()));
}

TEST(VerifierTest, DuplicateNames) {
  TestGraph t;
  t.halves->outputs[1]->name = "a";
  std::string msg = verify_error(t.g);
  EXPECT_HAS(msg, "graph 't'");
  EXPECT_HAS(msg, "two values are named %a");

  TestGraph u;
  u.binary->name = "u";
  EXPECT_HAS(verify_error(u.g), "two nodes are named 'u'");
}

TEST(VerifierTest, UnregisteredOpAndArityAndAttributes) {
  TestGraph t;
  t.unary->op = "Mystery";
  std::string msg = verify_error(t.g);
  EXPECT_HAS(msg, "node 'u' (Mystery)");
  EXPECT_HAS(msg, "not supported");

  TestGraph arity;
  arity.binary->inputs.pop_back();
  arity.c->users.clear();
  EXPECT_HAS(verify_error(arity.g), "node 'bin' (Binary): takes 2 to 2 inputs, got 1");

  TestGraph missing;
  missing.halves->attrs.clear();
  EXPECT_HAS(verify_error(missing.g), "node 'h' (Halves): required attribute 'axis' is missing");

  TestGraph kind;
  kind.halves->attrs["axis"] = 1.5;
  EXPECT_HAS(verify_error(kind.g), "attribute 'axis' must be of kind int, got float");

  TestGraph dtype;
  dtype.x->dtype = DType::i64;
  dtype.g.add_node("Clamp", "clamp", {dtype.x}, {"y"});
  EXPECT_HAS(verify_error(dtype.g), "node 'clamp' (Clamp): input 'x' has element type i64");
}

TEST(VerifierTest, InputsMustBeDefinedEarlier) {
  TestGraph t;
  Value* placeholder = t.g.add_constant("p", Tensor(DType::f32, {4}));
  Node* early = t.g.add_node("Unary", "early", {placeholder}, {"e"});
  Node* late = t.g.add_node("Unary", "late", {t.x}, {"l"});
  t.g.replace_all_uses(placeholder, late->outputs[0]);
  std::string msg = verify_error(t.g);
  EXPECT_HAS(msg, "node 'early' (Unary): input %l is produced by node 'late' (Unary), which comes later");
  t.g.topo_sort();
  EXPECT_NO_THROW(verify_graph(t.g, test_ops()));
  (void)early;
}

TEST(VerifierTest, UndefinedValues) {
  TestGraph t;
  t.c->constant = std::nullopt;  // now neither an input, a constant nor a node output
  EXPECT_HAS(verify_error(t.g), "node 'bin' (Binary): input %c is not a graph input, a constant or a node output");

  TestGraph out;
  Value* dangling = out.g.add_constant("dangling", Tensor(DType::f32, {}));
  dangling->constant = std::nullopt;
  out.g.add_output(dangling);
  EXPECT_HAS(verify_error(out.g), "graph output %dangling is not a graph input");

  TestGraph foreign;
  Graph other;
  Value* stranger = other.add_input("s", DType::f32, {4});
  foreign.binary->inputs[1] = stranger;
  stranger->users.push_back(foreign.binary);
  foreign.c->users.clear();
  EXPECT_HAS(verify_error(foreign.g), "node 'bin' (Binary): an input is not a value of this graph");
}

TEST(VerifierTest, Cycles) {
  TestGraph t;
  Value* placeholder = t.g.add_constant("p", Tensor(DType::f32, {4}));
  Node* first = t.g.add_node("Binary", "first", {t.x, placeholder}, {"f"});
  Node* second = t.g.add_node("Unary", "second", {first->outputs[0]}, {"s"});
  t.g.replace_all_uses(placeholder, second->outputs[0]);
  std::string msg = verify_error(t.g);
  EXPECT_HAS(msg, "nodes form a cycle");
  EXPECT_HAS(msg, "'first' -> 'second' -> 'first'");
}

TEST(VerifierTest, UsersMustMatchInputs) {
  TestGraph missing;
  missing.x->users.clear();
  EXPECT_HAS(verify_error(missing.g), "value %x: node 'u' (Unary) uses it 1 times but its users list it 0 times");

  TestGraph extra;
  extra.x->users.push_back(extra.binary);
  EXPECT_HAS(verify_error(extra.g), "value %x: users list node 'bin' (Binary), which does not use it");

  TestGraph twice;
  twice.binary->inputs[1] = twice.unary->outputs[0];
  twice.c->users.clear();
  EXPECT_HAS(verify_error(twice.g), "value %a: node 'bin' (Binary) uses it 2 times but its users list it 1 times");
}

TEST(VerifierTest, ProducerLinks) {
  TestGraph t;
  t.halves->outputs[1]->producer = t.unary;
  EXPECT_HAS(verify_error(t.g), "value %hi: its producer node 'u' (Unary) does not list it as an output");

  TestGraph input;
  input.x->producer = input.unary;
  input.unary->outputs.push_back(input.x);
  std::string msg = verify_error(input.g);
  EXPECT_HAS(msg, "%x");
}

TEST(VerifierTest, ConstantsMatchTheirData) {
  TestGraph t;
  t.c->dtype = DType::f16;
  EXPECT_HAS(verify_error(t.g), "constant %c: the value is f16[4] but its data is f32[4]");

  TestGraph shape;
  shape.c->shape = {Dim::symbol("N")};
  EXPECT_HAS(verify_error(shape.g), "constant %c: the value is f32[N] but its data is f32[4]");
}

TEST(VerifierTest, ShapesAndSymValues) {
  TestGraph t;
  t.x->shape = {-1, 4};
  EXPECT_HAS(verify_error(t.g), "value %x: f32[-1, 4] has a negative dimension");

  TestGraph sym;
  Value* s = sym.g.add_input("s", DType::i64, {2});
  s->sym_value = std::vector<Dim>{Dim::symbol("N")};
  EXPECT_HAS(verify_error(sym.g), "value %s: i64[2] holds 2 elements but sym_value lists 1");

  TestGraph f;
  Value* fs = f.g.add_input("fs", DType::f32, {1});
  fs->sym_value = std::vector<Dim>{Dim::symbol("N")};
  EXPECT_HAS(verify_error(f.g), "need a 0-D or 1-D integer tensor, not f32[1]");
}

TEST(VerifierTest, EmptyNames) {
  TestGraph t;
  t.unary->name = "";
  EXPECT_HAS(verify_error(t.g), "a Unary node has an empty name");
}

TEST(VerifierTest, ParsedGraphOfBuiltinOpsVerifies) {
  Graph g = parse_graph(
      "graph g(%x: f32[N, 4], %b: f32[4]) -> (%y) {\n"
      "  %s = Add(%x, %b) @add\n"
      "  %y = Neg(%s) @neg\n"
      "}\n");
  EXPECT_NO_THROW(verify_graph(g));
  g.find_node("neg")->attrs["bogus_kind"] = int64_t{1};  // unknown attributes are not checked
  EXPECT_NO_THROW(verify_graph(g));
  g.find_node("add")->inputs.push_back(g.find_value("x"));
  g.find_value("x")->users.push_back(g.find_node("add"));
  EXPECT_HAS(verify_error_with(g, OpRegistry::global()), "node 'add' (Add): takes 2 to 2 inputs, got 3");
}

}  // namespace
}  // namespace tilefuse
