// What the local rewrite passes share: they look at one node at a time and replace the value it
// defines with the output of a new node, often built from new constants and nodes.
#pragma once

#include <functional>
#include <optional>
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

// The ints of a node's constant operand `i`, or nothing where it is absent or not a constant.
std::optional<std::vector<int64_t>> constant_ints(const Node& node, size_t i);

// A 1-D i64 constant (a shape, axes, Slice bounds) under a name not taken yet, based on `name`.
Value* int_constant(Graph& graph, const std::string& name, const std::vector<int64_t>& values);

// Appends a one-output node `op` (its output named after `name`) and infers it; returns the output.
Value* added_node(Graph& graph, const std::string& op, const std::string& name, std::vector<Value*> inputs,
                  AttributeMap attrs = {});

}  // namespace tilefuse::passes
