#include "ir_check.h"

#include <regex>
#include <sstream>

#include <fmt/format.h>

namespace tilefuse::ir_check {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trimmed(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  const size_t last = s.find_last_not_of(" \t");
  return first == std::string::npos ? "" : s.substr(first, last - first + 1);
}

std::string failure(const Check& c, const std::string& what, const std::string& output) {
  return fmt::format("line {}: {} '{}'\n--- output ---\n{}", c.file_line, what, c.text, output);
}

}  // namespace

IrCheckFile parse_directives(const std::string& file_text) {
  static const std::regex directive(R"(^\s*#\s*(RUN|CHECK|CHECK-NEXT|CHECK-NOT):\s?(.*)$)");
  IrCheckFile out;
  const std::vector<std::string> lines = lines_of(file_text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, directive)) continue;
    const std::string kind = m[1], text = m[2];
    const int line = static_cast<int>(i) + 1;
    if (kind == "RUN") {
      std::istringstream names(text);
      for (std::string name; std::getline(names, name, ',');) out.passes.push_back(trimmed(name));
    } else {
      const Check::Kind k = kind == "CHECK" ? Check::Kind::check
                            : kind == "CHECK-NEXT" ? Check::Kind::next
                                                   : Check::Kind::absent;
      out.checks.push_back({k, trimmed(text), line});
    }
  }
  return out;
}

std::string run_checks(const std::string& output, const std::vector<Check>& checks) {
  const std::vector<std::string> lines = lines_of(output);
  size_t next = 0;                     // the first line the next positive check may match
  std::vector<const Check*> absent;    // CHECK-NOTs waiting for the next match to bound them
  auto violated = [&](size_t end) -> const Check* {
    for (const Check* c : absent) {
      for (size_t l = next; l < end; ++l) {
        if (lines[l].find(c->text) != std::string::npos) return c;
      }
    }
    return nullptr;
  };
  for (const Check& c : checks) {
    if (c.kind == Check::Kind::absent) {
      absent.push_back(&c);
      continue;
    }
    size_t found = next;
    if (c.kind == Check::Kind::next) {
      if (next >= lines.size() || lines[next].find(c.text) == std::string::npos) {
        return failure(c, "CHECK-NEXT: the next line does not contain", output);
      }
    } else {
      while (found < lines.size() && lines[found].find(c.text) == std::string::npos) ++found;
      if (found == lines.size()) return failure(c, "CHECK: no later line contains", output);
    }
    if (const Check* bad = violated(found)) return failure(*bad, "CHECK-NOT: found", output);
    absent.clear();
    next = found + 1;
  }
  if (const Check* bad = violated(lines.size())) return failure(*bad, "CHECK-NOT: found", output);
  return "";
}

}  // namespace tilefuse::ir_check
