#include "runtime/axis_map_call.h"

#include <algorithm>
#include <cstring>

#include "ir/error.h"
#include "ir/shape.h"
#include "reference/index_map.h"

namespace tilefuse::runtime {

namespace {

// Per output axis, the input coordinate each output coordinate reads (-1: Pad's constant).
using AxisMaps = std::vector<std::vector<int64_t>>;

// Sized for `out_shape` and emptied, keeping the capacity of earlier runs.
void reset(AxisMaps& maps, const std::vector<int64_t>& out_shape) {
  maps.resize(out_shape.size());
  for (auto& m : maps) m.clear();
}

void tile_maps(const Node& node, const std::vector<Tensor>& in, const std::vector<int64_t>& out_shape, AxisMaps& maps) {
  const Tensor& x = in[0];
  const std::vector<int64_t> repeats = in[1].to_i64_vector();
  if (static_cast<int64_t>(repeats.size()) != x.rank()) {
    fail_user("{}: repeats has {} entries for an input of rank {}", node.describe(), repeats.size(), x.rank());
  }
  reset(maps, out_shape);
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (repeats[d] < 0) fail_user("{}: repeats {} has a negative entry", node.describe(), dims_to_string(repeats));
    if (x.shape()[d] * repeats[d] != out_shape[d]) {
      fail_user("{}: {} repeated {} is not the planned output {}", node.describe(), x.summary(),
                dims_to_string(repeats), dims_to_string(out_shape));
    }
    for (int64_t p = 0; p < out_shape[d]; ++p) maps[d].push_back(p % x.shape()[d]);
  }
}

void pad_maps(const Node& node, const std::vector<Tensor>& in, const std::vector<int64_t>& out_shape, AxisMaps& maps) {
  const Tensor& x = in[0];
  const std::string mode = node.attr_string("mode", "constant");
  const std::vector<int64_t> pads = in.size() > 1 && in[1].defined() ? in[1].to_i64_vector() : node.attr_ints("pads");
  std::vector<int64_t> axes;
  if (in.size() > 3 && in[3].defined()) {
    for (int64_t a : in[3].to_i64_vector()) axes.push_back(a < 0 ? a + x.rank() : a);
  } else {
    for (int64_t d = 0; d < x.rank(); ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) {
    fail_user("{}: pads has {} entries; it needs 2 per padded axis ({})", node.describe(), pads.size(), 2 * axes.size());
  }
  std::vector<int64_t> begin(static_cast<size_t>(x.rank()), 0), shape = x.shape();
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k] < 0 || axes[k] >= x.rank()) fail_user("{}: axis {} is out of range", node.describe(), axes[k]);
    begin[axes[k]] = pads[k];
    shape[axes[k]] += pads[k] + pads[k + axes.size()];
    if (mode != "constant" && x.shape()[axes[k]] == 0 && shape[axes[k]] > 0) {
      fail_user("{}: mode '{}' cannot pad the empty axis {}", node.describe(), mode, axes[k]);
    }
  }
  if (shape != out_shape) {
    fail_user("{}: pads {} give shape {}, but the plan has {}", node.describe(), dims_to_string(pads),
              dims_to_string(shape), dims_to_string(out_shape));
  }
  reset(maps, out_shape);
  for (size_t d = 0; d < out_shape.size(); ++d) {
    for (int64_t p = 0; p < out_shape[d]; ++p) {
      maps[d].push_back(reference::pad_source(mode, p - begin[d], x.shape()[d]));
    }
  }
}

// Pad's constant as one element of x's dtype: input 2 when given, else the `value` attribute.
void pad_value(const Node& node, const std::vector<Tensor>& in, Tensor& fill) {
  if (in.size() > 2 && in[2].defined() && in[2].numel() > 0) {
    if (in[2].dtype() != fill.dtype()) {
      fail_user("{}: constant_value is {}, the data {}", node.describe(), dtype_name(in[2].dtype()),
                dtype_name(fill.dtype()));
    }
    std::memcpy(fill.raw(), in[2].raw(), dtype_size(fill.dtype()));
  } else {
    fill.set_f64(0, node.attr_float("value", 0.0));
  }
}

// A stretch of an output row: `length` elements from `begin` that read the source row
// contiguously from `source`, or (source -1) are Pad's constant.
struct Segment {
  int64_t begin, length, source;
};

