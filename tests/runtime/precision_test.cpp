// --precision and TILEFUSE_PRECISION: the accepted values, and errors that name the setting.
#include "runtime/precision.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "ir/error.h"

namespace tilefuse::runtime {
namespace {

std::string error_of(std::string_view text) {
  try {
    parse_precision(text, "--precision");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(Precision, ParsesItsNames) {
  EXPECT_EQ(parse_precision("f32", "--precision"), Precision::f32);
  EXPECT_EQ(parse_precision("bf16", "--precision"), Precision::bf16);
  EXPECT_STREQ(precision_name(Precision::bf16), "bf16");
  EXPECT_STREQ(precision_name(Precision::f32), "f32");
}

TEST(Precision, RefusesOthersByName) {
  EXPECT_NE(error_of("fp32").find("--precision must be f32 or bf16, got 'fp32'"), std::string::npos) << error_of("fp32");
  const std::string f16 = error_of("f16");
  EXPECT_NE(f16.find("f16 is not supported"), std::string::npos) << f16;
  EXPECT_NE(f16.find("use bf16"), std::string::npos) << f16;
}

TEST(Precision, ComesFromTheEnvironment) {
  unsetenv("TILEFUSE_PRECISION");
  EXPECT_EQ(precision_from_environment(), Precision::f32);
  setenv("TILEFUSE_PRECISION", "bf16", 1);
  EXPECT_EQ(precision_from_environment(), Precision::bf16);
  setenv("TILEFUSE_PRECISION", "half", 1);
  EXPECT_THROW(precision_from_environment(), UserError);
  unsetenv("TILEFUSE_PRECISION");
}

}  // namespace
}  // namespace tilefuse::runtime
