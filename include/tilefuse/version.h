// tilefuse's version; keep in step with project(VERSION) in CMakeLists.txt.
#pragma once

namespace tilefuse {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace tilefuse