// The innermost axis' map as segments (kept in `out`, whose capacity runs reuse).
void column_segments(const std::vector<int64_t>& columns, std::vector<Segment>& out) {
  out.clear();
  for (int64_t c = 0; c < static_cast<int64_t>(columns.size()); ++c) {
    const int64_t s = columns[c];
    if (!out.empty()) {
      Segment& last = out.back();
      const bool continues = last.source < 0 ? s < 0 : s == last.source + last.length;
      if (continues) {
        ++last.length;
        continue;
      }
    }
    out.push_back({c, 1, s < 0 ? -1 : s});
  }
}

template <typename T>
void fill_as(uint8_t* dst, int64_t n, const uint8_t* value) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  std::fill_n(reinterpret_cast<T*>(dst), n, v);
}

void fill_elements(uint8_t* dst, int64_t n, const uint8_t* value, size_t elem) {
  switch (elem) {
    case 1: return fill_as<uint8_t>(dst, n, value);
    case 2: return fill_as<uint16_t>(dst, n, value);
    case 4: return fill_as<uint32_t>(dst, n, value);
    case 8: return fill_as<uint64_t>(dst, n, value);
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + static_cast<size_t>(i) * elem, value, elem);
  }
}

// out row by row: the row's source row (or the constant, where an outer axis maps to -1), then
// the row's segments, each one memcpy or fill.
void copy_mapped(ThreadTeam& team, const AxisMaps& maps, const std::vector<Segment>& segments, const Tensor& x,
                 const Tensor& fill, Tensor& out) {
  if (out.numel() == 0) return;
  const size_t elem = dtype_size(x.dtype());
  const std::vector<int64_t>& shape = out.shape();
  const std::vector<int64_t> strides = contiguous_strides(x.shape());
  const int64_t width = shape.back(), rows = out.numel() / width;  // rank >= 1 (axis_map_call_supports)
  const auto* src = static_cast<const uint8_t*>(x.raw());
  const auto* value = static_cast<const uint8_t*>(fill.raw());
  auto* dst = static_cast<uint8_t*>(out.raw());
  team.run(rows, [&](int, int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      int64_t offset = 0, rest = r;
      for (size_t d = shape.size() - 1; d-- > 0 && offset >= 0;) {
        const int64_t s = maps[d][rest % shape[d]];
        rest /= shape[d];
        offset = s < 0 ? -1 : offset + s * strides[d];
      }
      uint8_t* row = dst + static_cast<size_t>(r * width) * elem;
      if (offset < 0) {
        fill_elements(row, width, value, elem);
        continue;
      }
      for (const Segment& seg : segments) {
        uint8_t* to = row + static_cast<size_t>(seg.begin) * elem;
        if (seg.source < 0) {
          fill_elements(to, seg.length, value, elem);
        } else {
          std::memcpy(to, src + static_cast<size_t>(offset + seg.source) * elem, static_cast<size_t>(seg.length) * elem);
        }
      }
    }
  });
}

class AxisMapCall : public LibraryCall {
 public:
  explicit AxisMapCall(const Node& node) : node_(node) {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    Tensor& out = outs[0];
    if (!out.defined()) return;
    if (!fill_.defined()) fill_ = Tensor(in[0].dtype(), {1});
    const bool tile = node_.op == "Tile";
    if (tile) {
      tile_maps(node_, in, out.shape(), maps_);
    } else {
      pad_maps(node_, in, out.shape(), maps_);
      pad_value(node_, in, fill_);
    }
    column_segments(maps_.back(), segments_);
    copy_mapped(team, maps_, segments_, in[0], fill_, out);
  }

 private:
  const Node& node_;
  Tensor fill_;    // Pad's constant (one element)
  AxisMaps maps_;  // kept between runs, so that a run does not allocate
  std::vector<Segment> segments_;
};

}  // namespace

bool axis_map_call_supports(const Node& node) {
  if (node.input(0) == nullptr || node.input(0)->rank() == 0) return false;
  if (node.op == "Tile") return node.inputs.size() >= 2 && node.input(1) != nullptr;
  return node.op == "Pad";
}

std::unique_ptr<LibraryCall> prepare_axis_map_call(const Node& node) { return std::make_unique<AxisMapCall>(node); }

}  // namespace tilefuse::runtime
