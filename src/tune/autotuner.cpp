#include "tune/autotuner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "ir/error.h"
#include "ir/log.h"

namespace tilefuse::tune {

namespace {

using Clock = std::chrono::steady_clock;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// ---- the measuring child: reports on a pipe, one line per event ----

class Reporter {
 public:
  explicit Reporter(int fd) : fd_(fd) {}
  template <typename... Args> void line(fmt::format_string<Args...> format, Args&&... args) {
    std::string text = fmt::format(format, std::forward<Args>(args)...) + "\n";
    for (size_t done = 0; done < text.size();) {
      ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n <= 0) ::_exit(4);  // the parent is gone: nobody to report to
      done += static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
};

// Runs every active candidate once and checks it; returns those that agree with the reference.
std::vector<int> check_candidates(CandidateBench& bench, const std::vector<int>& active, Reporter& out) {
  std::vector<int> agreed;
  for (int i : active) {
    out.line("start {}", i);
    bench.run(i);
    if (agreed.empty()) {
      bench.keep_as_reference();
    } else if (auto why = bench.differs_from_reference()) {
      std::string reason = *why;
      std::replace(reason.begin(), reason.end(), '\n', ' ');
      out.line("wrong {} {}", i, reason);
      continue;
    }
    agreed.push_back(i);
    out.line("checked {}", i);
  }
  return agreed;
}

double microseconds_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// Runs per sample: enough back-to-back runs for a sample to last kMinSampleUs, so microsecond
// kernels are timed over many runs (the timer's resolution and the cost of switching between
// candidates are spread thin) while large kernels are timed one run at a time. The same count
// for every candidate: a switch costs each candidate's samples alike.
constexpr double kMinSampleUs = 50;
constexpr int kMaxRunsPerSample = 64;

// Also tells the parent how long a round will take, so a slow kernel is not taken for a hang.
// Every run before the timing rounds reports itself, so the parent's hang timeout covers one run.
int runs_per_sample(CandidateBench& bench, const std::vector<int>& ids, Reporter& out) {
  for (int i : ids) {
    bench.run(i);  // warm-up: caches, page tables, branch predictors
    out.line("warm {}", i);
  }
  std::vector<double> us;
  for (int i : ids) {
    const auto t0 = Clock::now();
    bench.run(i);
    us.push_back(std::max(microseconds_since(t0), 0.01));
    out.line("probe {}", i);
  }
  const int runs = static_cast<int>(std::clamp(std::ceil(kMinSampleUs / median_of(us)), 1.0, double(kMaxRunsPerSample)));
  out.line("round_us {:.0f}", runs * *std::max_element(us.begin(), us.end()) * double(ids.size()));
  return runs;
}

// Interleaved timing rounds until the medians settle or the budget is spent.
void time_candidates(CandidateBench& bench, const std::vector<int>& ids, const AutotuneOptions& o, Reporter& out) {
  const int runs = runs_per_sample(bench, ids, out);
  std::vector<size_t> order(ids.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937 shuffler(20261129);
  std::vector<std::vector<double>> samples(ids.size());
  std::vector<double> previous;
  const auto start = Clock::now();
  int rounds = 0;
  while (rounds < o.max_rounds) {
    // Each round visits the candidates in a new random order: whatever a position in the round
    // or a predecessor costs (a report write, a worker to wake, code evicted by the previous
    // candidate) falls on every candidate alike instead of biasing one.
    std::shuffle(order.begin(), order.end(), shuffler);
    for (size_t k : order) {
      const auto t0 = Clock::now();
      for (int r = 0; r < runs; ++r) bench.run(ids[k]);
      samples[k].push_back(microseconds_since(t0) / runs);
    }
    ++rounds;
    out.line("round {}", rounds);
    if (rounds < o.min_rounds || rounds % o.min_rounds != 0) continue;
    std::vector<double> medians;
    for (const auto& s : samples) medians.push_back(median_of(s));
    bool stable = previous.size() == medians.size();
    for (size_t k = 0; stable && k < medians.size(); ++k) {
      stable = std::abs(medians[k] - previous[k]) <= o.stable_within * previous[k];
    }
    const double elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (stable || elapsed_ms > o.budget_ms) break;
    previous = medians;
  }
  for (size_t k = 0; k < ids.size(); ++k) {
    out.line("timing {} {:.3f} {:.3f}", ids[k], median_of(samples[k]), *std::min_element(samples[k].begin(), samples[k].end()));
  }
  out.line("waited {:.4f}", bench.cpu_waiting_share());
  out.line("done {}", rounds);
}

[[noreturn]] void child_main(CandidateBench& bench, const std::vector<int>& active, const AutotuneOptions& o, int fd) {
  Reporter out(fd);
  try {
    bench.prepare();
    time_candidates(bench, check_candidates(bench, active, out), o, out);
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    out.line("error {}", what);
    ::_exit(3);
  }
  ::_exit(0);
}

// ---- the parent: runs a child, reads its report ----

struct ChildReport {
  std::vector<std::string> lines;
  std::string failure;  // empty if the child ended normally
};

// Reads the child's lines until it closes the pipe; kills it if it stays silent too long: for
// `hang_seconds`, or for ten of its announced rounds if those are longer, or, during a
// candidate's first run, for `first_run_seconds`.
std::string read_report(int fd, pid_t pid, double hang_seconds, double first_run_seconds,
                        std::vector<std::string>& lines) {
  std::string pending;
  char buffer[4096];
  Clock::time_point run_started = Clock::now();
  for (;;) {
    const bool first_run = !lines.empty() && lines.back().rfind("start ", 0) == 0;
    const double limit = first_run ? std::max(hang_seconds, first_run_seconds) : hang_seconds;
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(limit * 1000));
    if (ready == 0) {
      ::kill(pid, SIGKILL);
      return fmt::format("timed out (no progress for {:.0f} s)", limit);
    }
    if (ready < 0 && errno == EINTR) continue;
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "";
    pending.append(buffer, static_cast<size_t>(n));
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1)) {
      lines.push_back(pending.substr(0, nl));
      const std::string& line = lines.back();
      if (line.rfind("round_us ", 0) == 0) {
        hang_seconds = std::max(hang_seconds, 10 * std::atof(line.c_str() + 9) / 1e6);
      } else if (line.rfind("start ", 0) == 0) {
        run_started = Clock::now();
      } else if (line.rfind("checked ", 0) == 0 || line.rfind("wrong ", 0) == 0) {
        // A candidate's first run shows how long its runs take: later silences of a few runs
        // (warm-up, probes) are not hangs either.
        const double run_seconds = std::chrono::duration<double>(Clock::now() - run_started).count();
        hang_seconds = std::max(hang_seconds, 4 * run_seconds);
      }
    }
  }
}

ChildReport run_child(CandidateBench& bench, const std::vector<int>& active, const AutotuneOptions& o) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) fail_user("autotune: cannot create a pipe: {}", std::strerror(errno));
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]), ::close(fds[1]);
    fail_user("autotune: cannot fork the measuring process: {}", std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    // The child dies with its parent: it shares the descriptor of compile.lock and must not keep
    // the lock (or the CPU) after the tuning process is gone. Checked after setting, in case the
    // parent died before the request took effect.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(4);
    child_main(bench, active, o, fds[1]);
  }
  ::close(fds[1]);
  ChildReport report;
  std::string timeout = read_report(fds[0], pid, o.hang_seconds, o.first_run_seconds, report.lines);
  ::close(fds[0]);
  int status = 0;
  int waited = 0;
  while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  const bool finished_report = !report.lines.empty() && report.lines.back().rfind("done ", 0) == 0;
  if (!timeout.empty()) {
    report.failure = timeout;
  } else if (waited < 0) {
    // ECHILD: the application set SIGCHLD to SIG_IGN and the kernel reaped the child. Without
    // its status, only a complete report counts as success.
    if (!finished_report) report.failure = "ended without finishing its report (its exit status is unknown)";
  } else if (WIFSIGNALED(status)) {
    report.failure = fmt::format("crashed ({})", strsignal(WTERMSIG(status)));
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    report.failure = fmt::format("failed (exit status {})", WEXITSTATUS(status));
  }
  return report;
}

