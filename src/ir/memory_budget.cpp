#include "ir/memory_budget.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "ir/checked_size.h"
#include "ir/error.h"

namespace tilefuse {
namespace {

std::atomic<size_t> g_reserved{0};
std::atomic<size_t> g_cap{0};  // 0: not set yet
std::once_flag g_cap_from_environment;

size_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return kMaxTensorBytes;
  return static_cast<size_t>(pages) * static_cast<size_t>(page_size);
}

std::optional<double> suffix_scale(std::string_view suffix) {
  std::string s;
  for (char c : suffix) s += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (s.empty() || s == "B") return 1.0;
  const std::string units = "KMGT";
  const size_t power = units.find(s[0]);
  if (power == std::string::npos) return std::nullopt;
  const std::string rest = s.substr(1);
  if (!rest.empty() && rest != "B" && rest != "IB") return std::nullopt;
  return std::ldexp(1.0, 10 * static_cast<int>(power + 1));
}

std::string human_bytes(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 6) {
    value /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

}  // namespace

size_t parse_memory_size(std::string_view text, std::string_view source) {
  size_t digits_end = 0;
  while (digits_end < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits_end])) || text[digits_end] == '.')) {
    ++digits_end;
  }
  const std::string number(text.substr(0, digits_end));
  const std::optional<double> scale = suffix_scale(text.substr(digits_end));
  char* end = nullptr;
  const double value = number.empty() ? -1.0 : std::strtod(number.c_str(), &end);
  if (!scale || number.empty() || end != number.c_str() + number.size() || !(value > 0.0) ||
      value * *scale > static_cast<double>(kMaxTensorBytes)) {
    fail_user("{} is '{}': it must be a positive byte count such as 4000000000, 512M, 8G or 1.5GiB (at most 2^62)",
              source, text);
  }
  return static_cast<size_t>(value * *scale);
}

size_t max_memory() {
  std::call_once(g_cap_from_environment, [] {
    if (g_cap.load() != 0) return;
    const char* env = std::getenv("TILEFUSE_MAX_MEMORY");
    size_t cap = env != nullptr ? parse_memory_size(env, "TILEFUSE_MAX_MEMORY") : physical_memory();
    size_t unset = 0;
    g_cap.compare_exchange_strong(unset, cap);
  });
  return g_cap.load();
}

void set_max_memory(size_t bytes) {
  if (bytes == 0) fail_user("the memory limit must be positive");
  g_cap.store(bytes);
}

size_t reserved_memory() { return g_reserved.load(); }

bool try_reserve_memory(size_t bytes) {
  const size_t cap = max_memory();
  size_t current = g_reserved.load();
  do {
    if (bytes > cap || current > cap - bytes) return false;
  } while (!g_reserved.compare_exchange_weak(current, current + bytes));
  return true;
}

bool memory_available(size_t bytes) {
  const size_t cap = max_memory();
  const size_t current = g_reserved.load();
  return bytes <= cap && current <= cap - bytes;
}

void reserve_memory(size_t bytes, std::string_view what) {
  if (try_reserve_memory(bytes)) return;
  const size_t cap = max_memory();
  const size_t left = cap - std::min(cap, g_reserved.load());
  fail_user("{} needs {} ({} bytes), but only {} of the memory limit of {} are left; the limit is "
            "TILEFUSE_MAX_MEMORY or --max-memory (default: physical memory)",
            what, human_bytes(bytes), bytes, human_bytes(left), human_bytes(cap));
}

void release_memory(size_t bytes) { g_reserved.fetch_sub(bytes); }

void require_memory(size_t bytes, std::string_view what) {
  if (memory_available(bytes)) return;
  reserve_memory(bytes, what);  // throws, unless memory was freed meanwhile
  release_memory(bytes);
}

}  // namespace tilefuse
