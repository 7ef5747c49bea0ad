// One persistent team of worker threads per process, sized by the device limit. Kernels never
// create threads: the team splits a kernel's blocks into contiguous, balanced ranges, one per
// worker, and the calling thread works as worker 0. Workers wait for work by spinning briefly
// and then sleeping, so an idle team costs no CPU (unlike a spin-forever barrier).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace tilefuse::runtime {

class ThreadTeam {
 public:
  explicit ThreadTeam(int threads);  // threads >= 1
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const;
  // Calls fn(worker, first_block, end_block) once per worker that has blocks, in parallel, on at
  // most `max_workers` workers (0: all; a kernel's block_dim); returns when all are done. An
  // exception in any worker is rethrown here.
  void run(int64_t num_blocks, const std::function<void(int worker, int64_t first, int64_t end)>& fn,
           int max_workers = 0);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tilefuse::runtime
