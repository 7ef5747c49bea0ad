// The verifier: checks the invariants every pass may rely on and every pass must keep. Passes
// and tests call it after each rewrite; it never changes the graph.
//
// Checked: value and node names are non-empty and unique; dims are not negative; constants'
// data match their value's dtype and shape; sym_values are small integer vectors of the right
// length; producer links and `users` lists agree with node inputs; no cycles; every node input
// is a graph input, a constant or an output of an earlier node (topological order); every op
// is registered and every node fits its OpDef (arity, attribute kinds, input dtype: the checks
// of check_node); graph outputs are defined.
#pragma once

#include "ir/graph.h"
#include "ir/op_registry.h"

namespace tilefuse {

// Throws UserError naming the graph, the first broken rule and the node or value it concerns.
void verify_graph(const Graph& graph, const OpRegistry& registry = OpRegistry::global());

}  // namespace tilefuse
