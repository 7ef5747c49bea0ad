// Registration of the matmul ops. (Filled in by the op definitions work.)
#include "ir/op_registry.h"

namespace tilefuse {

void register_matmul_ops(OpRegistry& registry) { (void)registry; }

}  // namespace tilefuse