// What one child's report says.
struct Parsed {
  int in_check = -1;           // a candidate started but neither checked nor found wrong
  std::vector<int> checked;
  std::vector<std::pair<int, std::string>> wrong;
  std::vector<std::pair<int, CandidateResult>> timings;
  std::string error;
  bool done = false;
  int rounds = 0;
  double waited = 0;  // the child's cpu_waiting_share()
};

Parsed parse_report(const ChildReport& report) {
  Parsed p;
  for (const std::string& line : report.lines) {
    std::istringstream in(line);
    std::string event;
    in >> event;
    int i = -1;
    if (event == "start") {
      in >> p.in_check;
    } else if (event == "checked") {
      in >> i;
      p.checked.push_back(i);
      p.in_check = -1;
    } else if (event == "wrong") {
      in >> i;
      std::string why;
      std::getline(in >> std::ws, why);
      p.wrong.emplace_back(i, why);
      p.in_check = -1;
    } else if (event == "timing") {
      CandidateResult r;
      r.measured = true;
      in >> i >> r.median_us >> r.min_us;
      p.timings.emplace_back(i, r);
    } else if (event == "waited") {
      in >> p.waited;
    } else if (event == "error") {
      std::getline(in >> std::ws, p.error);
    } else if (event == "done") {
      in >> p.rounds;
      p.done = true;
    }
  }
  return p;
}

}  // namespace

