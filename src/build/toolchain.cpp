#include "build/toolchain.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <cstdlib>
#include <sstream>

#include "build/hashing.h"
#include "build/process.h"
#include "build/timeouts.h"
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


ProcessResult run_compiler_query(const std::vector<std::string>& argv, const std::string& setting) {
  ProcessResult result;
  try {
    result = run_process(argv, compile_timeout());
  } catch (const UserError& error) {
    fail_user("TILEFUSE_CXX='{}' is not a usable C++ compiler: {}", setting, error.what());
  }
  if (!result.succeeded()) {
    fail_user("TILEFUSE_CXX='{}' is not a usable C++ compiler: '{}' ended with {}: {}", setting,
              command_line_text(argv), result.status_text(), clipped(result.output, 500));
  }
  return result;
}

// Instruction-set macros among the compiler's predefined ones (__AVX512F__, __FMA__, ...).
bool is_isa_macro(const std::string& name) {
  for (const char* prefix : {"__AVX", "__SSE", "__FMA", "__BMI", "__F16C", "__AMX", "__AES", "__SHA", "__VPCLMUL",
                             "__GFNI", "__POPCNT", "__LZCNT", "__ADX", "__MOVBE", "__PCLMUL", "__RDRND"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// "<ISA macros> | macros-sha256=<first 16 hex digits>" for -march=native: the macros name every
// feature the compiler may use and the CPU it tunes for (e.g. __znver4__).
std::string native_target(const std::vector<std::string>& command) {
  std::vector<std::string> argv = command;
  argv.insert(argv.end(), {"-E", "-dM", "-march=native", "-x", "c++", "/dev/null"});
  const std::string macros = run_compiler_query(argv, command_line_text(command)).output;
  std::istringstream in(macros);
  std::vector<std::string> features;
  for (std::string define, name; in >> define >> name;) {
    std::string rest;
    std::getline(in, rest);
    if (define == "#define" && is_isa_macro(name)) features.push_back(name.substr(2, name.size() - 4));
  }
  std::sort(features.begin(), features.end());
  std::string text;
  for (const std::string& f : features) text += (text.empty() ? "" : " ") + f;
  return text + " | macros-sha256=" + sha256_hex(macros).substr(0, 16);
}

std::string compiler_version_line(const std::vector<std::string>& command) {
  std::vector<std::string> argv = command;
  argv.push_back("--version");
  const std::string setting = command_line_text(command);
  const ProcessResult result = run_compiler_query(argv, setting);
  std::string first_line = result.output.substr(0, result.output.find('\n'));
  if (first_line.empty()) fail_user("TILEFUSE_CXX='{}' is not a usable C++ compiler: '{}' printed nothing", setting,
                                    command_line_text(argv));
  return first_line;
}

std::string join(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

// What a compiler command says of itself (its version line and native target), asked once per
// process: every executor reads the toolchain, and the two queries cost tens of milliseconds.
std::pair<std::string, std::string> compiler_facts(const std::vector<std::string>& command) {
  static std::mutex mutex;
  static std::map<std::vector<std::string>, std::pair<std::string, std::string>> known;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = known.find(command); it != known.end()) return it->second;
  }
  std::pair<std::string, std::string> facts = {compiler_version_line(command), native_target(command)};
  std::lock_guard<std::mutex> lock(mutex);
  return known.emplace(command, std::move(facts)).first->second;
}

}  // namespace

Toolchain Toolchain::from_environment() {
  Toolchain toolchain;
  toolchain.command = compiler_command_from_environment();
  toolchain.flags = kFlags;
  std::string target;
  std::tie(toolchain.version, target) = compiler_facts(toolchain.command);
  toolchain.set_target(std::move(target));
  return toolchain;
}

void Toolchain::set_target(std::string target_text) {
  target = std::move(target_text);
  // The wrapper (ccache, distcc) is left out: it does not change the generated code.
  identity = version + " | " + join(flags) + " | target " + target;
}

namespace {

// Runs the compiler with `arguments` after the command; `what` names the job in errors.
void run_compiler(const Toolchain& toolchain, const std::vector<std::string>& arguments, const std::string& what) {
  std::vector<std::string> argv = toolchain.command;
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  ProcessResult result = run_process(argv, compile_timeout());
  if (result.timed_out) {
    fail_user("{} timed out after {:g} s (TILEFUSE_COMPILE_TIMEOUT); command:\n  {}", what, result.timeout_seconds,
              command_line_text(argv));
  }
  if (!result.succeeded()) {
    fail_user("{} failed ({}); command:\n  {}\n{}", what, result.status_text(), command_line_text(argv),
              clipped(result.output, kMaxDiagnosticsInMessage));
  }
}

std::vector<std::string> compile_arguments(const Toolchain& toolchain) {
  std::vector<std::string> args = toolchain.flags;
  for (const std::string& dir : toolchain.include_dirs) args.push_back("-I" + dir);
  return args;
}

}  // namespace

void compile_shared_library(const Toolchain& toolchain, const std::string& source_path,
                            const std::string& output_path) {
  std::vector<std::string> args = compile_arguments(toolchain);
  args.insert(args.end(), {source_path, "-o", output_path});
  run_compiler(toolchain, args, fmt::format("compiling '{}'", source_path));
}

void compile_object(const Toolchain& toolchain, const std::string& source_path, const std::string& output_path,
                    const std::vector<std::string>& defines) {
  std::vector<std::string> args = compile_arguments(toolchain);
  std::erase(args, std::string("-shared"));
  for (const std::string& d : defines) args.push_back("-D" + d);
  args.insert(args.end(), {"-c", source_path, "-o", output_path});
  run_compiler(toolchain, args, fmt::format("compiling '{}'", source_path));
}

void link_shared_library(const Toolchain& toolchain, const std::vector<std::string>& objects,
                         const std::string& output_path) {
  std::vector<std::string> args = {"-shared", "-fPIC"};
  args.insert(args.end(), objects.begin(), objects.end());
  args.insert(args.end(), {"-o", output_path});
  run_compiler(toolchain, args, fmt::format("linking '{}'", output_path));
}

}  // namespace tilefuse::build
