// Places a graph's intermediate tensors in one arena, reusing memory by liveness: two tensors
// share bytes only if their lifetimes (first write .. last read, in step indices) do not
// overlap. Offsets are 64-byte aligned. The arena is allocated once, so inference after the
// first does no allocation and takes no page faults.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tilefuse::runtime {

struct BufferRequest {
  size_t bytes = 0;
  int first_step = 0;  // step that writes it
  int last_step = 0;   // last step that reads it (>= first_step)
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per request
  size_t arena_bytes = 0;
};

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests);

// A 64-byte aligned, pre-faulted allocation (huge pages advised where large).
class Arena {
 public:
  Arena() = default;
  explicit Arena(size_t bytes);
  ~Arena();
  Arena(Arena&& other) noexcept;
  Arena& operator=(Arena&& other) noexcept;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace tilefuse::runtime