AutotuneResult autotune(const std::string& kernel, const std::string& kernel_dir, CandidateBench& bench,
                        const AutotuneOptions& options) {
  const int n = bench.count();
  AutotuneResult result;
  result.candidates.resize(static_cast<size_t>(n));
  std::vector<int> active(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) active[static_cast<size_t>(i)] = i;
  Parsed parsed;
  // Each failed child excludes the candidate it failed on, so this ends within n + 1 children.
  while (!active.empty()) {
    const ChildReport report = run_child(bench, active, options);
    parsed = parse_report(report);
    for (const auto& [i, why] : parsed.wrong) {
      result.candidates[static_cast<size_t>(i)].excluded = "wrong result: " + why;
      logger().warn("Autotune {}: candidate {} excluded: wrong result: {}", kernel, i, why);
    }
    std::erase_if(active, [&](int i) { return !result.candidates[static_cast<size_t>(i)].excluded.empty(); });
    if (report.failure.empty() && parsed.done) break;
    const std::string why = !parsed.error.empty() ? parsed.error : report.failure;
    if (parsed.in_check < 0) {  // failed while timing: no candidate to blame
      logger().warn("Autotune {}: measurement {}; keeping the cost model's choice", kernel, why);
      result.fell_back = true;
      break;
    }
    result.candidates[static_cast<size_t>(parsed.in_check)].excluded = why;
    logger().warn("Autotune {}: candidate {} excluded: {}", kernel, parsed.in_check, why);
    std::erase(active, parsed.in_check);
  }
  if (active.empty()) fail_user("kernel {}: every tiling candidate failed (see the warnings above)", kernel);

  if (!result.fell_back && parsed.timings.size() != parsed.checked.size()) {
    logger().error("Autotune {} parse profiling error, timing info count: {}", kernel_dir, parsed.timings.size());
    result.fell_back = true;
  }
  result.best = active.front();  // the best-ranked survivor, unless measurement says otherwise
  if (result.fell_back) return result;
  result.rounds = parsed.rounds;
  result.cpu_waiting_share = parsed.waited;
  double best_us = 0;
  for (const auto& [i, timing] : parsed.timings) {
    result.candidates[static_cast<size_t>(i)] = timing;
    logger().info("Autotune {} candidate {}: Timing = {:.2f} us", kernel, i, timing.median_us);
    if (best_us == 0 || timing.median_us < best_us) best_us = timing.median_us, result.best = i;
  }
  logger().info("Autotune completed {}, best kernel index: {}", kernel, result.best);
  logger().debug("Autotune {}: its threads waited for a CPU {:.1f}% of the time", kernel, 100 * result.cpu_waiting_share);
  return result;
}

}  // namespace tilefuse::tune
