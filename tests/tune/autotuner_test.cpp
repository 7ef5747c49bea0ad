// The autotuner with hand-made candidates whose speed and behaviour are known: it picks the
// fastest, excludes wrong, crashing and hanging candidates without failing, and never lets a
// candidate touch the caller's data.
#include <gtest/gtest.h>

#include <signal.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/user_error.h"
#include "tune/autotuner.h"

namespace tilefuse::tune {
namespace {

enum class Behaviour { Good, Wrong, Crash, Hang, InPlace, HangAfterNamingItself };

// Each candidate "computes" out = 2 * in, taking `work_us` of busy time.
class FakeBench : public CandidateBench {
 public:
  struct Candidate {
    double work_us;
    Behaviour behaviour = Behaviour::Good;
  };
  FakeBench(std::vector<Candidate> candidates, std::vector<float>& user_input)
      : candidates_(std::move(candidates)), user_input_(user_input) {}

  int count() const override { return static_cast<int>(candidates_.size()); }
  void prepare() override {
    input_ = user_input_;
    output_.assign(input_.size(), 0.0f);
  }
  void run(int i) override {
    const Candidate& c = candidates_[static_cast<size_t>(i)];
    if (c.behaviour == Behaviour::Crash) ::raise(SIGSEGV);
    if (c.behaviour == Behaviour::Hang) std::this_thread::sleep_for(std::chrono::hours(1));
    if (c.behaviour == Behaviour::HangAfterNamingItself) {
      std::ofstream(pid_file) << ::getpid() << std::endl;
      std::this_thread::sleep_for(std::chrono::hours(1));
    }
    // Writes the caller's buffer in place: must only ever reach the child's copy.
    if (c.behaviour == Behaviour::InPlace) user_input_[0] = -1.0f;
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(c.work_us);
    while (std::chrono::steady_clock::now() < end) {
    }
    for (size_t k = 0; k < input_.size(); ++k) output_[k] = 2.0f * input_[k] + (c.behaviour == Behaviour::Wrong ? 1.0f : 0.0f);
  }
  void keep_as_reference() override { reference_ = output_; }
  std::optional<std::string> differs_from_reference() override {
    if (output_ == reference_) return std::nullopt;
    return "output differs";
  }

 private:
  std::vector<Candidate> candidates_;
  std::vector<float>& user_input_;
  std::vector<float> input_, output_, reference_;

