#include "tiling/hardware_model.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <hwloc.h>

namespace tilefuse::tiling {

double HardwareModel::gbps_per_worker(int active) const {
  return std::min(core_gbps, shared_gbps / std::max(1, active));
}

namespace {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "unknown cpu";
}

double nominal_ghz() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cpu MHz", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return std::stod(line.substr(colon + 1)) / 1000.0;
    }
  }
  return 2.5;
}

int64_t first_cache_size(hwloc_topology_t topo, hwloc_obj_type_t type, int64_t fallback) {
  hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, 0);
  return obj && obj->attr ? static_cast<int64_t>(obj->attr->cache.size) : fallback;
}

// The widest vector the generated kernels are compiled for (-march=native on this machine).
void detect_isa(HardwareModel& hw) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    hw.vector_bytes = 64, hw.isa = "avx512";
  } else if (__builtin_cpu_supports("avx2")) {
    hw.vector_bytes = 32, hw.isa = "avx2";
  } else if (__builtin_cpu_supports("avx")) {
    hw.vector_bytes = 32, hw.isa = "avx";
  }
}

}  // namespace

HardwareModel detect_hardware() {
  HardwareModel hw;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
    hw.cores = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
    hw.l1d_bytes = first_cache_size(topo, HWLOC_OBJ_L1CACHE, hw.l1d_bytes);
    hw.l2_bytes = first_cache_size(topo, HWLOC_OBJ_L2CACHE, hw.l2_bytes);
    hw.l3_bytes = first_cache_size(topo, HWLOC_OBJ_L3CACHE, hw.l3_bytes);
    hwloc_topology_destroy(topo);
  }
  detect_isa(hw);
  hw.ghz = nominal_ghz();
  return hw;
}

std::string HardwareModel::fingerprint() const {
  return fmt::format("{}|cores={}|l1d={}|l2={}|l3={}|{}", cpu_model_name(), cores, l1d_bytes, l2_bytes, l3_bytes, isa);
}

std::string HardwareModel::describe() const {
  return fmt::format("{} cores, L1d {} KiB, L2 {} KiB, L3 {} MiB, {} ({}-byte vectors), {:.2f} GHz, bandwidth {:.1f} GB/s "
                     "per core, {:.1f} GB/s shared, fork/join {:.1f} us ({})",
                     cores, l1d_bytes >> 10, l2_bytes >> 10, l3_bytes >> 20, isa, vector_bytes, ghz, core_gbps,
                     shared_gbps, fork_join_us, calibrated ? "measured" : "default, not measured");
}

nlohmann::json to_json(const HardwareModel& hw) {
  return {{"cores", hw.cores},       {"l1d_bytes", hw.l1d_bytes},     {"l2_bytes", hw.l2_bytes},
          {"l3_bytes", hw.l3_bytes}, {"vector_bytes", hw.vector_bytes}, {"isa", hw.isa},
          {"ghz", hw.ghz},           {"core_gbps", hw.core_gbps},     {"shared_gbps", hw.shared_gbps},
          {"fork_join_us", hw.fork_join_us}, {"calibrated", hw.calibrated}};
}

HardwareModel hardware_from_json(const nlohmann::json& j) {
  HardwareModel hw;
  hw.cores = j.at("cores").get<int>();
  hw.l1d_bytes = j.at("l1d_bytes").get<int64_t>();
  hw.l2_bytes = j.at("l2_bytes").get<int64_t>();
  hw.l3_bytes = j.at("l3_bytes").get<int64_t>();
  hw.vector_bytes = j.at("vector_bytes").get<int>();
  hw.isa = j.at("isa").get<std::string>();
  hw.ghz = j.at("ghz").get<double>();
  hw.core_gbps = j.at("core_gbps").get<double>();
  hw.shared_gbps = j.at("shared_gbps").get<double>();
  hw.fork_join_us = j.at("fork_join_us").get<double>();
  hw.calibrated = j.at("calibrated").get<bool>();
  return hw;
}

}  // namespace tilefuse::tiling
