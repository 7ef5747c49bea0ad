// include/tilefuse/npy.h, for programs that link only the runtime.
#include "tilefuse/npy.h"

#include "io/npy.h"

namespace tilefuse {

Tensor read_npy(const std::string& path) { return io::read_npy(path); }
void write_npy(const std::string& path, const Tensor& tensor) { io::write_npy(path, tensor); }

}  // namespace tilefuse
