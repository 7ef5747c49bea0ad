#include "build/artifact_cache.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "build/hashing.h"
#include "build_test_support.h"
#include "ir/error.h"

namespace tilefuse::build {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

ArtifactRequest request_returning(int value) {
  return {"fused_answer", fmt::format("extern \"C\" int kernel_value() {{ return {}; }}\n", value),
          {{"codegen_version", 1}}};
}

int call_kernel_value(const std::string& library) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw std::runtime_error(::dlerror());
  auto function = reinterpret_cast<int (*)()>(::dlsym(handle, "kernel_value"));
  int value = function ? function() : -1;
  ::dlclose(handle);
  return value;
}

// Every test gets its own cache root and a compiler wrapper that logs each real compilation.
class ArtifactCacheTest : public ::testing::Test {
 protected:
  Toolchain toolchain_with_delay(const std::string& delay) {
    testing::ScopedEnv cxx("TILEFUSE_CXX", testing::write_counting_compiler(dir_, log_, delay));
    return Toolchain::from_environment();
  }
  size_t compiler_runs() const { return fs::exists(log_) ? testing::count_lines(log_) : 0; }
  std::string build(const ArtifactRequest& request) { return cache_.get_or_build(request, toolchain_, counters_).path; }

  testing::TempDir dir_;
  std::string log_ = dir_.file("compiler.log");
  std::string root_ = dir_.file("cache");
  Toolchain toolchain_ = toolchain_with_delay("0");
  ArtifactCache cache_{root_};
  CacheCounters counters_;
};

TEST_F(ArtifactCacheTest, FirstRunCompilesSecondRunReuses) {
  const std::string first = build(request_returning(42));
  EXPECT_EQ(counters_.compiles, 1);
  EXPECT_EQ(counters_.cache_hits, 0);
  const std::string second = build(request_returning(42));
  EXPECT_EQ(second, first);
  EXPECT_EQ(counters_.compiles, 1);
  EXPECT_EQ(counters_.cache_hits, 1);
  EXPECT_EQ(compiler_runs(), 1u);
  EXPECT_EQ(call_kernel_value(second), 42);
}

TEST_F(ArtifactCacheTest, EntryHasTheDocumentedLayoutAndMeta) {
  const ArtifactRequest request = request_returning(7);
  const std::string library = build(request);
  const std::string dir = cache_.entry_dir(request, toolchain_);
  EXPECT_EQ(library, dir + "/kernel.so");
  EXPECT_EQ(fs::path(dir).parent_path(), fs::path(root_) / "fused_answer");
  std::vector<std::string> files;
  for (const auto& file : fs::directory_iterator(dir)) files.push_back(file.path().filename());
  EXPECT_THAT(files, ::testing::UnorderedElementsAre("kernel.cpp", "kernel.so", "meta.json", "compile.lock"));
  EXPECT_EQ(testing::read_text(dir + "/kernel.cpp"), request.source);

  auto meta = nlohmann::json::parse(testing::read_text(dir + "/meta.json"));
  EXPECT_EQ(meta["library_bytes"], fs::file_size(library));
  EXPECT_EQ(meta["library_sha256"], sha256_file_hex(library));
  EXPECT_EQ(meta["toolchain"], toolchain_.identity);
  EXPECT_EQ(meta["source_sha256"], sha256_hex(request.source));
  EXPECT_EQ(meta["meta"], request.meta);
  EXPECT_EQ(meta["artifact_hash"], fs::path(dir).filename().string());
}

TEST_F(ArtifactCacheTest, HashCoversSourceToolchainAndMeta) {
  const ArtifactRequest base = request_returning(1);
  const std::string hash = cache_.artifact_hash(base, toolchain_);
  EXPECT_EQ(cache_.artifact_hash(request_returning(1), toolchain_), hash);
  EXPECT_NE(cache_.artifact_hash(request_returning(2), toolchain_), hash);
  ArtifactRequest other_meta = base;
  other_meta.meta["isa"] = "avx2";
  EXPECT_NE(cache_.artifact_hash(other_meta, toolchain_), hash);
  Toolchain other_compiler = toolchain_;
  other_compiler.identity += " -O2";
  EXPECT_NE(cache_.artifact_hash(base, other_compiler), hash);
}

