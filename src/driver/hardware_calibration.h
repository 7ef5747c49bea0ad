// The hardware model with its memory bandwidth measured, once per machine: the first call runs
// a short STREAM probe (one worker alone, then every core) and writes the result to
// <cache root>/hardware/<machine fingerprint hash>.json; later calls, in any process, read it.
#pragma once

#include <string>

#include "tiling/hardware_model.h"

namespace tilefuse::driver {

tiling::HardwareModel calibrated_hardware(const std::string& cache_root);

}  // namespace tilefuse::driver
