// Which ONNX node tests tilefuse claims: those whose every node is an op of issue 2's list, in
// the default ONNX domain. A case using anything else is out of scope, not a failure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "conformance/node_test_case.h"

namespace tilefuse::conformance {

// The first op of `ops` that tilefuse does not claim, as "Op" or "domain::Op"; nullopt if all are
// claimed.
std::optional<std::string> first_unclaimed_op(const std::vector<OpRef>& ops);

}  // namespace tilefuse::conformance
