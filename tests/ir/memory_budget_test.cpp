#include "ir/memory_budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/tensor.h"
#include "support/user_error.h"

namespace tilefuse {
namespace {

using ::testing::HasSubstr;
using testing_support::user_error;

TEST(MemoryBudget, ParsesByteCountsWithBinarySuffixes) {
  EXPECT_EQ(parse_memory_size("4096", "x"), 4096u);
  EXPECT_EQ(parse_memory_size("64K", "x"), 65536u);
  EXPECT_EQ(parse_memory_size("512MiB", "x"), size_t{512} << 20);
  EXPECT_EQ(parse_memory_size("8g", "x"), size_t{8} << 30);
  EXPECT_EQ(parse_memory_size("1.5GiB", "x"), size_t{3} << 29);
  EXPECT_EQ(parse_memory_size("2TB", "x"), size_t{2} << 40);
  for (const char* bad : {"", "lots", "-5", "0", "5X", "1e3", "8 G", "99999999999T"}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(user_error([&] { parse_memory_size(bad, "TILEFUSE_MAX_MEMORY"); }),
                HasSubstr("TILEFUSE_MAX_MEMORY is '" + std::string(bad) + "'"));
  }
}

// Tensors reserve their bytes while they live; an allocation past the cap is refused before it
// is made, with what was asked and what is left.
TEST(MemoryBudget, TensorsReserveAndReleaseTheirBytes) {
  const size_t before_cap = max_memory();
  const size_t base = reserved_memory();
  set_max_memory(base + (size_t{1} << 20));
  {
    Tensor a(DType::f32, {128, 1024});  // 512 KiB
    EXPECT_EQ(reserved_memory(), base + (size_t{512} << 10));
    const std::string message = user_error([] { Tensor b(DType::f32, {256, 1024}); });  // 1 MiB more
    EXPECT_THAT(message, HasSubstr("a tensor f32[256, 1024] needs 1.0 MiB"));
    EXPECT_THAT(message, HasSubstr("TILEFUSE_MAX_MEMORY or --max-memory"));
  }
  EXPECT_EQ(reserved_memory(), base);
  EXPECT_NO_THROW(Tensor c(DType::f32, {256, 1024}));
  set_max_memory(before_cap);
}

}  // namespace
}  // namespace tilefuse
