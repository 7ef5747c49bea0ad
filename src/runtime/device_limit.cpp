#include "runtime/device_limit.h"

#include <sched.h>

#include <charconv>
#include <cstdlib>
#include <thread>

#include "ir/error.h"
#include "ir/log.h"

namespace tilefuse::runtime {
namespace {

constexpr const char* kEnvVar = "TILEFUSE_NUM_THREADS";

// Strict: from_chars accepts no '+', no spaces; trailing text and overflow are errors too.
int parse_positive_env(const char* text) {
  const char* end = text + std::char_traits<char>::length(text);
  int value = 0;
  const auto [stop, error] = std::from_chars(text, end, value);
  if (error != std::errc() || stop != end || value < 1) {
    fail_user("{} must be a positive integer, got '{}'", kEnvVar, text);
  }
  return value;
}

// More workers than cores only adds contention, so a larger request is capped, not refused.
DeviceLimit capped(int threads, const char* source) {
  const int cores = hardware_cores();
  if (threads > cores) {
    logger().warn("{} = {} exceeds the {} available cores; using {} threads", source, threads, cores, cores);
    threads = cores;
  }
  return DeviceLimit{threads, true};
}

}  // namespace

int hardware_cores() {
  // The affinity mask, not the machine's core count: a container or `taskset` may give this
  // process fewer cores than the machine has.
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  const unsigned fallback = std::thread::hardware_concurrency();
  return fallback > 0 ? static_cast<int>(fallback) : 1;
}

DeviceLimit resolve_device_limit(std::optional<int> requested) {
  if (requested) {
    if (*requested < 1) fail_user("the requested thread count must be a positive integer, got {}", *requested);
    return capped(*requested, "the requested thread count");
  }
  const char* env = std::getenv(kEnvVar);
  if (env == nullptr || *env == '\0') return DeviceLimit{hardware_cores(), false};
  return capped(parse_positive_env(env), kEnvVar);
}

}  // namespace tilefuse::runtime
