// A row chain's run (fusion/row_chains.h): the first product, the row kernel and the second
// product, a band of rows at a time on each worker, so that the band's rows of the first
// product's result and of the kernel's are still in that worker's L2 when the next stage reads
// them. Step by step, each of the two intermediates goes to memory and comes back: attention's
// scores and probabilities, 54 MB each per layer of Whisper's encoder.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "runtime/sgemm.h"
#include "runtime/thread_team.h"

namespace tilefuse::runtime {

// Runs the kernel's rows [row0, row1) on `worker` (row r is row r % m of batch r / m), reading
// the first product's rows from `x` and writing its result's rows to `y`, row0's first in each,
// L floats apart: a worker's band buffers, the same memory band after band, so that it stays in
// L2 (the whole tensors' bands, each touched once, would be read from memory before they are
// written, and written back after).
using KernelRows = std::function<void(int worker, int64_t row0, int64_t row1, const float* x, float* y)>;

// Whether the products line up with `kernel_rows` rows of the kernel: as many batches of m rows
// each, the first product's C and the second's A contiguous [batches * m, L] matrices (row r of
// batch i at (i * m + r) * L), neither A packed ahead.
bool row_chain_fits(std::span<const GemmProblem> first, std::span<const GemmProblem> second, int64_t kernel_rows);

// Runs the chain on the team (row_chain_fits must hold). Each worker packs the B operands of the
// batches it works on once, then takes its bands in turn: first product, kernel, second
// product. A band holds the rows whose two intermediate rows fill at most `band_bytes`.
void run_row_chain(ThreadTeam& team, std::span<const GemmProblem> first, std::span<const GemmProblem> second,
                   const KernelRows& kernel, const GemmBlocking& first_blocking,
                   const GemmBlocking& second_blocking, int64_t band_bytes);

}  // namespace tilefuse::runtime
