#include "driver/hardware_calibration.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "build/file_lock.h"
#include "build/hashing.h"
#include "build/private_directory.h"
#include "io/atomic_file.h"
#include "ir/log.h"
#include "runtime/cpu_wait.h"
#include "runtime/stream_probe.h"
#include "runtime/thread_team.h"

namespace tilefuse::driver {

namespace {

// Big enough to leave L2 far behind, small enough to take well under a second. On machines whose
// L3 is larger than this the probe partly measures L3: the model then slightly underrates memory
// time, which the measured TopN corrects.
constexpr size_t kProbeArrayBytes = size_t{64} << 20;

// Measures the machine into `hw`; returns the largest share of the time the measuring threads
// waited for a CPU (runtime/cpu_wait.h): a fork/join measured beside a busy process came out 44 us
// instead of 0.4, and every kernel planned with it kept to one worker. The fork/join cost is the
// team's handoff, taken 2000 times, which may_record also judges.
double measure_machine(tiling::HardwareModel& hw) {
  const runtime::StreamOptions options{.array_bytes = kProbeArrayBytes, .repetitions = 3};
  double waited = 0;
  {
    runtime::ThreadTeam one(1);
    const runtime::CpuWaitMeter meter(one);
    hw.core_gbps = runtime::measure_stream(one, options).triad_gbps;
    waited = meter.waiting_share();
  }
  runtime::ThreadTeam all(hw.cores);
  all.spread_workers();
  const runtime::CpuWaitMeter meter(all);
  hw.shared_gbps = std::max(hw.core_gbps, runtime::measure_stream(all, options).triad_gbps);
  hw.fork_join_us = runtime::handoff_us(all, 2000);
  hw.calibrated = true;
  return std::max(waited, meter.waiting_share());
}

}  // namespace

tiling::HardwareModel calibrated_hardware(const std::string& cache_root) {
  tiling::HardwareModel hw = tiling::detect_hardware();
  const std::string dir = cache_root + "/hardware";
  build::make_directory(dir);
  const std::string path = dir + "/" + build::sha256_hex(hw.fingerprint()).substr(0, 16) + ".json";
  build::FileLock lock(path + ".lock");  // one process measures; the others wait and read
  if (std::ifstream in(path); in) {
    try {
      return tiling::hardware_from_json(nlohmann::json::parse(in));
    } catch (const nlohmann::json::exception& e) {
      logger().warn("ignoring {}: {}; measuring the machine again", path, e.what());
    }
  }
  logger().info("calibrating the hardware model (memory bandwidth, fork/join cost; once per machine)");
  if (runtime::may_record(measure_machine(hw), hw.fork_join_us, "the hardware calibration")) {
    io::write_file_atomically(path, tiling::to_json(hw).dump(2) + "\n");
  }
  logger().info("hardware: {}", hw.describe());
  return hw;
}

}  // namespace tilefuse::driver
