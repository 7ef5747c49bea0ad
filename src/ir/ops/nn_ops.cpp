// Registration of the nn ops. (Filled in by the op definitions work.)
#include "ir/op_registry.h"

namespace tilefuse {

void register_nn_ops(OpRegistry& registry) { (void)registry; }

}  // namespace tilefuse
