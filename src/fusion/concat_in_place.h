// Concatenations without a copy: a Concat whose inputs are written where its result keeps them
// becomes a view. Two ways:
//   - blocks: where every dim before the axis is 1 (a channel concat at batch 1, torch.cat on
//     dim 0), each input is a contiguous block of the result; each input written by a kernel or a
//     library call then lives at its block (the step runner places it there), and its producer
//     writes it as it always did. `torch.cat([a.sigmoid(), b * 2]).relu() + 1`: four steps -> 3.
//   - strided parts: on an inner axis (torch.cat on the last dim), each input is written by a
//     generated kernel that has no other reader for it (one kernel may write several parts, each
//     through an access of its own); that kernel then stores its part straight
//     into the result, at the result's strides from the part's offset (its output access). The
//     input's bytes are the whole result's: it is never a tensor of its own.
// A Concat whose inputs are a run of consecutive blocks of another Concat in place is then a view
// of those bytes: in a DenseNet block, layer k's Concat is the first k blocks of the block's last
// Concat, so no layer copies the features before it.
#pragma once

#include <cstdint>

#include "fusion/fusion_plan.h"

namespace tilefuse::fusion {

// Makes every such Concat step of `graph`'s plan a view; returns how many.
int place_concats_in_place(FusionPlan& plan, const Graph& graph);

// Whether `step` is a Concat made a view: its inputs live inside its result.
bool is_concat_in_place(const PlanStep& step);

// For a Concat in place: whether its inputs are strided parts (else contiguous blocks).
bool concat_parts_strided(const Node& concat);

// For a Concat in place: elements from the start of its result to where input `input`'s bytes
// begin: its block's start, or 0 for a strided part (its kernel's access holds the offset).
int64_t concat_input_offset(const Node& concat, size_t input);

// For a Concat view at `step`: the Concat in place whose blocks hold its inputs as a run (its
// result is then a view of those bytes), or nullptr when its inputs live inside its own result.
const Node* enclosing_concat(const FusionPlan& plan, size_t step);

// Elements from the start of `outer`'s result to where `inner`'s run of its inputs begins.
int64_t enclosing_concat_offset(const Node& inner, const Node& outer);

}  // namespace tilefuse::fusion
