#include "runtime/cpu_wait.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "ir/log.h"

namespace tilefuse::runtime {

namespace {

// The thread's run delay in nanoseconds (schedstat's second field), or -1 where it is not there.
double run_delay_ns(const std::string& path) {
  std::ifstream in(path);
  double on_cpu = 0, waiting = -1;
  if (!(in >> on_cpu >> waiting)) return -1;
  return waiting;
}

}  // namespace

CpuWaitMeter::CpuWaitMeter(const ThreadTeam& team)
    : team_(team), parts_taken_over_(team.parts_taken_over()), start_(std::chrono::steady_clock::now()) {
  std::vector<int> ids = {static_cast<int>(::gettid())};
  ids.insert(ids.end(), team.helper_thread_ids().begin(), team.helper_thread_ids().end());
  for (int id : ids) {
    std::string path = fmt::format("/proc/self/task/{}/schedstat", id);
    const double delay = run_delay_ns(path);
    if (delay < 0) continue;  // no scheduler statistics in this kernel: nothing to count
    paths_.push_back(std::move(path));
    start_ns_.push_back(delay);
  }
}

double CpuWaitMeter::waiting_share() const {
  if (team_.parts_taken_over() != parts_taken_over_) return 1;
  const double elapsed_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start_).count();
  if (paths_.empty() || elapsed_ns <= 0) return 0;
  double waited = 0;
  for (size_t i = 0; i < paths_.size(); ++i) {
    const double now = run_delay_ns(paths_[i]);
    if (now >= 0) waited += now - start_ns_[i];
  }
  return waited / (elapsed_ns * static_cast<double>(paths_.size()));
}

bool trusted_measurement(double waiting_share) {
  if (waiting_share <= kTrustedCpuWaitingShare) return true;
  const char* any = std::getenv("TILEFUSE_RECORD_BUSY_MEASUREMENTS");
  return any != nullptr && std::string_view(any) == "1";
}

bool may_record(double waiting_share, std::string_view what) {
  if (trusted_measurement(waiting_share)) return true;
  logger().info("{}: not recorded, the measuring threads waited for a CPU {:.0f}% of the time (other processes "
                "busy, or two threads on one CPU); the next process measures again",
                what, 100 * waiting_share);
  return false;
}

}  // namespace tilefuse::runtime