TEST_F(ArtifactCacheTest, TruncatedLibraryIsRebuilt) {
  const std::string library = build(request_returning(5));
  ASSERT_EQ(::truncate(library.c_str(), static_cast<off_t>(fs::file_size(library) / 2)), 0);
  build(request_returning(5));
  EXPECT_EQ(counters_.rebuilds, 1);
  EXPECT_EQ(counters_.compiles, 2);
  EXPECT_EQ(call_kernel_value(library), 5);
}

TEST_F(ArtifactCacheTest, LibraryCorruptedInPlaceIsRebuilt) {
  const std::string library = build(request_returning(6));
  std::string bytes = testing::read_text(library);
  bytes[bytes.size() / 2] ^= 0x5a;  // same size, different content
  testing::write_text(library, bytes);
  build(request_returning(6));
  EXPECT_EQ(counters_.rebuilds, 1);
  EXPECT_EQ(counters_.cache_hits, 0);
  EXPECT_EQ(call_kernel_value(library), 6);
}

// A library planted in place of ours (a symlink to another library, or a file that another user
// owns or may write) is never reused: the entry is rebuilt as a regular file of ours.
TEST_F(ArtifactCacheTest, PlantedLibraryIsRebuilt) {
  const std::string library = build(request_returning(9));
  const std::string planted = dir_.file("planted.so");
  fs::copy_file(library, planted);
  fs::remove(library);
  fs::create_symlink(planted, library);
  build(request_returning(9));
  EXPECT_FALSE(fs::is_symlink(library));
  ::chmod(library.c_str(), 0666);
  build(request_returning(9));
  EXPECT_EQ(counters_.rebuilds, 2);
  struct stat info {};
  ASSERT_EQ(::lstat(library.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & (S_IWGRP | S_IWOTH), 0u);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(library.c_str(), 65534, 65534), 0);
    build(request_returning(9));
    EXPECT_EQ(counters_.rebuilds, 3);
    ASSERT_EQ(::lstat(library.c_str(), &info), 0);
    EXPECT_EQ(info.st_uid, 0u);
  }
  EXPECT_EQ(call_kernel_value(library), 9);
}

TEST_F(ArtifactCacheTest, GarbageMetaIsRebuilt) {
  const ArtifactRequest request = request_returning(8);
  build(request);
  testing::write_text(cache_.entry_dir(request, toolchain_) + "/meta.json", "{ not json");
  build(request);
  EXPECT_EQ(counters_.rebuilds, 1);
  EXPECT_EQ(counters_.compiles, 2);
  EXPECT_NO_THROW(nlohmann::json::parse(testing::read_text(cache_.entry_dir(request, toolchain_) + "/meta.json")));
}

TEST_F(ArtifactCacheTest, MetaWithoutLibraryChecksumIsRebuilt) {
  const ArtifactRequest request = request_returning(15);
  build(request);
  const std::string meta_path = cache_.entry_dir(request, toolchain_) + "/meta.json";
  auto meta = nlohmann::json::parse(testing::read_text(meta_path));
  meta.erase("library_sha256");
  testing::write_text(meta_path, meta.dump());
  build(request);
  EXPECT_EQ(counters_.rebuilds, 1);
  EXPECT_EQ(counters_.cache_hits, 0);
}

// A build killed after the rename of kernel.so but before meta.json: never trusted.
TEST_F(ArtifactCacheTest, LibraryWithoutMetaIsRebuilt) {
  const ArtifactRequest request = request_returning(9);
  build(request);
  fs::remove(cache_.entry_dir(request, toolchain_) + "/meta.json");
  build(request);
  EXPECT_EQ(counters_.rebuilds, 1);
  EXPECT_EQ(counters_.cache_hits, 0);
}

TEST_F(ArtifactCacheTest, LeftoversOfAnInterruptedBuildAreRemoved) {
  const ArtifactRequest request = request_returning(10);
  const std::string dir = cache_.entry_dir(request, toolchain_);
  fs::create_directories(dir);
  testing::write_text(dir + "/kernel.so.tmp.99999.0", "half a library");
  build(request);
  EXPECT_FALSE(fs::exists(dir + "/kernel.so.tmp.99999.0"));
  EXPECT_EQ(counters_.rebuilds, 0);  // nothing had been published yet
}

