#include "runtime/kernel_library.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "build/hashing.h"
#include "build/library_entry.h"
#include "ir/error.h"
#include "runtime/thread_team.h"

namespace tilefuse::runtime {
namespace {

namespace fs = std::filesystem;

// A hand-written kernel with the generated kernels' ABI: out[i] = 2 * in[i] + 1 over n = symbols[0]
// elements, four per block, staged through the per-worker scratch.
std::string kernel_source(const std::string& abi_version, bool with_run_blocks, const std::string& scale) {
  std::string source = R"(#include "tilefuse/kernel_abi.h"
extern "C" {
int tf_abi_version(void) { return )" + abi_version + R"(; }
int64_t tf_num_blocks(const int64_t* symbols, int64_t) { return (symbols[0] + 3) / 4; }
size_t tf_scratch_bytes(const int64_t*) { return 4 * sizeof(float); }
)";
  if (with_run_blocks) {
    source += R"(void tf_run_blocks(void* const* buffers, const int64_t* symbols, int64_t, int64_t first, int64_t end,
                   void* scratch) {
  const float* in = static_cast<const float*>(buffers[0]);
  float* out = static_cast<float*>(buffers[1]);
  float* staged = static_cast<float*>(scratch);
  for (int64_t block = first; block < end; ++block) {
    for (int64_t i = block * 4; i < symbols[0] && i < block * 4 + 4; ++i) {
      staged[i % 4] = )" + scale + R"( * in[i];
      out[i] = staged[i % 4] + 1;
    }
  }
}
)";
  }
  return source + "}\n";
}

class KernelLibraryTest : public ::testing::Test {
 protected:
  // ctest runs every test in its own process, so each library is compiled only when a test needs it.
  static void SetUpTestSuite() {
    std::string pattern = (fs::path(::testing::TempDir()) / "tilefuse_kernel_library_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    directory_ = pattern;
  }
  static void TearDownTestSuite() { fs::remove_all(directory_); }

  // Compiles kernel_source(abi_version, with_run_blocks) into <name>.so unless already built.
  static std::string compiled(const std::string& name, const std::string& abi_version = "TILEFUSE_KERNEL_ABI_VERSION",
                              bool with_run_blocks = true, const std::string& scale = "2") {
    const fs::path library_path = directory_ / (name + ".so");
    if (fs::exists(library_path)) return library_path.string();
    const fs::path source_path = directory_ / (name + ".cpp");
    std::ofstream(source_path) << kernel_source(abi_version, with_run_blocks, scale);
    const std::string command = "c++ -shared -fPIC -O1 -I" TILEFUSE_SOURCE_DIR "/include " +
                                source_path.string() + " -o " + library_path.string();
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    return library_path.string();
  }

  static void expect_init_failure(const std::string& path, const std::string& reason,
                                  const std::string& expected_sha256 = "") {
    try {
      KernelLibrary::load(path, expected_sha256.empty() ? nullptr : build::sha256_matches(expected_sha256, path));
      ADD_FAILURE() << path << " loaded";
    } catch (const UserError& error) {
      const std::string message = error.what();
      EXPECT_EQ(message.rfind("kernel " + path + " init failed: ", 0), 0u) << message;
      EXPECT_NE(message.find(reason), std::string::npos) << message;
    }
  }

  static inline fs::path directory_;
};

TEST_F(KernelLibraryTest, LoadsAndRunsAKernel) {
  const auto kernel = KernelLibrary::load(compiled("good"));
  EXPECT_EQ(kernel->path(), compiled("good"));
  const int64_t symbols[] = {10};
  ASSERT_EQ(kernel->num_blocks(symbols, 1), 3);
  EXPECT_EQ(kernel->scratch_bytes(symbols), 4 * sizeof(float));

  std::vector<float> in(10), out(10, -1.0f), scratch(4);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) * 0.5f;
  void* const buffers[] = {in.data(), out.data()};
  kernel->run_blocks(buffers, symbols, 1, 0, 3, scratch.data());
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], 2 * in[i] + 1) << "element " << i;
}

TEST_F(KernelLibraryTest, RunsOnAThreadTeamWithScratchPerWorker) {
  const auto kernel = KernelLibrary::load(compiled("good"));
  const int64_t symbols[] = {1001};
  std::vector<float> in(1001), out(1001, -1.0f);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  void* const buffers[] = {in.data(), out.data()};
  ThreadTeam team(3);
  std::vector<std::vector<float>> scratch(team.size(), std::vector<float>(4));
  team.run(kernel->num_blocks(symbols, 1), [&](int worker, int64_t first, int64_t end) {
    kernel->run_blocks(buffers, symbols, 1, first, end, scratch[worker].data());
  });
  for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], 2 * in[i] + 1) << "element " << i;
}

