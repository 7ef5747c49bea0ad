// Slice, Expand, Gather and GatherND into the executor's buffers against the reference kernels:
// negative and out-of-range bounds, negative steps, several axes, broadcasts that add axes,
// gathers on every axis with negative and scalar indices, GatherND of elements, rows and planes
// with and without batch dims, GatherElements on several axes, non-float dtypes, on 1 and 2 workers; and the errors for bad
// indices.
#include "runtime/strided_copy_call.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

Tensor ints(const Ints& v) {
  return Tensor::from_vector(DType::i64, {static_cast<int64_t>(v.size())}, std::vector<double>(v.begin(), v.end()));
}

Tensor counting(DType dtype, const Ints& shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, static_cast<double>(i % 251));
  return t;
}

// Indices in [-n, n) (negative ones count from the end), a different spread on every row.
Tensor picks(DType dtype, const Ints& shape, int64_t n) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, static_cast<double>((i * 37 + i / 7) % (2 * n) - n));
  return t;
}

struct CopyCase {
  std::string name;
  std::string op;
  Ints x;
  std::vector<Tensor> operands;  // the inputs after x (constants of the graph)
  AttributeMap attrs = {};
  DType dtype = DType::f32;
};

class StridedCopy : public ::testing::TestWithParam<CopyCase> {};