TEST_F(ArtifactCacheTest, CompileErrorPublishesNothing) {
  ArtifactRequest broken = request_returning(11);
  broken.source = "extern \"C\" int kernel_value() { return missing_symbol; }\n";
  try {
    build(broken);
    FAIL() << "expected UserError";
  } catch (const UserError& error) {
    EXPECT_THAT(error.what(), HasSubstr("missing_symbol"));
  }
  const std::string dir = cache_.entry_dir(broken, toolchain_);
  EXPECT_FALSE(fs::exists(dir + "/kernel.so"));
  EXPECT_FALSE(fs::exists(dir + "/meta.json"));
}

TEST_F(ArtifactCacheTest, NewRootIsPrivate) {
  struct stat info {};
  ASSERT_EQ(::stat(root_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
}

TEST_F(ArtifactCacheTest, WorldWritableRootIsRefused) {
  const std::string open_root = dir_.file("open");
  fs::create_directory(open_root);
  ::chmod(open_root.c_str(), 0777);
  try {
    ArtifactCache cache(open_root);
    FAIL() << "expected UserError";
  } catch (const UserError& error) {
    EXPECT_THAT(error.what(), HasSubstr("must not be writable by group or others"));
    EXPECT_THAT(error.what(), HasSubstr(open_root));
  }
}

// As root the test hands a directory to "nobody"; otherwise a root-owned one serves.
TEST_F(ArtifactCacheTest, RootOwnedBySomeoneElseIsRefused) {
  std::string foreign = "/usr/share";
  if (::geteuid() == 0) {
    foreign = dir_.file("foreign");
    fs::create_directory(foreign);
    ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
  }
  try {
    ArtifactCache cache(foreign);
    FAIL() << "expected UserError";
  } catch (const UserError& error) {
    EXPECT_THAT(error.what(), HasSubstr("must be owned by the current user"));
  }
}

TEST_F(ArtifactCacheTest, KernelNameCannotEscapeTheRoot) {
  ArtifactRequest request = request_returning(12);
  request.kernel_name = "../escape";
  EXPECT_THROW(build(request), InternalError);
}

TEST_F(ArtifactCacheTest, ConcurrentThreadsCompileOnce) {
  toolchain_ = toolchain_with_delay("1");
  std::vector<std::jthread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&] { build(request_returning(13)); });
  threads.clear();  // joins
  EXPECT_EQ(counters_.compiles, 1);
  EXPECT_EQ(counters_.cache_hits, 3);
  EXPECT_EQ(compiler_runs(), 1u);
}

// Both children wait on a pipe until the parent closes it, so they start together; the wrapper's
// one-second sleep keeps the first compilation open while the second arrives.
TEST_F(ArtifactCacheTest, TwoProcessesBuildingTheSameEntryCompileOnce) {
  const Toolchain slow = toolchain_with_delay("1");
  const ArtifactRequest request = request_returning(14);
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 2; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(gate[1]);
      char ignored;
      (void)!::read(gate[0], &ignored, 1);
      try {
        CacheCounters counters;
        std::string library = ArtifactCache(root_).get_or_build(request, slow, counters).path;
        ::_exit(call_kernel_value(library) == 14 ? 0 : 1);
      } catch (...) {
        ::_exit(2);
      }
    }
    children.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]);
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  EXPECT_EQ(compiler_runs(), 1u);
}

