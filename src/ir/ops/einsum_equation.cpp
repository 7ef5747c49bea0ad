#include "ir/ops/einsum_equation.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "ir/error.h"

namespace tilefuse {

namespace {

constexpr int kLetterLabels = 52;  // a-z then A-Z; ellipsis dims come after

int letter_label(char c) { return std::islower(static_cast<unsigned char>(c)) ? c - 'a' : 26 + (c - 'A'); }

struct Term {
  std::vector<int> letters;  // letter labels, with -1 where the ellipsis is
  bool has_ellipsis = false;
};

Term parse_term(const Node& node, const std::string& text) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (term.has_ellipsis || text.compare(i, 3, "...") != 0) {
        fail_user("{}: equation term '{}' has a '.' that is not one ellipsis '...'", node.describe(), text);
      }
      term.has_ellipsis = true;
      term.letters.push_back(-1);
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      term.letters.push_back(letter_label(c));
    } else {
      fail_user("{}: equation term '{}' has the character '{}'; subscripts are letters and '...'", node.describe(),
                text, c);
    }
  }
  return term;
}

// Replaces the ellipsis of `term` by the last `count` of the `ellipsis_rank` ellipsis labels.
std::vector<int> expand(const Term& term, int count, int ellipsis_rank) {
  std::vector<int> labels;
  for (int l : term.letters) {
    if (l >= 0) {
      labels.push_back(l);
      continue;
    }
    for (int k = ellipsis_rank - count; k < ellipsis_rank; ++k) labels.push_back(kLetterLabels + k);
  }
  return labels;
}

}  // namespace

EinsumEquation parse_einsum(const Node& node, const std::string& equation, const std::vector<int64_t>& ranks) {
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(node, lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ranks.size()) {
    fail_user("{}: equation '{}' has {} operand terms but the node has {} inputs", node.describe(), equation,
              terms.size(), ranks.size());
  }
  int ellipsis_rank = 0;
  std::vector<int> ellipsis_counts;
  for (size_t i = 0; i < terms.size(); ++i) {
    int letters = static_cast<int>(terms[i].letters.size()) - (terms[i].has_ellipsis ? 1 : 0);
    int count = static_cast<int>(ranks[i]) - letters;
    if (count < 0 || (!terms[i].has_ellipsis && count != 0)) {
      fail_user("{}: equation term {} of '{}' has {} subscripts but input {} has rank {}", node.describe(), i,
                equation, letters, i, ranks[i]);
    }
    ellipsis_counts.push_back(count);
    ellipsis_rank = std::max(ellipsis_rank, count);
  }
  EinsumEquation eq;
  eq.num_labels = kLetterLabels + ellipsis_rank;
  for (size_t i = 0; i < terms.size(); ++i) eq.inputs.push_back(expand(terms[i], ellipsis_counts[i], ellipsis_rank));
  if (arrow != std::string::npos) {
    Term out = parse_term(node, equation.substr(arrow + 2));
    eq.output = expand(out, ellipsis_rank, ellipsis_rank);
    for (int l : eq.output) {
      bool known = std::any_of(eq.inputs.begin(), eq.inputs.end(),
                               [l](const std::vector<int>& in) { return std::count(in.begin(), in.end(), l) > 0; });
      if (!known || std::count(eq.output.begin(), eq.output.end(), l) > 1) {
        fail_user("{}: output subscripts of '{}' must each appear in an input, once", node.describe(), equation);
      }
    }
    return eq;
  }
  // Implicit output: the ellipsis dims, then the letters used exactly once, in alphabetical order.
  std::map<int, int> uses;
  for (const auto& in : eq.inputs) {
    for (int l : in) ++uses[l];
  }
  for (int k = 0; k < ellipsis_rank; ++k) eq.output.push_back(kLetterLabels + k);
  for (auto [label, count] : uses) {
    if (label < kLetterLabels && count == 1) eq.output.push_back(label);
  }
  std::sort(eq.output.begin() + ellipsis_rank, eq.output.end(), [](int a, int b) {
    // numpy orders implicit outputs by character code: upper case before lower case.
    auto code = [](int l) { return l < 26 ? 'a' + l : 'A' + (l - 26); };
    return code(a) < code(b);
  });
  return eq;
}

}  // namespace tilefuse