 public:
  std::string pid_file;  // where HangAfterNamingItself writes the measuring child's pid
};

AutotuneOptions quick() {
  AutotuneOptions o;
  o.budget_ms = 100;
  o.hang_seconds = 2;
  o.first_run_seconds = 3;  // a candidate that hangs in its first run is found after this
  return o;
}

TEST(Autotuner, PicksTheFastestCandidate) {
  std::vector<float> input(64, 1.5f);
  FakeBench bench({{400}, {100}, {250}}, input);
  const AutotuneResult r = autotune("k", "/cache/k", bench, quick());
  EXPECT_FALSE(r.fell_back);
  EXPECT_EQ(r.best, 1);
  for (const auto& c : r.candidates) EXPECT_TRUE(c.measured);
  EXPECT_GE(r.candidates[0].median_us, 400);
  EXPECT_GE(r.rounds, 5);
}

TEST(Autotuner, AWrongCandidateIsExcludedEvenIfFastest) {
  std::vector<float> input(64, 1.5f);
  FakeBench bench({{300}, {50, Behaviour::Wrong}, {200}}, input);
  const AutotuneResult r = autotune("k", "/cache/k", bench, quick());
  EXPECT_EQ(r.best, 2);
  EXPECT_FALSE(r.candidates[1].measured);
  EXPECT_NE(r.candidates[1].excluded.find("wrong result"), std::string::npos) << r.candidates[1].excluded;
}

TEST(Autotuner, ACrashingCandidateIsExcludedAndTheRestMeasured) {
  std::vector<float> input(64, 1.5f);
  FakeBench bench({{300}, {50, Behaviour::Crash}, {200}}, input);
  const AutotuneResult r = autotune("k", "/cache/k", bench, quick());
  EXPECT_EQ(r.best, 2);
  EXPECT_NE(r.candidates[1].excluded.find("crashed"), std::string::npos) << r.candidates[1].excluded;
  EXPECT_TRUE(r.candidates[0].measured);
}

TEST(Autotuner, AHangingCandidateIsKilledAndExcluded) {
  std::vector<float> input(64, 1.5f);
  FakeBench bench({{200}, {50, Behaviour::Hang}}, input);
  const AutotuneResult r = autotune("k", "/cache/k", bench, quick());
  EXPECT_EQ(r.best, 0);
  EXPECT_NE(r.candidates[1].excluded.find("timed out"), std::string::npos) << r.candidates[1].excluded;
}

TEST(Autotuner, RoundsLongerThanTheHangTimeoutAreNotHangs) {
  std::vector<float> input(64, 1.5f);
  // Each run fits in the 1 s timeout; a round of three does not.
  FakeBench bench({{400'000}, {300'000}, {450'000}}, input);
  AutotuneOptions o = quick();
  o.hang_seconds = 1;
  const AutotuneResult r = autotune("k", "/cache/k", bench, o);
  EXPECT_FALSE(r.fell_back);
  EXPECT_EQ(r.best, 1);
  for (const auto& c : r.candidates) EXPECT_TRUE(c.excluded.empty()) << c.excluded;
}

TEST(Autotuner, CandidatesNeverTouchTheCallersData) {
  std::vector<float> input(64, 1.5f);
  FakeBench bench({{100, Behaviour::InPlace}, {100}}, input);
  autotune("k", "/cache/k", bench, quick());
  EXPECT_EQ(input[0], 1.5f);
}

TEST(Autotuner, EveryCandidateFailingIsAnErrorNamingTheKernel) {
  std::vector<float> input(64, 1.5f);
  FakeBench bench({{100, Behaviour::Crash}, {100, Behaviour::Crash}}, input);
  const std::string message = testing_support::user_error([&] { autotune("fused_exp_7", "/cache/k", bench, quick()); });
  EXPECT_NE(message.find("fused_exp_7"), std::string::npos) << message;
}

// A candidate whose every run outlasts the hang timeout is slow, not hung: its first run may
// take up to first_run_seconds, and then the timeout grows to a few of its runs.
TEST(Autotuner, ACorrectButSlowCandidateIsMeasured) {
  std::vector<float> input(64, 1.5f);
  FakeBench bench({{1'200'000}, {100}}, input);
  AutotuneOptions o = quick();
  o.hang_seconds = 0.5;
  o.first_run_seconds = 30;
  o.max_rounds = o.min_rounds = 1;
  const AutotuneResult r = autotune("k", "/cache/k", bench, o);
  for (const auto& c : r.candidates) EXPECT_TRUE(c.excluded.empty()) << c.excluded;
  EXPECT_TRUE(r.candidates[0].measured);
  EXPECT_EQ(r.best, 1);
}

// With SIGCHLD set to SIG_IGN (as some host applications do) the kernel reaps the measuring child
// and its exit status is lost: a crash must still count as a failure, not as success.
TEST(Autotuner, IgnoredSigchldDoesNotTurnACrashIntoASuccess) {
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGCHLD, &ignore, &previous), 0);
  std::vector<float> input(64, 1.5f);
  FakeBench bench({{300}, {50, Behaviour::Crash}, {200}}, input);
  const AutotuneResult r = autotune("k", "/cache/k", bench, quick());
  ::sigaction(SIGCHLD, &previous, nullptr);
  EXPECT_FALSE(r.candidates[1].excluded.empty());
  EXPECT_FALSE(r.candidates[1].measured);
  EXPECT_TRUE(r.candidates[0].measured);
  EXPECT_TRUE(r.candidates[2].measured);
  EXPECT_EQ(r.best, 2);
}

// A dead process whose new parent (PID 1 of a container, say) has not reaped it yet.
bool is_zombie(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}

// The measuring child dies with the process that tunes (it shares that process's compile.lock
// descriptor, so it must never outlive it).
TEST(Autotuner, TheMeasuringChildDiesWithItsParent) {
  const std::string pid_file = ::testing::TempDir() + "/tilefuse_autotune_child_" + std::to_string(::getpid());
  std::filesystem::remove(pid_file);
  const pid_t tuner = ::fork();
  ASSERT_GE(tuner, 0);
  if (tuner == 0) {
    std::vector<float> input(64, 1.5f);
    FakeBench bench({{100, Behaviour::HangAfterNamingItself}}, input);
    bench.pid_file = pid_file;
    AutotuneOptions o = quick();
    o.hang_seconds = o.first_run_seconds = 3600;
    autotune("k", "/cache/k", bench, o);
    ::_exit(0);
  }
  pid_t child = 0;
  for (int i = 0; i < 500 && child == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::ifstream(pid_file) >> child;
  }
  ASSERT_GT(child, 0) << "the measuring child never started";
  ASSERT_EQ(::kill(tuner, SIGKILL), 0);
  ASSERT_EQ(::waitpid(tuner, nullptr, 0), tuner);
  bool gone = false;
  for (int i = 0; i < 250 && !gone; ++i) {
    gone = (::kill(child, 0) != 0 && errno == ESRCH) || is_zombie(child);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!gone) ::kill(child, SIGKILL);
  std::filesystem::remove(pid_file);
  EXPECT_TRUE(gone) << "the measuring child " << child << " outlived its parent";
}

}  // namespace
}  // namespace tilefuse::tune
