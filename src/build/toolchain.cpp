#include "build/toolchain.h"

#include <cstdlib>
#include <sstream>

#include "build/process.h"
#include "ir/error.h"

namespace tilefuse::build {
namespace {

// No -ffast-math: generated kernels must produce the reference interpreter's results.
// -fno-math-errno only lets the compiler inline and vectorise sqrt and friends.
const std::vector<std::string> kFlags = {"-std=c++20", "-O3", "-march=native", "-fPIC", "-shared",
                                         "-fno-math-errno", "-fno-plt"};

// Compiler diagnostics are cut here: the first errors are the useful ones, and a template
// error cascade can run to megabytes.
constexpr size_t kMaxDiagnosticsInMessage = 8000;

std::vector<std::string> split_on_whitespace(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::vector<std::string> compiler_command_from_environment() {
  const char* value = std::getenv("TILEFUSE_CXX");
  std::vector<std::string> command = split_on_whitespace(value ? value : "c++");
  if (command.empty()) {
    fail_user("TILEFUSE_CXX is empty: it must name a C++ compiler command, e.g. 'g++' or 'ccache g++'");
  }
  return command;
}

std::string clipped(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  return fmt::format("{}\n[... {} more bytes of diagnostics]", text.substr(0, limit), text.size() - limit);
}

std::string compiler_version_line(const std::vector<std::string>& command) {
  std::vector<std::string> argv = command;
  argv.push_back("--version");
  const std::string setting = command_line_text(command);
  ProcessResult result;
  try {
    result = run_process(argv);
  } catch (const UserError& error) {
    fail_user("TILEFUSE_CXX='{}' is not a usable C++ compiler: {}", setting, error.what());
  }
  std::string first_line = result.output.substr(0, result.output.find('\n'));
  if (!result.succeeded() || first_line.empty()) {
    fail_user("TILEFUSE_CXX='{}' is not a usable C++ compiler: '{}' ended with {}: {}", setting,
              command_line_text(argv), result.status_text(), clipped(result.output, 500));
  }
  return first_line;
}

std::string join(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

}  // namespace

Toolchain Toolchain::from_environment() {
  Toolchain toolchain;
  toolchain.command = compiler_command_from_environment();
  toolchain.flags = kFlags;
  // The wrapper (ccache, distcc) is left out: it does not change the generated code.
  toolchain.identity = compiler_version_line(toolchain.command) + " | " + join(toolchain.flags);
  return toolchain;
}

void compile_shared_library(const Toolchain& toolchain, const std::string& source_path,
                            const std::string& output_path) {
  std::vector<std::string> argv = toolchain.command;
  argv.insert(argv.end(), toolchain.flags.begin(), toolchain.flags.end());
  for (const std::string& dir : toolchain.include_dirs) argv.push_back("-I" + dir);
  argv.insert(argv.end(), {source_path, "-o", output_path});
  ProcessResult result = run_process(argv);
  if (!result.succeeded()) {
    fail_user("compiling '{}' failed ({}); command:\n  {}\n{}", source_path, result.status_text(),
              command_line_text(argv), clipped(result.output, kMaxDiagnosticsInMessage));
  }
}

}  // namespace tilefuse::build
