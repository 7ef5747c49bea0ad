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
  // In a row chain (row_chains.h): each block is one row, and outputs are never streamed past
  // the caches, so the chain can run it on a band of rows that the next product reads from cache.
  bool row_by_row = false;

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

// Three consecutive steps that run a band of rows at a time (row_chains.h): a product, the
// kernel that turns each of its rows into a row of the next product's A, and that product.
struct RowChain {
  size_t first_product = 0, kernel = 0, second_product = 0;  // step indices
};

struct FusionPlan {
  std::string graph_name;
  std::vector<PlanStep> steps;
  std::vector<RowChain> row_chains;

  int64_t num_kernels() const;       // generated kernels + library calls + host ops: launches
  Dim compulsory_bytes() const;      // over all steps except views
};

// Compulsory bytes of one step: what it reads plus what it writes.
Dim step_bytes(const PlanStep& step);

// A human-readable dump; stable, for golden tests and `inspect`.
std::string print_plan(const FusionPlan& plan);

}  // namespace tilefuse::fusion
