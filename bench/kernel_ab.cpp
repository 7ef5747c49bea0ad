// A/B timing of generated kernels: loads kernel libraries (kernel.so of a cache entry, or a
// kernel.cpp from `--debug-dir` edited by hand and compiled like a kernel) and times them on two
// persistent threads, round-robin over the variants, so that every variant sees the same machine
// state. This VM's memory bandwidth drifts by 10-20% over minutes; separate runs cannot show
// differences of that size, interleaved ones can.
//
//   g++ -std=c++20 -O2 bench/kernel_ab.cpp -o build/kernel_ab
//   c++ -std=c++20 -O3 -march=native -fno-math-errno -fPIC -shared -I <cache>/include/<fp> A.cpp -o A.so
//   build/kernel_ab 33554432,4096,1,1,1,33554432 ./A.so ./B.so      (bias+GELU's 6 buffers)
//   build/kernel_ab --symbols=8 2097152,2097152 ./static.so ./jit.so  (a jit kernel's symbol values)
//
// The first argument lists the kernel's buffers in order: a number is that many floats, filled
// with uniform values in [-1, 1); a number with a `b` suffix is that many bools, random 0 or 1
// (a mask). Buffers of 4 MiB or more get transparent huge pages, as tilefuse's tensors do.
// Prints min and median ms over 13 interleaved rounds.
#include <dlfcn.h>
#include <sys/mman.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using NumBlocksFn = int64_t (*)(const int64_t*, int64_t);
using RunBlocksFn = void (*)(void* const*, const int64_t*, int64_t, int64_t, int64_t, void*);

struct Variant {
  std::string path;
  NumBlocksFn num_blocks;
  RunBlocksFn run_blocks;
  std::vector<double> ms;
};

std::vector<void*> random_buffers(const std::string& sizes) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<void*> buffers;
  std::stringstream list(sizes);
  for (std::string item; std::getline(list, item, ',');) {
    const bool mask = item.back() == 'b';
    const size_t n = std::stoul(item), bytes = std::max<size_t>(64, mask ? n : 4 * n);
    constexpr size_t kHugePage = size_t{2} << 20;
    void* p = nullptr;
    if (posix_memalign(&p, bytes >= 2 * kHugePage ? kHugePage : 64, bytes) != 0) std::abort();
    if (bytes >= 2 * kHugePage) madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
    for (size_t i = 0; i < n; ++i) {
      if (mask) static_cast<bool*>(p)[i] = uniform(rng) > 0.0f;
      else static_cast<float*>(p)[i] = uniform(rng);
    }
    buffers.push_back(p);
  }
  return buffers;
}

}  // namespace

int main(int argc, char** argv) {
  // Symbol values for jit kernels (static kernels ignore them).
  std::vector<int64_t> symbols(8, 1);
  if (argc > 1 && std::string(argv[1]).rfind("--symbols=", 0) == 0) {
    std::stringstream list(argv[1] + 10);
    std::string item;
    for (size_t i = 0; std::getline(list, item, ',') && i < symbols.size(); ++i) symbols[i] = std::stoll(item);
    ++argv, --argc;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s [--symbols=N,...] BUFFER_SIZES KERNEL.so [KERNEL.so ...]\n", argv[0]);
    return 2;
  }
  const std::vector<void*> buffers = random_buffers(argv[1]);
  std::vector<Variant> variants;
  for (int a = 2; a < argc; ++a) {
    void* lib = dlopen(argv[a], RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      std::fprintf(stderr, "%s\n", dlerror());
      return 1;
    }
    variants.push_back({argv[a], reinterpret_cast<NumBlocksFn>(dlsym(lib, "tf_num_blocks")),
                        reinterpret_cast<RunBlocksFn>(dlsym(lib, "tf_run_blocks")), {}});
  }
  // Each thread runs half of the blocks, as the runtime's thread team does with 2 workers.
  std::vector<double> scratch[2] = {std::vector<double>(1 << 20), std::vector<double>(1 << 20)};
  auto run_half = [&](const Variant& v, int half) {
    const int64_t blocks = v.num_blocks(symbols.data(), 2);
    v.run_blocks(buffers.data(), symbols.data(), 2, half * blocks / 2, (half + 1) * blocks / 2, scratch[half].data());
  };
  std::barrier sync(2);
  const Variant* current = nullptr;
  bool done = false;
  std::thread helper([&] {
    for (sync.arrive_and_wait(); !done; sync.arrive_and_wait()) {
      run_half(*current, 1);
      sync.arrive_and_wait();
    }
  });
  for (int round = 0; round < 15; ++round) {
    for (Variant& v : variants) {
      current = &v;
      const auto start = std::chrono::steady_clock::now();
      sync.arrive_and_wait();
      run_half(v, 0);
      sync.arrive_and_wait();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      if (round >= 2) v.ms.push_back(ms);  // two warm-up rounds: page faults, caches
    }
  }
  done = true;
  sync.arrive_and_wait();
  helper.join();
  for (Variant& v : variants) {
    std::sort(v.ms.begin(), v.ms.end());
    std::printf("%-40s min %7.2f ms  median %7.2f ms\n", v.path.c_str(), v.ms.front(), v.ms[v.ms.size() / 2]);
  }
}
