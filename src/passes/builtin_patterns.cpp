// The built-in fusion pattern families, written as data.
#include "ir/op_registry.h"
#include "passes/pattern_registry.h"

namespace tilefuse::passes {

namespace {

NodeConstraint pointwise(BroadcastConstraint broadcast = BroadcastConstraint::Any) {
  NodeConstraint c;
  c.all_traits = kPointwise;
  c.no_traits = kLibraryCall | kShapeOp;
  c.broadcast = broadcast;
  return c;
}

NodeConstraint reduction() {
  NodeConstraint c;
  c.all_traits = kReduction;
  return c;
}

NodeConstraint op(std::vector<std::string> types) {
  NodeConstraint c;
  c.op_types = std::move(types);
  return c;
}

Pattern pair(std::string name, PatternFamily family, NodeConstraint producer, NodeConstraint consumer) {
  Pattern p;
  p.name = std::move(name);
  p.family = family;
  p.nodes = {{"producer", std::move(producer)}, {"consumer", std::move(consumer)}};
  p.edges = {{"producer", "consumer", -1}};
  return p;
}

}  // namespace

std::vector<Pattern> builtin_patterns() {
  return {
      pair("elementwise_chain", PatternFamily::ElementwiseChain, pointwise(),
           pointwise(BroadcastConstraint::None)),
      pair("elementwise_broadcast", PatternFamily::ElementwiseBroadcast, pointwise(),
           pointwise(BroadcastConstraint::Some)),
      pair("elementwise_reduce", PatternFamily::ElementwiseReduce, pointwise(), reduction()),
      pair("reduce_elementwise", PatternFamily::ReduceElementwise, reduction(), pointwise()),
      pair("transpose_elementwise", PatternFamily::Transpose, op({"Transpose"}), pointwise()),
      pair("index_map_elementwise", PatternFamily::Transpose, op({"Slice", "Expand"}), pointwise()),
      // Slice, Transpose and Expand after one another: one load through the composed index map.
      pair("index_map_chain", PatternFamily::Transpose, op({"Slice", "Transpose", "Expand"}),
           op({"Slice", "Transpose", "Expand"})),
      // A gather (torch.gather, index_select, an embedding lookup) then arithmetic: the gather is
      // a load of the consumer's kernel.
      pair("gather_elementwise", PatternFamily::Transpose, op({"Gather", "GatherElements"}), pointwise()),
      pair("matmul_epilogue", PatternFamily::MatmulEpilogue, op({"MatMul", "Gemm"}), pointwise()),
  };
}

}  // namespace tilefuse::passes
