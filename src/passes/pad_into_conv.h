// A zero Pad in front of a convolution is the convolution's own padding: Pad(x, spatial pads,
// 0) -> Conv(pads) becomes Conv(x, pads + the Pad's), and the padded tensor is never written.
// Exporters write it so for "same" padding they compute themselves (TensorFlow converters,
// F.pad / nn.ZeroPad2d before a Conv2d); the convolution's packing then reads zeros where the
// padding is, as for its own pads.
//
// Conditions: mode constant with the value 0 (or absent), constant pads, none negative, none on
// the batch or channel axis; every reader of the padded tensor is a Conv reading it as its
// input (not its weight), with auto_pad NOTSET; the padded tensor is not a graph output.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns how many Pads were folded; shapes are re-inferred.
int fold_pads_into_convs(Graph& graph);

}  // namespace tilefuse::passes
