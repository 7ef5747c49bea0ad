// One persistent team of worker threads per process, sized by the device limit. Kernels never
// create threads: the team splits a kernel's blocks into contiguous, balanced ranges, one per
// worker, and the calling thread works as worker 0. Workers wait for work by spinning briefly
// and then sleeping, so an idle team costs no CPU (unlike a spin-forever barrier).
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>

namespace tilefuse::runtime {

// What a team runs: a non-owning reference to any callable fn(worker, first_block, end_block).
// Unlike std::function it never allocates, so a kernel launch allocates nothing; the callable
// only has to outlive the run() call it is passed to.
class BlockTask {
 public:
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, BlockTask>)
  BlockTask(F&& fn)  // NOLINT(google-explicit-constructor): lambdas convert where a task is expected
      : object_(const_cast<void*>(static_cast<const void*>(&fn))),
        call_([](void* object, int worker, int64_t first, int64_t end) {
          (*static_cast<std::remove_reference_t<F>*>(object))(worker, first, end);
        }) {}

  void operator()(int worker, int64_t first, int64_t end) const { call_(object_, worker, first, end); }

 private:
  void* object_;
  void (*call_)(void*, int, int64_t, int64_t);
};

class ThreadTeam {
 public:
  explicit ThreadTeam(int threads);  // threads >= 1
  // The process's team of this size: every model of the same device limit shares it (the team
  // serialises concurrent runs), so a process never oversubscribes its cores with idle teams.
  static std::shared_ptr<ThreadTeam> shared(int threads);
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const;
  // Calls fn(worker, first_block, end_block) once per worker that has blocks, in parallel, on at
  // most `max_workers` workers (0: all; a kernel's block_dim); returns when all are done. An
  // exception in any worker is rethrown here.
  void run(int64_t num_blocks, BlockTask fn, int max_workers = 0);

  // How many runs started from the calling thread have synchronised the team (a fork and a join;
  // a run that one worker does alone is not counted): what a model's run pays in barriers.
  static int64_t barriers_on_this_thread();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tilefuse::runtime
