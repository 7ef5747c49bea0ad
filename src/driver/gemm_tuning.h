// TopN + PGO for the GEMM engine's blockings: a MatMul, Gemm or Conv that runs on tilefuse's
// sgemm has its blocking (sgemm.h) chosen among candidates measured on its own shapes, as a
// generated kernel's tiling is, with the same autotuner (tune/autotuner.h: a child process,
// interleaved rounds, results checked against the model's choice) and the same kind of
// `optimize_tiling` record, so later runs measure nothing:
//   <cache root>/gemm_blocking/<op>_<hash>/optimize_tiling   mc=..;kc=..;nc=..;nb=.. / topn= / sha256=
//   <cache root>/gemm_blocking/<op>_<hash>/tune.lock         held while one process measures
// The hash covers the node's op, attributes and input shapes (and which are constant), the
// team's size, the caches and the vector ISA.
//
// The model's blocking (default_blocking) suits most shapes but not all: a 1024 x 3072 x 768
// MLP projection ran 13-17% faster with 96-row blocks than with the model's 516, while
// 197-row and square shapes ran slower with them.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/library_call.h"

namespace tilefuse::driver {

// The blockings worth measuring for `node`, the model's first, at most `topn`. Which block
// sizes vary depends on what the run packs: rows (mc) and depth (kc) where a weight is B, depth
// and the parts of B packed per run (kc, nb) where a convolution's weight is A.
std::vector<runtime::GemmBlocking> blocking_candidates(const Node& node, const runtime::GemmBlocking& model, int topn);

struct BlockingTuning {
  std::string cache_root;
  int topn = 1;
  int threads = 1;
  int64_t l1d_bytes = 0, l2_bytes = 0;
};

struct BlockingTuneResult {
  runtime::GemmBlocking blocking;
  bool measured = false;  // false: a valid record was reused, or there was nothing to measure
  bool reused = false;    // a valid record was reused
  bool withheld = false;  // measured while its threads waited for a CPU: not recorded (runtime/cpu_wait.h)
};

// The blocking `call` (prepared for `node`, whose shapes are all static) should run with: the
// recorded winner when a record of at least `topn` candidates exists, else the winner measured
// now on inputs of the node's shapes (constants are the real weights), recorded for next time.
// With topn 1, or a call that does not tune, the model's.
BlockingTuneResult tune_blocking(runtime::LibraryCall& call, const Node& node, const runtime::GemmBlocking& model,
                                 const BlockingTuning& tuning);

// "mc=..;kc=..;nc=..;nb=..", and back (nullopt if malformed).
std::string blocking_record(const runtime::GemmBlocking& b);
std::optional<runtime::GemmBlocking> parse_blocking_record(const std::string& text);

}  // namespace tilefuse::driver
