// Runs a planned graph step by step on the thread team: generated kernels, library calls (GEMM,
// convolution, the runtime's own host steps), views as aliases, and any other op on the
// reference kernels. This is the run half of the executor; where the kernels come from (built,
// cached, tuned on their first launch) is the compile pipeline's business (driver/executor.h),
// behind KernelProvider.
//
// Intermediates live in one arena planned by liveness. A context (arena, per-worker scratch,
// bound buffers, launch data) is prepared once per set of input shapes; concurrent runs each
// check out a context of their own, and a new one is prepared when all of a shape's are busy.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fusion/fusion_plan.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "runtime/kernel_library.h"
#include "runtime/library_call.h"
#include "runtime/step_profile.h"
#include "runtime/superkernel_mode.h"
#include "runtime/superkernel_schedule.h"
#include "runtime/thread_team.h"

namespace tilefuse::runtime {

// What a kernel step launches: the library chosen for it (null while TopN candidates await
// their measurement on the first launch) and how many workers a launch may use.
struct StepKernel {
  std::shared_ptr<KernelLibrary> library;
  std::vector<std::shared_ptr<KernelLibrary>> candidate_libraries;
  int block_dim = 0;  // workers per launch; 0 = every worker

  bool needs_tuning() const { return library == nullptr; }
};

// Where the kernel steps' libraries come from.
class KernelProvider {
 public:
  virtual ~KernelProvider() = default;
  // Per step, the kernel to launch at `symbols` (per step, the values of its kernel's symbols);
  // null for steps that are not kernels. May build kernels it has not seen before.
  virtual std::vector<StepKernel*> kernels_for(const std::vector<std::vector<int64_t>>& symbols) = 0;
  // The first launch of a kernel that needs_tuning(): measure its candidates on these buffers
  // (views of its inputs, then its outputs) and set kernel.library to the winner.
  virtual void tune(size_t step, StepKernel& kernel, const std::vector<Tensor>& buffers,
                    const std::vector<int64_t>& symbols) = 0;
  // The SuperKernel choice measured earlier for the runs `key` describes (the steps, their
  // shapes, the team), if one was recorded (the runner's text, checked by the runner); and
  // recording one. A provider without a cache keeps nothing: each process measures on its first run.
  virtual std::optional<std::string> recorded_superkernel(const std::string& /*key*/) { return std::nullopt; }
  virtual void record_superkernel(const std::string& /*key*/, const std::string& /*choice*/) {}
};

// Per kernel step, what its launches pass: the buffer values (inputs, then outputs) and the
// names of the symbols whose values it takes, in order.
struct KernelStep {
  std::vector<const Value*> buffers;
  std::vector<std::string> symbols;
};

struct RunOptions {
  StepProfile* profile = nullptr;  // non-null: every run records each step's time per worker there
  // Shapes whose contexts are kept; the least recently run is dropped beyond this, so a model fed
  // ever new sequence lengths does not grow without end.
  size_t max_prepared_shapes = 16;
  // One parallel region per run (superkernel_schedule.h), one fork/join per step, or whichever
  // measured faster on a shape's first tuned run.
  SuperKernelMode superkernel = SuperKernelMode::automatic;
  // With `on`: steps estimated below this run on one worker (superkernel_schedule.h); 0 splits
  // every step over every worker it can use, as the tests do to exercise the synchronisation.
  double superkernel_floor_ns = kDefaultParallelFloorNs;
  // A row chain's band (fusion/row_chains.h): the bytes of its intermediates' rows a worker
  // keeps at once, half of its L2.
  int64_t row_chain_band_bytes = int64_t{1} << 20;
};

struct RunCounters {
  std::atomic<int64_t> runs{0};
  std::atomic<int64_t> prepared_shapes{0};  // shapes held now (at most max_prepared_shapes)
  std::atomic<int64_t> evicted_shapes{0};   // shapes dropped, least recently run first
  std::atomic<int64_t> barriers{0};         // team synchronisations of the last run (fork/joins, GEMMs' included)
  std::atomic<int64_t> superkernel{0};      // 1: the last run went through one parallel region
  std::atomic<int64_t> region_waits{0};     // waits for earlier steps scheduled in the last run's region
};

// How the most recent run of a shape went through the SuperKernel: the choice ("off", "off (one
// worker)", "on floor_ns=<n>", or "unmeasured": not run yet, or kernels still to be tuned) and,
// when it ran in a region, each scheduled step with its workers and the earlier steps it waits
// for (by name).
struct SuperKernelReport {
  struct Step {
    std::string name;
    int workers = 1;
    std::vector<std::string> waits_for;
  };
  std::string choice = "unmeasured";
  std::vector<Step> steps;
};

class StepRunner {
 public:
  // Everything passed by reference outlives the runner. `kernel_steps`, `library_calls` and
  // `shape_only` are per step of `plan` (empty, null or false for steps of other kinds).
  StepRunner(const Graph& graph, const fusion::FusionPlan& plan, std::vector<KernelStep> kernel_steps,
             const std::vector<std::unique_ptr<LibraryCall>>& library_calls, std::vector<bool> shape_only,
             ThreadTeam& team, KernelProvider& provider, const RunOptions& options, RunCounters& counters);
  ~StepRunner();
  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  // Runs with inputs by graph input name (already validated against the graph's types). Safe to
  // call from several threads at once. `outputs` are reused when their types already fit, else
  // reallocated; an output tensor whose memory overlaps an input or another output is replaced
  // by a tensor of its own (never written in place).
  void run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs);

  // The SuperKernel of the shape run last (empty before any run; call it between runs).
  SuperKernelReport superkernel_report() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tilefuse::runtime
