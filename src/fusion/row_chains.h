// Row chains: a product whose rows a row kernel turns into the rows of the next product's A,
// run a band of rows at a time so that neither intermediate leaves the cache. Attention is the
// case that matters: scores = Q K^T, probabilities = softmax(scale * scores + mask) row by row,
// out = probabilities V. Step by step, the scores and the probabilities (heads x seq x seq
// floats: 54 MB a layer for Whisper's 1500 positions) are each written to memory and read back;
// in a chain each worker computes a band of score rows into its L2, the kernel turns them into
// probabilities there, and the second product reads them from there (runtime: step_runner's
// run_row_chain).
//
// Conditions, all on static shapes: the first product is a MatMul or FusedMatMul writing f32 X
// [..., M, L] with contiguous rows, read only by the kernel; the kernel reduces over X's last
// axis only, reads X and writes its one output Y (X's shape, f32) at contiguous strides, and
// gathers nothing; Y is read only by the second product, as its A, untransposed. X must be at
// least `min_bytes`: a smaller one stays in cache between steps anyway.
//
// The chain's steps are made consecutive (steps between them that do not read X or Y, such as
// the projection of V, move before the first product) and the kernel is marked row_by_row.
#pragma once

#include <cstdint>

#include "fusion/fusion_plan.h"

namespace tilefuse::fusion {

// The smallest intermediate worth chaining: beyond what two cores' L2 keep between steps.
inline constexpr int64_t kMinRowChainBytes = int64_t{4} << 20;

// Finds the chains of `plan`, reorders its steps and records them in plan.row_chains; returns
// how many.
int chain_rows(FusionPlan& plan, const Graph& graph, int64_t min_bytes = kMinRowChainBytes);

}  // namespace tilefuse::fusion