TEST_P(StridedCopy, MatchesReference) {
  const CopyCase& c = GetParam();
  Graph g;
  std::vector<Value*> inputs = {g.add_input("x", c.dtype, shape_of(c.x))};
  for (size_t i = 0; i < c.operands.size(); ++i) {
    inputs.push_back(c.operands[i].defined() ? g.add_constant("k" + std::to_string(i), c.operands[i]) : nullptr);
  }
  Node* node = g.add_node(c.op, c.op, inputs, {"y"}, c.attrs);
  g.infer_shapes();
  ASSERT_TRUE(strided_copy_call_supports(*node));
  std::vector<Tensor> ins = {counting(c.dtype, c.x)};
  ins.insert(ins.end(), c.operands.begin(), c.operands.end());
  const std::vector<Tensor> expected = reference::evaluate_node(*node, ins);
  std::unique_ptr<LibraryCall> call = prepare_strided_copy_call(*node);
  for (int workers : {1, 2}) {
    ThreadTeam team(workers);
    std::vector<Tensor> outs = {Tensor(c.dtype, expected[0].shape())};
    call->run(team, ins, outs);
    EXPECT_TRUE(outs[0].same_bytes(expected[0])) << c.name << " on " << workers << " workers";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ops, StridedCopy,
    ::testing::Values(
        // Llama's rotary halves: x[..., :d/2] and x[..., d/2:].
        CopyCase{"SliceLastAxisHalves", "Slice", {2, 3, 4, 16}, {ints({8}), ints({INT64_MAX}), ints({-1})}},
        CopyCase{"SliceSeveralAxesWithSteps", "Slice", {5, 6, 7}, {ints({1, 0}), ints({5, 7}), ints({0, 2}), ints({2, 3})}},
        CopyCase{"SliceNegativeStep", "Slice", {4, 9}, {ints({-2}), ints({-100}), ints({1}), ints({-2})}},
        CopyCase{"SliceOutOfRangeBoundsClamp", "Slice", {3, 5}, {ints({-10, 2}), ints({10, 100})}},
        CopyCase{"SliceEmpty", "Slice", {3, 5}, {ints({4}), ints({2}), ints({1})}},
        CopyCase{"SliceInt64", "Slice", {1, 12}, {ints({0}), ints({7}), ints({1})}, {}, DType::i64},
        // Llama's causal mask: [1, 1, S, S] expanded over the batch.
        CopyCase{"ExpandBatch", "Expand", {1, 1, 6, 6}, {ints({3, 1, 6, 6})}, {}, DType::boolean},
        CopyCase{"ExpandMiddleAndNewAxes", "Expand", {4, 1, 3}, {ints({2, 4, 5, 3})}},
        CopyCase{"ExpandScalarLike", "Expand", {1}, {ints({3, 7})}, {}, DType::f16},
        // Embedding lookups (rows of a table) and position ids.
        CopyCase{"GatherEmbeddingRows", "Gather", {10, 8}, {Tensor::from_vector<int64_t>(DType::i64, {2, 3}, {0, 9, -1, 3, 3, 5})}},
        CopyCase{"GatherMiddleAxisInt32", "Gather", {2, 6, 3}, {Tensor::from_vector<int64_t>(DType::i32, {2}, {5, -6})},
                 {{"axis", int64_t{1}}}},
        CopyCase{"GatherScalarIndexLastAxis", "Gather", {3, 4}, {Tensor::from_vector<int64_t>(DType::i64, {}, {2})},
                 {{"axis", int64_t{-1}}}, DType::i64},
        // The dynamo exporter's mask indexing: single elements of a bool [1, S] mask.
        CopyCase{"GatherNDElementsOfBoolMask", "GatherND", {1, 6},
                 {Tensor::from_vector<int64_t>(DType::i64, {1, 1, 3, 2}, {0, 5, 0, -6, 0, 2})}, {}, DType::boolean},
        CopyCase{"GatherNDRowSlices", "GatherND", {4, 3, 5}, {Tensor::from_vector<int64_t>(DType::i64, {2, 1}, {3, -4})}},
        CopyCase{"GatherNDPlaneSlices", "GatherND", {4, 3, 5}, {Tensor::from_vector<int64_t>(DType::i64, {3, 2}, {0, 2, 3, 0, 1, 1})}},
        CopyCase{"GatherNDBatchDims", "GatherND", {2, 3, 4},
                 {Tensor::from_vector<int64_t>(DType::i64, {2, 2, 1}, {2, 0, 1, 1})}, {{"batch_dims", int64_t{1}}}, DType::i64},
        CopyCase{"GatherNDBatchDimsElements", "GatherND", {2, 3, 4},
                 {Tensor::from_vector<int64_t>(DType::i64, {2, 3, 2}, {0, 0, 2, 3, 1, 1, 2, 2, 0, 3, 1, 0})},
                 {{"batch_dims", int64_t{1}}}, DType::f16},
        // torch.gather along the last and a middle axis, indices narrower than data.
        CopyCase{"GatherElementsLastAxis", "GatherElements", {3, 5},
                 {Tensor::from_vector<int64_t>(DType::i64, {3, 2}, {4, 0, -1, 2, 3, 3})}, {{"axis", int64_t{1}}}},
        // Rows long enough for the vector picks (8 a step on AVX2) and a tail, both index types.
        CopyCase{"GatherElementsLastAxisLongRows", "GatherElements", {3, 2, 40}, {picks(DType::i64, {3, 2, 19}, 40)},
                 {{"axis", int64_t{-1}}}},
        CopyCase{"GatherElementsLastAxisLongRowsInt32", "GatherElements", {4, 33}, {picks(DType::i32, {4, 33}, 33)},
                 {{"axis", int64_t{1}}}, DType::i32},
        CopyCase{"GatherElementsMiddleAxisInt32", "GatherElements", {2, 4, 3},
                 {Tensor::from_vector<int64_t>(DType::i32, {2, 2, 2}, {3, 0, 1, -4, 2, 2, 0, 1})},
                 {{"axis", int64_t{1}}}, DType::i64},
        // Indices that span data's other axes: the row-wise path.
        CopyCase{"GatherElementsMiddleAxisFullRowsInt32", "GatherElements", {2, 4, 3},
                 {Tensor::from_vector<int64_t>(DType::i32, {2, 3, 3}, {3, 0, 1, -4, 2, 2, 0, 1, -1, 1, 1, 1, 2, 3, 0, -2, 0, 3})},
                 {{"axis", int64_t{1}}}},
        CopyCase{"GatherElementsFirstAxisBool", "GatherElements", {3, 2},
                 {Tensor::from_vector<int64_t>(DType::i64, {4, 2}, {2, 0, 1, 1, 0, 2, -1, -3})}, {}, DType::boolean}),
    [](const auto& info) { return info.param.name; });

TEST(StridedCopy, GatherIndexOutOfRangeIsAUserError) {
  Graph g;
  Value* table = g.add_input("table", DType::f32, {Dim(4), Dim(2)});
  Value* ids = g.add_input("ids", DType::i64, {Dim(2)});
  Node* node = g.add_node("Gather", "embed", {table, ids}, {"y"});
  g.infer_shapes();
  std::unique_ptr<LibraryCall> call = prepare_strided_copy_call(*node);
  ThreadTeam team(2);
  std::vector<Tensor> outs = {Tensor(DType::f32, {2, 2})};
  try {
    call->run(team, {counting(DType::f32, {4, 2}), Tensor::from_vector<int64_t>(DType::i64, {2}, {1, 4})}, outs);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("index 4 is out of range for axis 0 of size 4"), std::string::npos) << e.what();
  }
}

