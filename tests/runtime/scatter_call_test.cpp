// ScatterND and ScatterElements against the reference kernels, bit for bit: every reduction on
// f32/f64/i32/i64 (int32 products that wrap, updates that meet the same element), plain copies
// of bool, f16 and i64 elements, negative indices, i32 and i64 indices, indices smaller than the
// data off the axis, outputs large enough to be split over two workers; and the errors for an
// index out of range. (The op registry refuses other reductions and ScatterND's i32 indices.)
#include "runtime/scatter_call.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

// Values that make sums, products and extrema all differ from a copy (and overflow int32).
Tensor values(DType dtype, const Ints& shape, int64_t seed) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t k = (i * 7919 + seed * 104729) % 23;
    if (dtype == DType::i32) t.set_i64(i, 2147483000 - 97 * k);
    else if (dtype == DType::boolean) t.set_i64(i, k % 2);
    else t.set_f64(i, static_cast<double>(k) - 11.5);
  }
  return t;
}

// Indices in [-dim, dim), with repeats, in the given index type.
Tensor indices_into(DType index_type, const Ints& shape, int64_t dim, int64_t seed) {
  Tensor t(index_type, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_i64(i, (i * 31 + seed * 17) % (2 * dim) - dim);
  return t;
}

struct Case {
  Graph graph;
  Node* node = nullptr;
  std::vector<Tensor> inputs;
};

void build(Case& c, const char* op, DType dtype, const Ints& data, DType index_type, const Ints& indices,
           const Ints& updates, const std::string& reduction, int64_t axis) {
  Value* d = c.graph.add_input("data", dtype, shape_of(data));
  Value* i = c.graph.add_input("indices", index_type, shape_of(indices));
  Value* u = c.graph.add_input("updates", dtype, shape_of(updates));
  AttributeMap attrs = {{"reduction", reduction}};
  if (std::string(op) != "ScatterND") attrs["axis"] = axis;
  c.node = c.graph.add_node(op, "scatter", {d, i, u}, {"y"}, attrs);
  c.graph.infer_shapes();
}

void expect_matches_reference(Case& c, const std::string& what) {
  ASSERT_TRUE(scatter_call_supports(*c.node)) << what;
  std::unique_ptr<LibraryCall> call = prepare_scatter_call(*c.node);
  const Tensor expected = reference::evaluate_node(*c.node, c.inputs)[0];
  for (int workers : {1, 2}) {
    ThreadTeam team(workers);
    std::vector<Tensor> outs = {Tensor(c.inputs[0].dtype(), c.inputs[0].shape())};
    call->run(team, c.inputs, outs);
    EXPECT_TRUE(outs[0].same_bytes(expected)) << what << " on " << workers << " workers";
  }
}

const char* const kReductions[] = {"none", "add", "mul", "max", "min"};

TEST(ScatterCall, ScatterNDOfKeyValueSlicesMatchesReference) {
  // A KV cache [batch, heads, positions, head dim] and one position's keys: 12 slices of 16.
  const Ints data = {2, 12, 64, 16};
  {
    Case c;
    build(c, "ScatterND", DType::f32, data, DType::i64, {2, 12, 1, 3}, {2, 12, 1, 16}, "none", 0);
    Tensor idx(DType::i64, {2, 12, 1, 3});
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t h = 0; h < 12; ++h) {
        const int64_t at = (b * 12 + h) * 3;
        idx.set_i64(at, b);
        idx.set_i64(at + 1, h - (h % 2) * 12);  // every other head counted from the end
        idx.set_i64(at + 2, 37);
      }
    }
    c.inputs = {values(DType::f32, data, 1), idx, values(DType::f32, {2, 12, 1, 16}, 2)};
    expect_matches_reference(c, "kv cache");
  }
}

