// Linked into every GoogleTest executable: the environment the tests run in, whether ctest or a
// person starts them, and inherited by the processes they start (the CLI tests' tilefuse).
//
// ctest runs two tests at a time on this project's two cores, so a test's tuning child shares
// its CPUs with another test. A measurement taken while its threads waited for a CPU is not
// recorded (runtime/cpu_wait.h), and most tests check what is recorded: here it is recorded
// whatever the load. The tests of that rule unset the variable for their scope.
#include <cstdlib>

namespace {

const bool kRecordBusyMeasurements = [] {
  setenv("TILEFUSE_RECORD_BUSY_MEASUREMENTS", "1", /*overwrite=*/0);
  return true;
}();

}  // namespace
