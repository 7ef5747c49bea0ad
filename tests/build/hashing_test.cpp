#include "build/hashing.h"

#include <gtest/gtest.h>

#include "build_test_support.h"
#include "ir/error.h"

namespace tilefuse::build {
namespace {

// Test vectors from RFC 1321 and FIPS 180-2.
TEST(Hashing, Md5KnownVectors) {
  EXPECT_EQ(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(md5_hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
}

TEST(Hashing, Sha256KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// A million bytes spans many read buffers, so this also checks the streaming.
TEST(Hashing, Sha256OfFileStreamsLargeFiles) {
  testing::TempDir dir;
  testing::write_text(dir.file("a"), std::string(1000000, 'a'));
  EXPECT_EQ(sha256_file_hex(dir.file("a")), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Hashing, MissingFileIsUserErrorNamingIt) {
  testing::TempDir dir;
  try {
    sha256_file_hex(dir.file("absent"));
    FAIL() << "expected UserError";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("absent"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace tilefuse::build
