// optimize_tiling: written atomically with a checksum, read back exactly, and a damaged file is
// reported as absent (so the kernel is tuned again) rather than trusted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tune/tuning_record.h"

namespace tilefuse::tune {
namespace {

namespace fs = std::filesystem;

class TuningRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("tuning_record_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    path_ = (dir_ / "optimize_tiling").string();
    record_.winner.tiling = {.units_per_block = 8, .column_tile = 4096, .stream_stores = true, .prefetch_ahead = 0, .block_dim = 2};
    record_.winner.workspace = 0;
    record_.topn = 3;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string contents() const {
    std::ifstream in(path_);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void overwrite(const std::string& text) const { std::ofstream(path_) << text; }

  fs::path dir_;
  std::string path_;
  TuningRecord record_;
};

TEST_F(TuningRecordTest, RoundTrips) {
  write_tuning_record(path_, record_);
  const auto back = read_tuning_record(path_);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->winner.record(), "upb=8;ct=4096;nt=1;pf=0;bd=2|0|2");
  EXPECT_EQ(back->topn, 3);
  EXPECT_EQ(contents().substr(0, contents().find('\n')), "upb=8;ct=4096;nt=1;pf=0;bd=2|0|2");
}

TEST_F(TuningRecordTest, MissingFileIsAbsent) { EXPECT_FALSE(read_tuning_record(path_)); }

TEST_F(TuningRecordTest, EditedWinnerFailsTheChecksum) {
  write_tuning_record(path_, record_);
  std::string text = contents();
  text.replace(text.find("upb=8"), 5, "upb=9");
  overwrite(text);
  EXPECT_FALSE(read_tuning_record(path_));
}

TEST_F(TuningRecordTest, TruncatedFileIsAbsent) {
  write_tuning_record(path_, record_);
  const std::string text = contents();
  for (size_t cut : {size_t{0}, size_t{10}, text.find('\n') + 1, text.size() - 5}) {
    overwrite(text.substr(0, cut));
    EXPECT_FALSE(read_tuning_record(path_)) << "cut at " << cut;
  }
}

TEST_F(TuningRecordTest, KernelKeyIsMd5OfTheRecord) {
  // echo -n 'upb=8;ct=4096;nt=1;pf=0;bd=2|0|2' | md5sum
  EXPECT_EQ(kernel_key(record_.winner), "988dfbc23cd7855a3fbd11ccb61600bc");
  tiling::TilingCandidate other = record_.winner;
  other.tiling.block_dim = 1;
  EXPECT_NE(kernel_key(other), kernel_key(record_.winner));
}

}  // namespace
}  // namespace tilefuse::tune
