// f32 ArgMax and ArgMin against the reference kernels: every axis (the innermost, an outer one
// with a column tile and its tail), keepdims both ways, ties with and without
// select_last_index, NaN (the first wins), infinities, on 1 and 2 workers; and the error for an
// empty axis.
#include "runtime/arg_extremum_call.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "ir/error.h"
#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

// Few distinct values (so ties are common), with a NaN and infinities sprinkled in.
Tensor sample(const Ints& shape) {
  Tensor t(DType::f32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = static_cast<double>((i * 7) % 5) - 2;
    if (i % 97 == 13) v = std::numeric_limits<double>::quiet_NaN();
    if (i % 89 == 5) v = i % 2 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
    t.set_f64(i, v);
  }
  return t;
}

struct ArgCase {
  std::string name;
  Ints x;
  int64_t axis;
  int64_t keepdims = 1;
  int64_t last = 0;
};

class ArgExtremumCall : public ::testing::TestWithParam<ArgCase> {};

TEST_P(ArgExtremumCall, MatchesReference) {
  const ArgCase& c = GetParam();
  for (const char* op : {"ArgMax", "ArgMin"}) {
    Graph g;
    Value* x = g.add_input("x", DType::f32, shape_of(c.x));
    Node* node = g.add_node(op, op, {x}, {"y"},
                            {{"axis", c.axis}, {"keepdims", c.keepdims}, {"select_last_index", c.last}});
    g.infer_shapes();
    ASSERT_TRUE(arg_extremum_call_supports(*node));
    const std::vector<Tensor> ins = {sample(c.x)};
    const Tensor expected = reference::evaluate_node(*node, ins)[0];
    std::unique_ptr<LibraryCall> call = prepare_arg_extremum_call(*node);
    for (int workers : {1, 2}) {
      ThreadTeam team(workers);
      std::vector<Tensor> outs = {Tensor(DType::i64, expected.shape())};
      call->run(team, ins, outs);
      EXPECT_TRUE(outs[0].same_bytes(expected)) << c.name << " " << op << " on " << workers << " workers";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Axes, ArgExtremumCall,
    ::testing::Values(ArgCase{"LastAxis", {6, 50}, -1}, ArgCase{"LastAxisNoKeepdims", {3, 4, 33}, 2, 0},
                      ArgCase{"LastAxisTiesLast", {5, 40}, 1, 1, 1}, ArgCase{"FirstAxisWideColumns", {30, 300}, 0},
                      ArgCase{"MiddleAxisTiesLast", {3, 17, 9}, 1, 0, 1}, ArgCase{"OneElementAxis", {4, 1, 3}, 1},
                      ArgCase{"Vector", {200}, 0, 0}),
    [](const auto& info) { return info.param.name; });

TEST(ArgExtremumCallErrors, EmptyAxis) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(3), Dim::symbol("N")});
  Node* node = g.add_node("ArgMax", "pick", {x}, {"y"}, {{"axis", int64_t{1}}});
  g.infer_shapes();
  std::unique_ptr<LibraryCall> call = prepare_arg_extremum_call(*node);
  ThreadTeam team(1);
  std::vector<Tensor> outs = {Tensor(DType::i64, {3, 1})};
  try {
    call->run(team, {Tensor(DType::f32, {3, 0})}, outs);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("axis 1 is empty"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tilefuse::runtime
