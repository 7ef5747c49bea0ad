#include "api/output_files.h"

#include <gtest/gtest.h>

namespace tilefuse::api {
namespace {

TEST(OutputFiles, SanitisesAndDeduplicates) {
  EXPECT_EQ(output_file_names({"logits", "a/b:0", "../etc", "a_b_0", "", "y.1"}),
            (std::vector<std::string>{"logits.npy", "a_b_0.npy", "_._etc.npy", "a_b_0_1.npy", "output.npy", "y.1.npy"}));
}

}  // namespace
}  // namespace tilefuse::api
