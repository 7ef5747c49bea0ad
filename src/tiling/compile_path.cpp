#include "tiling/compile_path.h"

#include "tiling/kernel_profile.h"

namespace tilefuse::tiling {

CompilePath decide_compile_path(const fusion::FusedKernel& kernel, int topn) {
  if (!is_static(kernel)) return CompilePath::Jit;
  return topn > 1 ? CompilePath::StaticTopN : CompilePath::StaticOne;
}

std::string_view compile_path_name(CompilePath path) {
  switch (path) {
    case CompilePath::Jit: return "jit";
    case CompilePath::StaticOne: return "static";
    case CompilePath::StaticTopN: return "static-topn";
  }
  return "?";
}

}  // namespace tilefuse::tiling
