// Registration of the movement ops. (Filled in by the op definitions work.)
#include "ir/op_registry.h"

namespace tilefuse {

void register_movement_ops(OpRegistry& registry) { (void)registry; }

}  // namespace tilefuse
