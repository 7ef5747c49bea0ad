// The result of fusion planning: the graph as an ordered list of steps, most of them generated
// kernels (FusedKernel), plus library calls (MatMul/Gemm through the BLAS), views (Reshape and
// friends: no data moves) and host ops (run by the reference kernels until code generation
// covers them).
#pragma once

#include <string>
#include <vector>

#include "fusion/iteration_space.h"
#include "ir/graph.h"

namespace tilefuse::fusion {

struct FusedKernel {
  std::string name;                    // readable: "fused_sub_exp_reducesum_3"
  std::vector<Node*> nodes;            // topological order
  std::vector<Value*> inputs;          // read from memory: produced outside the kernel
  std::vector<Value*> outputs;         // written to memory: used outside or graph outputs
  std::vector<std::string> patterns;   // the patterns whose matches merged it, in merge order
  IterationSpace space;

  // Compulsory traffic: every input read once, every output written once.
  Dim bytes_read() const;
  Dim bytes_written() const;
};

enum class StepKind { Kernel, LibraryCall, View, Host };
std::string_view step_kind_name(StepKind kind);

struct PlanStep {
  StepKind kind = StepKind::Kernel;
  FusedKernel kernel;      // for Kernel
  Node* node = nullptr;    // for the other kinds
};

struct FusionPlan {
  std::string graph_name;
  std::vector<PlanStep> steps;

  int64_t num_kernels() const;       // generated kernels + library calls + host ops: launches
  Dim compulsory_bytes() const;      // over all steps except views
};

// Compulsory bytes of one step: what it reads plus what it writes.
Dim step_bytes(const PlanStep& step);

// A human-readable dump; stable, for golden tests and `inspect`.
std::string print_plan(const FusionPlan& plan);

}  // namespace tilefuse::fusion
