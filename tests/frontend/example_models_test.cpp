// Every bundled example model imports, with the graph outputs the file declares.
#include <filesystem>

#include <gtest/gtest.h>

#include "frontend/onnx_importer.h"

namespace tilefuse::frontend {
namespace {

TEST(ExampleModels, AllImport) {
  std::filesystem::path dir = std::filesystem::path(TILEFUSE_SOURCE_DIR) / "examples" / "models";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " does not exist yet";
  int imported = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".onnx") continue;
    SCOPED_TRACE(entry.path().string());
    Graph g = import_onnx_file(entry.path().string());
    EXPECT_FALSE(g.outputs().empty());
    EXPECT_GT(g.num_nodes(), 0u);
    ++imported;
  }
  EXPECT_GT(imported, 0);
}

}  // namespace
}  // namespace tilefuse::frontend