TEST(ScatterCall, ScatterNDReductionsMeetInIndexOrder) {
  // Single elements (tuples as long as the rank) and rows (shorter tuples), with repeats.
  for (DType dtype : {DType::f32, DType::f64, DType::i32, DType::i64}) {
    for (const char* reduction : kReductions) {
      for (const Ints& indices : {Ints{300, 2}, Ints{40, 1}}) {
        const Ints data = {64, 96};
        Ints updates(indices.begin(), indices.end() - 1);
        if (indices.back() == 1) updates.push_back(96);
        Case c;
        build(c, "ScatterND", dtype, data, DType::i64, indices, updates, reduction, 0);
        Tensor idx(DType::i64, indices);
        for (int64_t i = 0; i < idx.numel(); ++i) idx.set_i64(i, (i * 29 + 3) % 128 - 64);
        c.inputs = {values(dtype, data, 3), idx, values(dtype, updates, 4)};
        expect_matches_reference(c, std::string(dtype_name(dtype)) + " " + reduction + " tuples " +
                                        std::to_string(indices.back()));
      }
    }
  }
}

TEST(ScatterCall, ScatterNDCopiesAnyElementType) {
  for (DType dtype : {DType::boolean, DType::f16, DType::i64, DType::u8}) {
    Case c;
    build(c, "ScatterND", dtype, {8, 4096}, DType::i64, {3, 1}, {3, 4096}, "none", 0);
    c.inputs = {values(dtype, {8, 4096}, 5), indices_into(DType::i64, {3, 1}, 8, 6), values(dtype, {3, 4096}, 7)};
    expect_matches_reference(c, std::string(dtype_name(dtype)));
  }
}

TEST(ScatterCall, ScatterElementsOnEveryAxisMatchesReference) {
  const Ints data = {6, 40, 24};
  for (DType dtype : {DType::f32, DType::f64, DType::i32, DType::i64}) {
    for (const char* reduction : kReductions) {
      for (int64_t axis : {0, 1, 2, -1}) {
        const int64_t a = axis < 0 ? axis + 3 : axis;
        // Smaller than the data off the axis, longer than it along the axis (repeats).
        Ints indices = {5, 33, 20};
        indices[a] = 2 * data[a] + 1;
        for (DType index_type : {DType::i64, DType::i32}) {
          Case c;
          build(c, "ScatterElements", dtype, data, index_type, indices, indices, reduction, axis);
          c.inputs = {values(dtype, data, 8), indices_into(index_type, indices, data[a], 9),
                      values(dtype, indices, 10)};
          expect_matches_reference(c, std::string(dtype_name(dtype)) + " " + reduction + " axis " +
                                          std::to_string(axis) + " " + std::string(dtype_name(index_type)));
        }
      }
    }
  }
}

TEST(ScatterCall, ScatterAddOfRowsMatchesReference) {
  // torch's scatter_add along the last axis of [64, 4096], as reference_cliffs.py measures it.
  Case c;
  build(c, "ScatterElements", DType::f32, {64, 4096}, DType::i64, {64, 1024}, {64, 1024}, "add", 1);
  c.inputs = {values(DType::f32, {64, 4096}, 11), indices_into(DType::i64, {64, 1024}, 4096, 12),
              values(DType::f32, {64, 1024}, 13)};
  expect_matches_reference(c, "scatter_add");
}

void expect_out_of_range(Case& c, const std::string& words) {
  std::unique_ptr<LibraryCall> call = prepare_scatter_call(*c.node);
  ThreadTeam team(2);
  std::vector<Tensor> outs = {Tensor(c.inputs[0].dtype(), c.inputs[0].shape())};
  try {
    call->run(team, c.inputs, outs);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(ScatterCall, AnIndexOutOfRangeIsAUserError) {
  {
    Case c;
    build(c, "ScatterND", DType::f32, {4, 5}, DType::i64, {1, 1}, {1, 5}, "none", 0);
    Tensor idx(DType::i64, {1, 1});
    idx.set_i64(0, 4);
    c.inputs = {values(DType::f32, {4, 5}, 1), idx, values(DType::f32, {1, 5}, 2)};
    expect_out_of_range(c, "index 4 is out of range for a dim of size 4");
  }
  {
    Case c;
    build(c, "ScatterElements", DType::f32, {4, 5}, DType::i32, {4, 2}, {4, 2}, "add", 1);
    Tensor idx(DType::i32, {4, 2});
    idx.set_i64(7, -6);
    c.inputs = {values(DType::f32, {4, 5}, 1), idx, values(DType::f32, {4, 2}, 2)};
    expect_out_of_range(c, "index -6 is out of range for a dim of size 5");
  }
}

}  // namespace
}  // namespace tilefuse::runtime
