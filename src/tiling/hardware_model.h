// What the cost model knows about the machine: cores, caches and vector ISA (from hwloc and the
// CPU's feature flags), and memory bandwidth, which no table knows: it is measured once per
// machine by a short probe (driver/hardware_calibration.h) and cached beside the kernels.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace tilefuse::tiling {

struct HardwareModel {
  int cores = 1;
  int64_t l1d_bytes = 32 << 10;   // per core
  int64_t l2_bytes = 1 << 20;     // per core
  int64_t l3_bytes = 8 << 20;     // shared
  int vector_bytes = 16;          // widest float vector the kernels compile for
  std::string isa = "sse2";
  double ghz = 2.5;               // nominal clock, for compute estimates
  // Bandwidth in GB/s (1e9 bytes/s): what one core streams alone, and all cores together.
  double core_gbps = 10.0;
  double shared_gbps = 20.0;
  // What starting a kernel on more than one worker costs: waking the helpers and joining them.
  double fork_join_us = 1.0;
  bool calibrated = false;        // bandwidth and fork/join measured on this machine (else the defaults above)

  // Bandwidth one of `active` workers gets when all of them stream at once.
  double gbps_per_worker(int active) const;
  // Identifies the machine for the calibration cache: CPU model, cores, caches, ISA.
  std::string fingerprint() const;
  std::string describe() const;
};

// Cores, caches and ISA of this machine; bandwidth left at the defaults (uncalibrated).
HardwareModel detect_hardware();

nlohmann::json to_json(const HardwareModel& hw);
HardwareModel hardware_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception

}  // namespace tilefuse::tiling
