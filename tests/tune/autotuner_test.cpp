// The autotuner with hand-made candidates whose speed and behaviour are known: it picks the
// fastest, excludes wrong, crashing and hanging candidates without failing, and never lets a
// candidate touch the caller's data.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <thread>

#include "support/user_error.h"
#include "tune/autotuner.h"

namespace tilefuse::tune {
namespace {

enum class Behaviour { Good, Wrong, Crash, Hang, InPlace };

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
};

AutotuneOptions quick() {
  AutotuneOptions o;
  o.budget_ms = 100;
  o.hang_seconds = 2;
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

}  // namespace
}  // namespace tilefuse::tune
