// DAG patterns as data: the nodes of a small subgraph (by op type or op trait, with constraints
// on dtypes, shapes and attributes) and the edges between them. The pattern matcher finds every
// place a pattern occurs; the fusion planner turns matches into fusion candidates. Users add
// their own patterns through PatternRegistry (pattern_registry.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/attribute.h"
#include "ir/dtype.h"
#include "ir/graph.h"

namespace tilefuse::passes {

enum class ShapeConstraint { Any, Static, Dynamic };
enum class BroadcastConstraint { Any, None, Some };
enum class ReduceAxesConstraint { Any, Trailing };

struct AttrEquals {
  std::string name;
  Attribute value;
};

// What a pattern node accepts. Every non-empty field must hold.
struct NodeConstraint {
  std::vector<std::string> op_types;  // one of these op types (empty: any)
  uint32_t all_traits = 0;            // every one of these OpTrait bits
  uint32_t any_traits = 0;            // at least one of these (0: no requirement)
  uint32_t no_traits = 0;             // none of these
  std::vector<DType> dtypes;          // dtype of output 0 in this set (empty: any)
  ShapeConstraint shape = ShapeConstraint::Any;          // of output 0
  BroadcastConstraint broadcast = BroadcastConstraint::Any;  // some input shape differs from output 0
  ReduceAxesConstraint reduce_axes = ReduceAxesConstraint::Any;
  std::vector<AttrEquals> attrs;

  bool accepts(const Node& node) const;
  std::string describe() const;  // "Pointwise & !LibraryCall, f32|f16", for plan dumps
};

struct PatternNode {
  std::string id;  // unique within the pattern
  NodeConstraint constraint;
};

// `producer`'s output feeds `consumer` (at input `consumer_input`, or any input when -1).
struct PatternEdge {
  std::string producer;
  std::string consumer;
  int consumer_input = -1;
};

// Fusion families; the planner treats the families differently (e.g. a matmul epilogue keeps
// the matmul as a library call and fuses only what follows it).
enum class PatternFamily {
  ElementwiseChain,
  ElementwiseBroadcast,
  ElementwiseReduce,
  ReduceElementwise,
  Transpose,
  MatmulEpilogue,
  User,
};
std::string_view family_name(PatternFamily family);

struct Pattern {
  std::string name;
  PatternFamily family = PatternFamily::User;
  std::vector<PatternNode> nodes;  // nodes[0] is the anchor the matcher starts from
  std::vector<PatternEdge> edges;  // must connect all nodes
  // Larger first when candidates tie on benefit; user patterns default above built-ins.
  int priority = 0;

  // Throws UserError if ids repeat, an edge names an unknown node, or the pattern is not connected.
  void validate() const;
  int index_of(const std::string& id) const;  // -1 if absent
};

// Reduced axes of a reduction node, normalised and sorted; nullopt if not known at compile time.
std::optional<std::vector<int64_t>> reduced_axes(const Node& node);

}  // namespace tilefuse::passes
