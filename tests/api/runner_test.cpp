#include "api/runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tilefuse::api {
namespace {

using ::testing::HasSubstr;

TEST(Runner, ParsesEveryModeName) {
  for (Mode mode : kAllModes) EXPECT_EQ(parse_mode(mode_name(mode)), mode);
  EXPECT_THROW(parse_mode("turbo"), UserError);
}

TEST(Runner, FusedAndUnfusedAreNotImplementedYet) {
  Graph g;
  g.add_input("x", DType::f32, {2});
  g.set_outputs({g.inputs()[0]});
  for (Mode mode : {Mode::fused, Mode::unfused}) {
    try {
      run_model(g, bind_inputs(g, {{"x", Tensor(DType::f32, {2})}}), mode);
      ADD_FAILURE() << "expected a UserError";
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr(fmt::format("mode '{}' is not implemented yet", mode_name(mode))));
    }
  }
}

TEST(Runner, ReferenceModeRunsTheGraph) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {SymExpr::symbol("N")});
  Node* neg = g.add_node("Neg", "neg", {x}, {"y"});
  neg->outputs[0]->shape = {SymExpr::symbol("N")};
  g.set_outputs({neg->outputs[0]});
  Tensor input = Tensor::from_vector(DType::f32, {3}, std::vector<double>{1, -2, 3});
  RunResult result = run_model(g, bind_inputs(g, {{"x", input}}), Mode::reference);
  ASSERT_EQ(result.outputs.size(), 1u);
  EXPECT_EQ(result.outputs[0].name, "y");
  EXPECT_EQ(result.outputs[0].tensor.get_f64(1), 2.0);
  EXPECT_TRUE(result.counters.empty());
}

}  // namespace
}  // namespace tilefuse::api
