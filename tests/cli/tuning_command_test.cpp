// TopN tuning through the real `tilefuse` binary, several processes at once: exact configuration
// messages; four processes tuning one model agree and only one measures; a process killed in
// the middle of tuning, or a torn optimize_tiling, leaves a cache the next run recovers from.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_process.h"

namespace tilefuse::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// y = tanh(x * 2 + b), x: f32[rows, 4096]: one static elementwise kernel with a real choice.
void write_tanh_model(const ScratchDir& dir, int rows) {
  write_onnx_model(dir, "tanh", fmt::format(R"(
two = numpy_helper.from_array(np.array(2.0, dtype=np.float32), 'two')
graph = helper.make_graph(
    [helper.make_node('Mul', ['x', 'two'], ['a']), helper.make_node('Add', ['a', 'b'], ['s']),
     helper.make_node('Tanh', ['s'], ['y'])], 'tanh',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [{0}, 4096]),
     helper.make_tensor_value_info('b', TensorProto.FLOAT, [4096])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [{0}, 4096])], [two])
)", rows));
}

std::vector<std::string> run_args(const ScratchDir& dir, const std::string& out) {
  return {"run", dir.file("tanh.onnx"), "--topn", "3", "--threads", "2", "--cache-dir", dir.file("cache"),
          "--output-dir", dir.file(out), "--json"};
}

std::string command_line(const std::vector<std::string>& args, const std::string& env) {
  std::string command = env + " " + shell_quoted(TILEFUSE_CLI);
  for (const auto& a : args) command += " " + shell_quoted(a);
  return command;
}

// Runs draw the same seeded random inputs, so their outputs must agree (within float tolerance:
// candidates split work differently).
bool same_npy(const ScratchDir& dir, const std::string& a, const std::string& b) {
  return run_python(dir, "import numpy as np\nd = " + shell_quoted(dir.path().string()) +
                             "\nx, y = np.load(d + '/" + a + "/y.npy'), np.load(d + '/" + b +
                             "/y.npy')\nassert np.allclose(x, y, rtol=1e-5, atol=1e-6)\n") == 0;
}

TEST(CliTuning, InvalidTopNGivesTheExactMessage) {
  ScratchDir dir;
  write_tanh_model(dir, 8);
  for (const auto& [value, message] : std::vector<std::pair<std::string, std::string>>{
           {"abc", "TILEFUSE_AUTOTUNE_TOPN must be a positive integer"}, {"0", "TILEFUSE_AUTOTUNE_TOPN must be >= 1"}}) {
    CliResult r = run_cli(dir, {"run", dir.file("tanh.onnx"), "--cache-dir", dir.file("cache")},
                          "TILEFUSE_AUTOTUNE_TOPN=" + value);
    EXPECT_EQ(r.exit_code, 1) << value;
    EXPECT_THAT(r.err, HasSubstr(message)) << value;
  }
  CliResult capped = run_cli(dir, {"run", dir.file("tanh.onnx"), "--cache-dir", dir.file("cache")},
                             "TILEFUSE_AUTOTUNE_TOPN=25");
  EXPECT_EQ(capped.exit_code, 0) << capped.err;
  EXPECT_THAT(capped.err, HasSubstr("capped at 10")) << capped.err;
}

TEST(CliTuning, FourProcessesTuningAtOnceAgreeAndOneMeasures) {
  ScratchDir dir;
  write_tanh_model(dir, 512);
  std::string script;
  for (int i = 0; i < 4; ++i) {
    script += command_line(run_args(dir, "out" + std::to_string(i)), "") + " > " + dir.file("r" + std::to_string(i)) +
              " 2>&1 &\n";
  }
  ASSERT_EQ(std::system((script + "wait\n").c_str()), 0);
  int64_t tuned = 0;
  for (int i = 0; i < 4; ++i) {
    const std::string text = read_bytes(dir.file("r" + std::to_string(i)));
    const auto json = nlohmann::json::parse(text.substr(text.find('{')), nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << text;
    tuned += json["counters"]["kernels_tuned"].get<int64_t>();
    EXPECT_TRUE(same_npy(dir, "out0", "out" + std::to_string(i)));
  }
  EXPECT_EQ(tuned, 1);
  const CliResult warm = run_cli(dir, run_args(dir, "warm"));
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  const auto json = nlohmann::json::parse(warm.out);
  EXPECT_EQ(json["counters"]["compiles"], 0);
  EXPECT_EQ(json["counters"]["candidates_measured"], 0);
  EXPECT_TRUE(same_npy(dir, "out0", "warm"));
}

// Starts `tilefuse run`, waits for its log to say tuning began, then kills it with SIGKILL.
void kill_while_tuning(const ScratchDir& dir) {
  const std::string log = dir.file("killed.log");
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<std::string> args = run_args(dir, "killed");
    args.insert(args.end(), {"--log-level", "info"});
    const std::string command = "exec " + command_line(args, "") + " > " + shell_quoted(log) + " 2>&1";
    ::execl("/bin/sh", "sh", "-c", command.c_str(), nullptr);
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (read_bytes(log).find("measuring") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_THAT(read_bytes(log), HasSubstr("measuring"));
}

TEST(CliTuning, AProcessKilledWhileTuningLeavesACacheTheNextRunRecovers) {
  ScratchDir dir;
  write_tanh_model(dir, 2048);  // 32 MiB: measuring takes a while
  kill_while_tuning(dir);
  const CliResult next = run_cli(dir, run_args(dir, "next"));
  ASSERT_EQ(next.exit_code, 0) << next.err;
  const auto json = nlohmann::json::parse(next.out);
  EXPECT_EQ(json["counters"]["compiles"], 0);  // the candidates were built before the kill
  const CliResult single = run_cli(dir, {"run", dir.file("tanh.onnx"), "--topn", "1", "--threads", "1", "--cache-dir",
                                         dir.file("cache1"), "--output-dir", dir.file("single")});
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_TRUE(same_npy(dir, "next", "single"));
}

TEST(CliTuning, ATornOptimizeTilingIsTunedAgain) {
  ScratchDir dir;
  write_tanh_model(dir, 256);
  ASSERT_EQ(run_cli(dir, run_args(dir, "first")).exit_code, 0);
  std::vector<fs::path> records;
  for (const auto& e : fs::recursive_directory_iterator(dir.file("cache"))) {
    if (e.path().filename() == "optimize_tiling") records.push_back(e.path());
  }
  ASSERT_EQ(records.size(), 1u);
  // What a crash between write and rename would leave if writes were not atomic.
  const std::string text = read_bytes(records[0].string());
  write_bytes(records[0].string(), text.substr(0, text.size() / 2));
  const CliResult again = run_cli(dir, run_args(dir, "again"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto json = nlohmann::json::parse(again.out);
  EXPECT_EQ(json["counters"]["kernels_tuned"], 1);
  EXPECT_EQ(json["counters"]["compiles"], 0);
  EXPECT_TRUE(same_npy(dir, "first", "again"));
}

}  // namespace
}  // namespace tilefuse::testing
