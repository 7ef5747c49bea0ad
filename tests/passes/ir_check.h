// A small FileCheck for the text IR: a pass test is one .ir file holding the input graph, the
// passes to run (`# RUN: fold-slices-of-concats, fold-constants`) and what the printed result
// must contain (`# CHECK:` lines), so a reviewer reads the transformation, not a harness.
//
//   # CHECK: text       a later line contains `text` (searching on from the last match)
//   # CHECK-NEXT: text  the line right after the last match contains `text`
//   # CHECK-NOT: text   no line between the last match and the next one (or the end) contains it
//
// Matching is by substring, whitespace as written. The parser skips `#` lines, so the whole file
// is the input graph.
#pragma once

#include <string>
#include <vector>

namespace tilefuse::ir_check {

struct Check {
  enum class Kind { check, next, absent };
  Kind kind;
  std::string text;
  int file_line;  // 1-based, for messages
};

struct IrCheckFile {
  std::vector<std::string> passes;  // in the order to run them
  std::vector<Check> checks;
};

// The RUN and CHECK directives of a .ir file.
IrCheckFile parse_directives(const std::string& file_text);

// Empty if `output` satisfies `checks`; else which check failed, where, and the output.
std::string run_checks(const std::string& output, const std::vector<Check>& checks);

}  // namespace tilefuse::ir_check
