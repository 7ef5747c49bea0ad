#include "ir/shape.h"

#include <gtest/gtest.h>

#include "ir/error.h"

namespace tilefuse {
namespace {

const Dim N = Dim::symbol("N");
const Dim M = Dim::symbol("M");

TEST(ShapeTest, StaticHelpers) {
  EXPECT_TRUE(is_static(shape_of({2, 3})));
  EXPECT_TRUE(is_static({}));
  EXPECT_FALSE(is_static({N, 3}));
  EXPECT_EQ(static_dims({2, 3, 1}), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_THROW(static_dims({2, N}), InternalError);
  EXPECT_EQ(num_elements(shape_of({2, 3, 4})), Dim(24));
  EXPECT_EQ(num_elements({}), Dim(1));
  EXPECT_EQ(num_elements({N, 4, M}), 4 * N * M);
  EXPECT_EQ(num_elements(shape_of({5, 0})), Dim(0));
}

TEST(ShapeTest, ToString) {
  EXPECT_EQ(shape_to_string({}), "[]");
  EXPECT_EQ(shape_to_string({N, 2 * N + 1, 4}), "[N, 2*N + 1, 4]");
  EXPECT_EQ(dims_to_string({1, 2}), "[1, 2]");
}

TEST(ShapeTest, BroadcastStatic) {
  EXPECT_EQ(broadcast_dims({2, 1, 3}, {4, 3}, "t"), (std::vector<int64_t>{2, 4, 3}));
  EXPECT_EQ(broadcast_dims({}, {2, 3}, "t"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(broadcast_dims({5, 1}, {1, 6}, "t"), (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(broadcast_dims({0, 1}, {1, 3}, "t"), (std::vector<int64_t>{0, 3}));
}

TEST(ShapeTest, BroadcastConflictNamesThePlace) {
  try {
    broadcast_dims({2, 3}, {4, 3}, "node 'add0' (Add)");
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("node 'add0' (Add)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
  }
}

TEST(ShapeTest, BroadcastSymbolic) {
  EXPECT_EQ(broadcast_shapes({N, 1}, {1, M}, "t"), (Shape{N, M}));
  EXPECT_EQ(broadcast_shapes({N, 4}, {4}, "t"), (Shape{N, 4}));
  EXPECT_EQ(broadcast_shapes({N}, {N}, "t"), (Shape{N}));
  // Different symbols: equal or one is 1 at run time, so the result is their max.
  EXPECT_EQ(broadcast_shapes({N}, {M}, "t"), (Shape{max(N, M)}));
  EXPECT_EQ(broadcast_shapes({N}, {3}, "t"), (Shape{max(N, 3)}));
}

TEST(ShapeTest, NormalizeAxis) {
  EXPECT_EQ(normalize_axis(-1, 3, "t"), 2);
  EXPECT_EQ(normalize_axis(-3, 3, "t"), 0);
  EXPECT_EQ(normalize_axis(1, 3, "t"), 1);
  EXPECT_THROW(normalize_axis(3, 3, "t"), UserError);
  EXPECT_THROW(normalize_axis(-4, 3, "t"), UserError);
}

}  // namespace
}  // namespace tilefuse
