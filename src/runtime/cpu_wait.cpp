#include "runtime/cpu_wait.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <vector>

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

// TILEFUSE_RECORD_BUSY_MEASUREMENTS=1: the tests, which run beside each other, check what is recorded.
bool recording_anyway() {
  const char* any = std::getenv("TILEFUSE_RECORD_BUSY_MEASUREMENTS");
  return any != nullptr && std::string_view(any) == "1";
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

double handoff_us(ThreadTeam& team, int samples) {
  if (team.size() < 2 || samples < 1) return 0;
  std::vector<double> us;
  us.reserve(static_cast<size_t>(samples));
  for (int i = 0; i < samples; ++i) {
    const auto start = std::chrono::steady_clock::now();
    team.run(team.size(), [](int, int64_t, int64_t) {});
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

bool trusted_measurement(double waiting_share) { return waiting_share <= kTrustedCpuWaitingShare || recording_anyway(); }

bool may_record(double waiting_share, std::string_view what) {
  if (trusted_measurement(waiting_share)) return true;
  logger().info("{}: not recorded, the measuring threads waited for a CPU {:.0f}% of the time (other processes "
                "busy, or two threads on one CPU); the next process measures again",
                what, 100 * waiting_share);
  return false;
}

bool may_record(double waiting_share, double handoff_us, std::string_view what) {
  if (!may_record(waiting_share, what)) return false;
  if (handoff_us <= kTrustedHandoffUs || recording_anyway()) return true;
  logger().info("{}: not recorded, handing work to the other workers took {:.0f} us (over the {:.0f} us a "
                "measurement is trusted with); the next process measures again",
                what, handoff_us, kTrustedHandoffUs);
  return false;
}

}  // namespace tilefuse::runtime
