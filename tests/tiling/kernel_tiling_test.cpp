// The canonical text of a tiling and of a candidate record: what caches and optimize_tiling hold.
#include <gtest/gtest.h>

#include "tiling/kernel_tiling.h"

namespace tilefuse::tiling {
namespace {

TEST(KernelTiling, ReprRoundTrips) {
  const KernelTiling t{.units_per_block = 4, .column_tile = 8192, .stream_stores = true, .prefetch_ahead = 0, .block_dim = 2};
  EXPECT_EQ(t.repr(), "upb=4;ct=8192;nt=1;pf=0;bd=2");
  ASSERT_TRUE(parse_tiling_repr(t.repr()));
  EXPECT_EQ(*parse_tiling_repr(t.repr()), t);
}

TEST(KernelTiling, ParseRejectsAnythingReprCouldNotHaveWritten) {
  for (const char* bad : {"", "upb=4", "upb=0;ct=0;nt=0;pf=0;bd=1", "upb=1;ct=0;nt=2;pf=0;bd=1",
                          "upb=1;ct=0;nt=0;pf=0;bd=0", "upb=1;ct=-16;nt=0;pf=0;bd=1", "upb=01;ct=0;nt=0;pf=0;bd=1",
                          "ct=0;upb=1;nt=0;pf=0;bd=1", "upb=1;ct=0;nt=0;pf=0;bd=1;", "upb=x;ct=0;nt=0;pf=0;bd=1"}) {
    EXPECT_FALSE(parse_tiling_repr(bad)) << bad;
  }
}

TEST(TilingCandidate, RecordIsReprWorkspaceBlockDim) {
  TilingCandidate c;
  c.tiling = {.units_per_block = 2, .column_tile = 0, .stream_stores = false, .prefetch_ahead = 1024, .block_dim = 2};
  c.workspace = 8192;
  EXPECT_EQ(c.record(), "upb=2;ct=0;nt=0;pf=1024;bd=2|8192|2");
  auto back = parse_candidate_record(c.record());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->tiling, c.tiling);
  EXPECT_EQ(back->workspace, 8192);
}

TEST(TilingCandidate, RecordWithInconsistentBlockDimIsRejected) {
  EXPECT_FALSE(parse_candidate_record("upb=2;ct=0;nt=0;pf=0;bd=2|0|1"));
  EXPECT_FALSE(parse_candidate_record("upb=2;ct=0;nt=0;pf=0;bd=2|-1|2"));
  EXPECT_FALSE(parse_candidate_record("upb=2;ct=0;nt=0;pf=0;bd=2|0"));
}

}  // namespace
}  // namespace tilefuse::tiling
