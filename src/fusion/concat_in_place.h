// Concatenations without a copy. A Concat whose inputs are contiguous blocks of its result
// (every dim before its axis is 1: a channel concat at batch 1, torch.cat on dim 0) and are each
// written by a generated kernel or a library call of the plan becomes a view: those steps write
// their results straight into the Concat's, each at its offset (the runtime's step runner places
// them there), and the copy is gone. `torch.cat([a.sigmoid(), b * 2]).relu() + 1` went from four
// steps to three.
#pragma once

#include <cstdint>

#include "fusion/fusion_plan.h"

namespace tilefuse::fusion {

// Makes every such Concat step a view; returns how many.
int place_concats_in_place(FusionPlan& plan);

// Whether `step` is a Concat made a view: its inputs live inside its result.
bool is_concat_in_place(const PlanStep& step);

// Elements from the start of a Concat's result to its input `input` (for a Concat in place).
int64_t concat_input_offset(const Node& concat, size_t input);

}  // namespace tilefuse::fusion
