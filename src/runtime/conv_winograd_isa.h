// Winograd's input and output transforms (conv_winograd.h) for each instruction set. Each is
// compiled for its ISA whatever the build's target: call it only where vector_isa() is at least
// that ISA. Both write and read the same layouts, so the driver and the GEMMs between the
// transforms are shared: the transformed input as B panels of kNR tiles, the products as rows
// of tiles.
#pragma once

#include <cstdint>

#include "runtime/conv_algorithm.h"
#include "ir/ops/fused_activation.h"

namespace tilefuse::runtime::winograd {

constexpr int kPoints = 16;  // transformed values per tile (4 x 4)

// The tiles of one image: rows x cols tiles of 2 x 2 outputs, numbered row by row.
struct TileGrid {
  int64_t rows, cols;
  int64_t count() const { return rows * cols; }
};

// A worker's share: the tiles [first, first + count) of image `image`, maps [map0, map0 + maps).
struct Item {
  int64_t image, first, count, map0, maps;
};

// Where the 16 products of an item lie: position xi's maps x tiles matrix at data + xi * stride,
// map rows `ld` apart.
struct Products {
  const float* data;
  int64_t stride, ld;
};

// FusedConv's epilogue: per-map bias, residual (the image's, in the output's layout) and
// activation; bias and residual may be null.
struct Epilogue {
  const float* bias;
  const float* residual;
  const FusedActivation& activation;
};

// V = B^T d B of the tiles [first, first + count) for every channel of one image `x`, written as
// 16 B operands (position xi at panels + xi * stride), each channels x tiles in kNR-tile panels;
// the last panel's columns past `count` are zeroed.
namespace avx512 {
void transform_input(const ConvShape& s, const TileGrid& grid, const float* x, int64_t first, int64_t count,
                     float* panels, int64_t stride);
// Y = A^T M A of the item's tiles and maps, then the epilogue, into the image's output planes.
void transform_output(const ConvShape& s, const TileGrid& grid, const Item& item, const Products& products,
                      const Epilogue& epilogue, float* out);
}  // namespace avx512

namespace avx2 {
void transform_input(const ConvShape& s, const TileGrid& grid, const float* x, int64_t first, int64_t count,
                     float* panels, int64_t stride);
void transform_output(const ConvShape& s, const TileGrid& grid, const Item& item, const Products& products,
                      const Epilogue& epilogue, float* out);
}  // namespace avx2

}  // namespace tilefuse::runtime::winograd
