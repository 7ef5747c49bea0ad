// What the local rewrite passes (BatchNorm, MatMul bias and MatMul transpose folding) share: they
// look at one node at a time and replace the value it defines with the output of a new node.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tilefuse::passes {

// Calls rewrite(node) on every node the graph has at the start, in order, except those whose
// outputs nothing reads any more (an earlier rewrite replaced them); when any returns true,
// re-sorts the graph and removes what became dead. Returns how many returned true.
int rewrite_nodes(Graph& graph, const std::function<bool(Node&)>& rewrite);

// Adds a one-output node `op` computing what `old` computed, infers it, moves every use of `old`
// to it and gives it `old`'s name (so graph outputs keep their names). Returns the new value.
Value* replace_value(Graph& graph, Value* old, std::string op, std::string name, std::vector<Value*> inputs,
                     AttributeMap attrs = {});

}  // namespace tilefuse::passes