TEST(StridedCopy, GatherElementsIndexOutOfRangeIsAUserError) {
  Graph g;
  Value* data = g.add_input("data", DType::f32, {Dim(3), Dim(4)});
  Value* indices = g.add_input("indices", DType::i64, {Dim(3), Dim(2)});
  Node* node = g.add_node("GatherElements", "pick", {data, indices}, {"y"}, {{"axis", int64_t{1}}});
  g.infer_shapes();
  std::unique_ptr<LibraryCall> call = prepare_strided_copy_call(*node);
  ThreadTeam team(2);
  std::vector<Tensor> outs = {Tensor(DType::f32, {3, 2})};
  try {
    call->run(team, {counting(DType::f32, {3, 4}), Tensor::from_vector<int64_t>(DType::i64, {3, 2}, {1, 0, 3, -5, 2, 2})}, outs);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("index -5 is out of range for axis 1 of size 4"), std::string::npos) << e.what();
  }
}

// The same error where the bad index is among those picked 8 at a time, for both index types.
TEST(StridedCopy, GatherElementsIndexOutOfRangeInALongRowIsAUserError) {
  for (DType index : {DType::i64, DType::i32}) {
    Graph g;
    Value* data = g.add_input("data", DType::f32, {Dim(2), Dim(30)});
    Value* indices = g.add_input("indices", index, {Dim(2), Dim(20)});
    Node* node = g.add_node("GatherElements", "pick", {data, indices}, {"y"}, {{"axis", int64_t{1}}});
    g.infer_shapes();
    std::unique_ptr<LibraryCall> call = prepare_strided_copy_call(*node);
    ThreadTeam team(2);
    std::vector<Tensor> outs = {Tensor(DType::f32, {2, 20})};
    Tensor bad = picks(index, {2, 20}, 30);
    bad.set_f64(23, 30);
    try {
      call->run(team, {counting(DType::f32, {2, 30}), bad}, outs);
      ADD_FAILURE() << "no error with " << dtype_name(index) << " indices";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("index 30 is out of range for axis 1 of size 30"), std::string::npos) << e.what();
    }
  }
}

TEST(StridedCopy, GatherNDCoordinateOutOfRangeIsAUserError) {
  Graph g;
  Value* data = g.add_input("data", DType::f32, {Dim(2), Dim(3)});
  Value* indices = g.add_input("indices", DType::i64, {Dim(1), Dim(2)});
  Node* node = g.add_node("GatherND", "pick", {data, indices}, {"y"});
  g.infer_shapes();
  std::unique_ptr<LibraryCall> call = prepare_strided_copy_call(*node);
  ThreadTeam team(1);
  std::vector<Tensor> outs = {Tensor(DType::f32, {1})};
  try {
    call->run(team, {counting(DType::f32, {2, 3}), Tensor::from_vector<int64_t>(DType::i64, {1, 2}, {1, 3})}, outs);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("index 3 is out of range for axis 1 of size 3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tilefuse::runtime
