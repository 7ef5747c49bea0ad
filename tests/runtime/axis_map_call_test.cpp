// Tile and Pad into the executor's buffers against the reference kernels: repeats on one and on
// every axis (and 0), Pad in every mode with begin and end pads, negative pads that crop, pads on
// chosen axes, a constant input or the attribute's value, several dtypes, on 1 and 2 workers.
#include "runtime/axis_map_call.h"

#include <gtest/gtest.h>

#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

Tensor ints(const Ints& v) {
  return Tensor::from_vector(DType::i64, {static_cast<int64_t>(v.size())}, std::vector<double>(v.begin(), v.end()));
}

Tensor counting(DType dtype, const Ints& shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, static_cast<double>(i % 61) + 1);
  return t;
}

struct MapCase {
  std::string name;
  std::string op;
  Ints x;
  std::vector<Tensor> operands;  // inputs after x; undefined for an omitted optional input
  AttributeMap attrs = {};
  DType dtype = DType::f32;
};

class AxisMapCall : public ::testing::TestWithParam<MapCase> {};

TEST_P(AxisMapCall, MatchesReference) {
  const MapCase& c = GetParam();
  Graph g;
  std::vector<Value*> inputs = {g.add_input("x", c.dtype, shape_of(c.x))};
  for (size_t i = 0; i < c.operands.size(); ++i) {
    inputs.push_back(c.operands[i].defined() ? g.add_constant("k" + std::to_string(i), c.operands[i]) : nullptr);
  }
  Node* node = g.add_node(c.op, c.op, inputs, {"y"}, c.attrs);
  g.infer_shapes();
  ASSERT_TRUE(axis_map_call_supports(*node));
  std::vector<Tensor> ins = {counting(c.dtype, c.x)};
  ins.insert(ins.end(), c.operands.begin(), c.operands.end());
  const std::vector<Tensor> expected = reference::evaluate_node(*node, ins);
  std::unique_ptr<LibraryCall> call = prepare_axis_map_call(*node);
  for (int workers : {1, 2}) {
    ThreadTeam team(workers);
    std::vector<Tensor> outs = {Tensor(c.dtype, expected[0].shape())};
    call->run(team, ins, outs);
    call->run(team, ins, outs);  // a second run reuses the maps
    EXPECT_TRUE(outs[0].same_bytes(expected[0])) << c.name << " on " << workers << " workers";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ops, AxisMapCall,
    ::testing::Values(
        MapCase{"TileInnerAxis", "Tile", {3, 4}, {ints({1, 3})}},
        MapCase{"TileEveryAxisInt64", "Tile", {2, 3, 2}, {ints({2, 2, 3})}, {}, DType::i64},
        MapCase{"TileZero", "Tile", {2, 3}, {ints({0, 2})}},
        MapCase{"PadConstantInput", "Pad", {2, 3}, {ints({1, 2, 0, 1}), Tensor::scalar_f32(-7.5f)}},
        MapCase{"PadAttributeValueDefault", "Pad", {3, 4}, {ints({0, 1, 2, 0})}},
        MapCase{"PadNegativeCrops", "Pad", {4, 6}, {ints({-1, 2, 0, -3})}},
        MapCase{"PadReflect", "Pad", {3, 5}, {ints({2, 3, 1, 4})}, {{"mode", std::string("reflect")}}},
        MapCase{"PadEdgeBool", "Pad", {2, 3}, {ints({1, 2, 1, 2})}, {{"mode", std::string("edge")}}, DType::boolean},
        MapCase{"PadWrapF16", "Pad", {2, 4}, {ints({1, 5, 0, 2})}, {{"mode", std::string("wrap")}}, DType::f16},
        MapCase{"PadChosenAxis", "Pad", {2, 3, 4}, {ints({1, 2}), Tensor(), ints({-1})}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tilefuse::runtime
