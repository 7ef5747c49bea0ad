// A one-line progress display on stderr ("compiling kernels 3/12"), redrawn in place. Shown only
// when stderr is a terminal, so logs and pipes never receive carriage returns. Thread-safe.
#pragma once

#include <mutex>
#include <string>

namespace tilefuse::build {

class ProgressLine {
 public:
  ProgressLine(std::string activity, size_t total);
  // Erases the line, leaving the terminal as it was.
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Records one more finished step, named `label`.
  void advance(const std::string& label);

 private:
  std::string activity_;
  size_t total_;
  size_t done_ = 0;
  bool enabled_;
  std::mutex mutex_;
};

}  // namespace tilefuse::build
