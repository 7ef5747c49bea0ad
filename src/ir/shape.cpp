#include "ir/shape.h"

#include <algorithm>

#include "ir/error.h"

namespace tilefuse {

bool is_static(const Shape& shape) {
  return std::all_of(shape.begin(), shape.end(), [](const Dim& d) { return d.is_const(); });
}

std::vector<int64_t> static_dims(const Shape& shape) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const Dim& d : shape) {
    if (!d.is_const()) fail_internal("static_dims: shape {} is symbolic", shape_to_string(shape));
    out.push_back(d.value());
  }
  return out;
}

Shape shape_of(const std::vector<int64_t>& dims) { return Shape(dims.begin(), dims.end()); }

Dim num_elements(const Shape& shape) {
  Dim n = 1;
  for (const Dim& d : shape) n = n * d;
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += shape[i].to_string();
  }
  return out + "]";
}

std::string dims_to_string(const std::vector<int64_t>& dims) { return shape_to_string(shape_of(dims)); }

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& where) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right.
    Dim da = i + a.size() >= rank ? a[i + a.size() - rank] : Dim(1);
    Dim db = i + b.size() >= rank ? b[i + b.size() - rank] : Dim(1);
    if (da == db || db == Dim(1)) {
      out[i] = da;
    } else if (da == Dim(1)) {
      out[i] = db;
    } else if (da.is_const() && db.is_const()) {
      fail_user("{}: shapes {} and {} cannot be broadcast (dim {} vs {}; numpy rule: equal or 1)", where,
                shape_to_string(a), shape_to_string(b), da.to_string(), db.to_string());
    } else {
      out[i] = max(da, db);
    }
  }
  return out;
}

std::vector<int64_t> broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                    const std::string& where) {
  return static_dims(broadcast_shapes(shape_of(a), shape_of(b), where));
}

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& where) {
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= std::max<int64_t>(rank, 1)) {
    fail_user("{}: axis {} is out of range for rank {} (allowed [{}, {}])", where, axis, rank, -rank,
              rank - 1);
  }
  return normalized;
}

}  // namespace tilefuse
