// Drops the kernel taps of a convolution that read only padding: where, along a spatial axis, a
// tap's input coordinate falls outside the input for every output position, the tap only ever
// multiplies zeros. The kernel is cut to the taps that read the input at least once, and the pads
// shrink by what was cut, so every output reads what it read before. DeepLab's ASPP convolves a
// feature map of 4 x 4 (64 x 64 images) or 14 x 14 (224 x 224) with 3 x 3 kernels dilated by 12,
// 24 and 36: only the centre tap ever lands on the map, so nine products in ten were of zeros;
// they become 1 x 1 convolutions.
//
// Conditions: a Conv with a constant weight, static spatial input sizes, auto_pad NOTSET, and
// pads that stay non-negative once cut (a tap that reads the input only beyond a cut tap never
// allows that anyway); a spatial axis whose every tap reads the input is left as it is.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns how many convolutions lost taps; shapes are re-inferred.
int trim_conv_taps(Graph& graph);

}  // namespace tilefuse::passes
