#include "fusion/shape_refinement.h"

namespace tilefuse::fusion {

std::optional<Shape> common_refinement(const Shape& a, const Shape& b) {
  Shape x, y, out;
  for (const Dim& d : a) if (!(d == Dim(1))) x.push_back(d);
  for (const Dim& d : b) if (!(d == Dim(1))) y.push_back(d);
  size_t i = 0, j = 0;
  std::optional<Dim> da, db;
  while (true) {
    if (!da && i < x.size()) da = x[i++];
    if (!db && j < y.size()) db = y[j++];
    if (!da || !db) break;
    if (*da == *db) {
      out.push_back(*da);
      da.reset(), db.reset();
      continue;
    }
    if (!da->is_const() || !db->is_const()) return std::nullopt;
    const int64_t p = da->value(), q = db->value();
    if (p % q == 0) {
      out.push_back(*db), db.reset(), da = Dim(p / q);
    } else if (q % p == 0) {
      out.push_back(*da), da.reset(), db = Dim(q / p);
    } else {
      return std::nullopt;
    }
  }
  if (da || db) return std::nullopt;  // different element counts
  return out;
}

std::optional<std::vector<std::vector<int64_t>>> refinement_groups(const Shape& shape, const Shape& r) {
  std::vector<std::vector<int64_t>> groups(shape.size());
  size_t k = 0;
  for (size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] == Dim(1)) continue;
    Dim product = 1;
    while (k < r.size() && !(product == shape[a])) {
      product = product * r[k];
      groups[a].push_back(static_cast<int64_t>(k++));
    }
    if (!(product == shape[a])) return std::nullopt;
  }
  const bool scalar = r.size() == 1 && r[0] == Dim(1) && k == 0;  // every axis of `shape` is 1
  if (k != r.size() && !scalar) return std::nullopt;
  return groups;
}

}  // namespace tilefuse::fusion
