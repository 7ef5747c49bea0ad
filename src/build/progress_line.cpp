#include "build/progress_line.h"

#include <unistd.h>

#include <cstdio>

namespace tilefuse::build {

ProgressLine::ProgressLine(std::string activity, size_t total)
    : activity_(std::move(activity)), total_(total), enabled_(::isatty(STDERR_FILENO) == 1) {}

ProgressLine::~ProgressLine() {
  if (enabled_ && done_ > 0) std::fprintf(stderr, "\r\033[K");
}

void ProgressLine::advance(const std::string& label) {
  std::lock_guard<std::mutex> guard(mutex_);
  ++done_;
  // \033[K clears what a longer previous label left behind.
  if (enabled_) std::fprintf(stderr, "\r%s %zu/%zu: %s\033[K", activity_.c_str(), done_, total_, label.c_str());
}

}  // namespace tilefuse::build
