// The `tilefuse` command. Exit codes: 0 success, 1 the user's error (bad model, bad input, bad
// flags: the message says what to fix), 2 internal error (a bug in tilefuse).
#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "api/logging.h"
#include "bench_command.h"
#include "compile_command.h"
#include "inspect_command.h"
#include "ir/error.h"
#include "run_command.h"
#include "tune_report_command.h"
#include "tilefuse/version.h"

namespace {

constexpr int kExitUserError = 1;
constexpr int kExitInternalError = 2;

int report_internal_error(const char* what) {
  std::cerr << "internal error: " << what
            << "\nThis is a bug in tilefuse; please report it with the command line and the model.\n";
  return kExitInternalError;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tilefuse;
  CLI::App app{"tilefuse: a fusion compiler and autotuner for ONNX tensor graphs", "tilefuse"};
  app.set_version_flag("--version", std::string("tilefuse ") + kVersion);
  std::optional<std::string> log_level;
  app.add_option("--log-level", log_level,
                 "Log level on stderr: trace, debug, info, warn, error, critical, off (default: $TILEFUSE_LOG_LEVEL or warn)");
  app.require_subcommand(1);
  app.fallthrough();  // --log-level is accepted after the subcommand too
  cli::RunCommand run;
  cli::InspectCommand inspect;
  cli::BenchCommand bench;
  cli::TuneReportCommand tune_report;
  cli::CompileCommand compile;
  CLI::App* run_app = cli::add_run_command(app, run);
  CLI::App* inspect_app = cli::add_inspect_command(app, inspect);
  CLI::App* bench_app = cli::add_bench_command(app, bench);
  CLI::App* tune_report_app = cli::add_tune_report_command(app, tune_report);
  CLI::App* compile_app = cli::add_compile_command(app, compile);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // app.exit prints --help/--version (exit code 0) or the parse error with a usage hint.
    return app.exit(e) == 0 ? 0 : kExitUserError;
  }
  try {
    api::configure_logging(log_level);
    if (run_app->parsed()) cli::execute_run_command(run);
    if (inspect_app->parsed()) cli::execute_inspect_command(inspect);
    if (bench_app->parsed()) cli::execute_bench_command(bench);
    if (tune_report_app->parsed()) cli::execute_tune_report_command(tune_report);
    if (compile_app->parsed()) cli::execute_compile_command(compile);
    return 0;
  } catch (const UserError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitUserError;
  } catch (const std::bad_alloc&) {
    // An allocation the memory cap did not foresee (a library's, a container's): the machine
    // ran out, which the user can act on; not a bug report.
    std::cerr << "error: out of memory; lower the model's sizes or the memory cap (TILEFUSE_MAX_MEMORY or "
                 "--max-memory) so that tilefuse refuses such sizes up front\n";
    return kExitUserError;
  } catch (const std::exception& e) {
    return report_internal_error(e.what());
  } catch (...) {
    return report_internal_error("unknown exception");
  }
}