TEST_F(KernelLibraryTest, UnloadsWhenTheLastReferenceGoes) {
  KernelLibrary::load(compiled("good"));
  EXPECT_EQ(dlopen(compiled("good").c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr) << "library still loaded";
}

TEST_F(KernelLibraryTest, MissingFileFails) { expect_init_failure((directory_ / "missing.so").string(), "No such file"); }

TEST_F(KernelLibraryTest, NonLibraryFails) {
  const std::string path = (directory_ / "text.so").string();
  std::ofstream(path) << "this is text, not an ELF file\n";
  expect_init_failure(path, "text.so");
}

TEST_F(KernelLibraryTest, MissingSymbolFails) {
  const std::string path = compiled("no_run_blocks", "TILEFUSE_KERNEL_ABI_VERSION", false);
  expect_init_failure(path, "missing symbol tf_run_blocks");
  EXPECT_EQ(dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr) << "leaked handle";
}

TEST_F(KernelLibraryTest, OtherAbiVersionFails) {
  expect_init_failure(compiled("future_abi", "TILEFUSE_KERNEL_ABI_VERSION + 41"), "ABI version " + std::to_string(TILEFUSE_KERNEL_ABI_VERSION + 41));
}

// What a library computes for in = 1 (2 * 1 + 1 for "good").
float value_at_one(const KernelLibrary& kernel) {
  const int64_t symbols[] = {1};
  float in = 1.0f, out = 0.0f, scratch[4];
  void* const buffers[] = {&in, &out};
  kernel.run_blocks(buffers, symbols, 1, 0, 1, scratch);
  return out;
}

TEST_F(KernelLibraryTest, SymlinkInPlaceOfALibraryIsRefused) {
  const std::string link = (directory_ / "planted_link.so").string();
  fs::remove(link);
  fs::create_symlink(compiled("good"), link);
  expect_init_failure(link, "symbolic link");
}

TEST_F(KernelLibraryTest, LibraryOthersCanWriteIsRefused) {
  const std::string path = (directory_ / "writable.so").string();
  fs::copy_file(compiled("good"), path, fs::copy_options::overwrite_existing);
  ::chmod(path.c_str(), 0666);
  expect_init_failure(path, "writable by group or others");
}

TEST_F(KernelLibraryTest, LibraryOwnedBySomeoneElseIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to hand a file to another user";
  const std::string path = (directory_ / "foreign.so").string();
  fs::copy_file(compiled("good"), path, fs::copy_options::overwrite_existing);
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  expect_init_failure(path, "owned by uid 65534");
}

// A library replaced after the cache checked it (a planted file with the right name) does not
// match the recorded hash, computed again on the descriptor that is loaded.
TEST_F(KernelLibraryTest, LibraryWhoseBytesDifferFromTheRecordIsRefused) {
  const std::string path = (directory_ / "swapped.so").string();
  fs::copy_file(compiled("other", "TILEFUSE_KERNEL_ABI_VERSION", true, "3"), path, fs::copy_options::overwrite_existing);
  expect_init_failure(path, "sha256 differs", build::sha256_file_hex(compiled("good")));
  EXPECT_EQ(value_at_one(*KernelLibrary::load(path, build::sha256_matches(build::sha256_file_hex(path), path))), 4.0f);
}

// Loading goes through /proc/self/fd/N, a name that a later library may get again once the
// descriptor is closed: each load must still run its own code.
TEST_F(KernelLibraryTest, LibrariesLoadedOneAfterAnotherKeepTheirOwnCode) {
  const auto first = KernelLibrary::load(compiled("good"));
  const auto again = KernelLibrary::load(compiled("good"));  // glibc gives it a second name
  const auto second = KernelLibrary::load(compiled("other", "TILEFUSE_KERNEL_ABI_VERSION", true, "3"));
  const auto third = KernelLibrary::load(compiled("third", "TILEFUSE_KERNEL_ABI_VERSION", true, "5"));
  EXPECT_EQ(value_at_one(*first), 3.0f);
  EXPECT_EQ(value_at_one(*again), 3.0f);
  EXPECT_EQ(value_at_one(*second), 4.0f);
  EXPECT_EQ(value_at_one(*third), 6.0f);
}

}  // namespace
}  // namespace tilefuse::runtime
