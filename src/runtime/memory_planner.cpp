#include "runtime/memory_planner.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <utility>

#include "ir/checked_size.h"
#include "ir/error.h"
#include "ir/memory_budget.h"

namespace tilefuse::runtime {
namespace {

constexpr size_t kAlignment = 64;  // a cache line, and what AVX-512 aligned loads want
constexpr size_t kPageBytes = 4096;
constexpr size_t kHugePageBytes = size_t{2} << 20;

size_t round_up(size_t value, size_t multiple) {
  return checked_add_bytes(value, multiple - 1, "the tensor arena") / multiple * multiple;
}

bool lifetimes_overlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

struct Placed {
  size_t offset;
  size_t end;
};

// Lowest 64-byte aligned offset where `bytes` fits between the (offset-sorted) `busy` ranges.
size_t first_fit(std::vector<Placed>& busy, size_t bytes) {
  std::sort(busy.begin(), busy.end(), [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
  size_t offset = 0;
  for (const Placed& range : busy) {
    if (offset + bytes <= range.offset) break;
    offset = std::max(offset, round_up(range.end, kAlignment));
  }
  return offset;
}

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests) {
  for (const BufferRequest& request : requests) {
    if (request.last_step < request.first_step) {
      fail_internal("buffer lifetime ends at step {} before it starts at step {}", request.last_step,
                    request.first_step);
    }
  }
  // Largest first: big buffers claim the low offsets, small ones fill the gaps they leave.
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].bytes > requests[b].bytes; });

  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> placed;
  std::vector<Placed> busy;
  for (size_t index : order) {
    const BufferRequest& request = requests[index];
    busy.clear();
    for (size_t other : placed) {
      if (lifetimes_overlap(request, requests[other])) {
        busy.push_back({plan.offsets[other], plan.offsets[other] + requests[other].bytes});
      }
    }
    plan.offsets[index] = first_fit(busy, request.bytes);
    plan.arena_bytes =
        std::max(plan.arena_bytes, checked_add_bytes(plan.offsets[index], request.bytes, "the tensor arena"));
    placed.push_back(index);
  }
  return plan;
}

Arena::Arena(size_t bytes) {
  if (bytes == 0) return;
  // Large arenas are 2 MiB aligned so the kernel can back them with transparent huge pages.
  const bool huge = bytes >= kHugePageBytes;
  const size_t alignment = huge ? kHugePageBytes : kPageBytes;
  const size_t size = round_up(bytes, alignment);
  const size_t reserved = size + (huge ? kHugePageBytes : 0);
  reserve_memory(size, "the tensor arena");
  void* mapping = mmap(nullptr, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) {
    release_memory(size);
    fail_user("cannot allocate a tensor arena of {} bytes: {}", size, std::strerror(errno));
  }
  auto* start = static_cast<uint8_t*>(mapping);
  auto* aligned = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<uintptr_t>(start), alignment));
  // Give back the slack around the aligned range.
  if (aligned > start) munmap(start, aligned - start);
  if (const size_t tail = (start + reserved) - (aligned + size); tail > 0) munmap(aligned + size, tail);
  if (huge) madvise(aligned, size, MADV_HUGEPAGE);  // advisory: THP may be off, which is fine
  // Pre-fault now: first-touch page faults are slow on virtual machines and must not land in an
  // inference.
  for (size_t offset = 0; offset < size; offset += kPageBytes) aligned[offset] = 0;
  data_ = aligned;
  bytes_ = size;
}

Arena::~Arena() {
  if (data_ == nullptr) return;
  munmap(data_, bytes_);
  release_memory(bytes_);
}

Arena::Arena(Arena&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

Arena& Arena::operator=(Arena&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(bytes_, other.bytes_);
  return *this;
}

}  // namespace tilefuse::runtime