TEST(ArtifactCacheRoot, DefaultRootFollowsEnvironment) {
  {
    testing::ScopedEnv dir("TILEFUSE_CACHE_DIR", "/somewhere/cache");
    EXPECT_EQ(ArtifactCache::default_root(), "/somewhere/cache");
  }
  {
    testing::ScopedEnv dir("TILEFUSE_CACHE_DIR", std::nullopt);
    testing::ScopedEnv xdg("XDG_CACHE_HOME", "/home/u/.xdg-cache");
    EXPECT_EQ(ArtifactCache::default_root(), "/home/u/.xdg-cache/tilefuse");
  }
  {
    testing::ScopedEnv dir("TILEFUSE_CACHE_DIR", std::nullopt);
    testing::ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
    testing::ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(ArtifactCache::default_root(), "/home/u/.cache/tilefuse");
  }
  {
    // A relative XDG_CACHE_HOME is invalid by the XDG spec and ignored.
    testing::ScopedEnv dir("TILEFUSE_CACHE_DIR", std::nullopt);
    testing::ScopedEnv xdg("XDG_CACHE_HOME", "relative/cache");
    testing::ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(ArtifactCache::default_root(), "/home/u/.cache/tilefuse");
  }
  testing::ScopedEnv dir("TILEFUSE_CACHE_DIR", "");
  EXPECT_THROW(ArtifactCache::default_root(), UserError);
}

}  // namespace
}  // namespace tilefuse::build

namespace tilefuse::build {
namespace {

// The cache root must be a real directory: a symlink (here one owned by "nobody" when the test
// runs as root) is refused even if it points at a private directory of ours.
TEST_F(ArtifactCacheTest, SymlinkedRootIsRefused) {
  const std::string target = dir_.file("real");
  fs::create_directory(target);
  ::chmod(target.c_str(), 0700);
  const std::string link = dir_.file("link");
  fs::create_directory_symlink(target, link);
  if (::geteuid() == 0) {
    ASSERT_EQ(::lchown(link.c_str(), 65534, 65534), 0);
  }
  try {
    ArtifactCache cache(link);
    FAIL() << "expected UserError";
  } catch (const UserError& error) {
    EXPECT_THAT(error.what(), HasSubstr("is a symbolic link"));
    EXPECT_THAT(error.what(), HasSubstr(link));
  }
}

// A directory above the root that another user can write to (no sticky bit) could swap the
// root for another one after the check: refused. With the sticky bit (like /tmp) it is fine.
TEST_F(ArtifactCacheTest, RootUnderADirectoryOthersCanChangeIsRefused) {
  const std::string open_dir = dir_.file("shared");
  fs::create_directory(open_dir);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0777), 0);
  try {
    ArtifactCache cache(open_dir + "/cache");
    FAIL() << "expected UserError";
  } catch (const UserError& error) {
    EXPECT_THAT(error.what(), HasSubstr("which another user can change"));
    EXPECT_THAT(error.what(), HasSubstr(open_dir));
  }
  ASSERT_EQ(::chmod(open_dir.c_str(), 01777), 0);
  EXPECT_NO_THROW(ArtifactCache cache(open_dir + "/cache"));
}

TEST_F(ArtifactCacheTest, RootUnderAForeignSymlinkIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to hand a symlink to another user";
  const std::string target = dir_.file("elsewhere");
  fs::create_directory(target);
  const std::string link = dir_.file("foreign_link");
  fs::create_directory_symlink(target, link);
  ASSERT_EQ(::lchown(link.c_str(), 65534, 65534), 0);
  EXPECT_THROW(ArtifactCache cache(link + "/cache"), UserError);
}

// The compiler's -march=native target is part of every key: a cache filled on one CPU is
// rebuilt, never loaded, on a CPU whose features differ.
TEST_F(ArtifactCacheTest, TargetEntersTheKey) {
  Toolchain avx512 = toolchain_;
  avx512.set_target("AVX512F AVX2 FMA | macros-sha256=fake-zen4");
  Toolchain avx2 = toolchain_;
  avx2.set_target("AVX2 FMA | macros-sha256=fake-haswell");
  const ArtifactRequest request = request_returning(21);
  EXPECT_NE(cache_.artifact_hash(request, avx512), cache_.artifact_hash(request, avx2));
  cache_.get_or_build(request, avx512, counters_);
  cache_.get_or_build(request, avx2, counters_);
  cache_.get_or_build(request, avx512, counters_);
  EXPECT_EQ(counters_.compiles, 2);
  EXPECT_EQ(counters_.cache_hits, 1);
  EXPECT_THAT(toolchain_.identity, HasSubstr("target"));
  EXPECT_FALSE(toolchain_.target.empty());
}

}  // namespace
}  // namespace tilefuse::build
