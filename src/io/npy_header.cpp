#include "io/npy_header.h"

#include <cctype>
#include <set>

#include <fmt/ranges.h>

#include "ir/error.h"

namespace tilefuse::io {
namespace {

// Recursive-descent reader over the header text; every error names the file and the offset.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& where) : text_(text), where_(where) {}

  NpyHeader parse() {
    NpyHeader header;
    std::set<std::string> seen;
    expect('{');
    while (!try_consume('}')) {
      std::string key = parse_string();
      expect(':');
      if (!seen.insert(key).second) fail("key '{}' appears twice", key);
      if (key == "descr") {
        if (peek() == '[') fail("structured dtypes (record arrays) are not supported");
        header.descr = parse_string();
      } else if (key == "fortran_order") {
        header.fortran_order = parse_bool();
      } else if (key == "shape") {
        header.shape = parse_shape();
      } else {
        fail("unexpected key '{}' (expected 'descr', 'fortran_order', 'shape')", key);
      }
      if (!try_consume(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the header dict");
    for (const char* key : {"descr", "fortran_order", "shape"}) {
      if (seen.count(key) == 0) fail("key '{}' is missing", key);
    }
    return header;
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
    fail_user("{}: bad .npy header at offset {}: {}", where_, pos_,
              fmt::format(format, std::forward<Args>(args)...));
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool try_consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!try_consume(c)) fail("expected '{}'", c);
  }

  std::string parse_string() {
    char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return value;
  }

  std::string_view parse_word() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  bool parse_bool() {
    std::string_view word = parse_word();
    if (word == "True") return true;
    if (word == "False") return false;
    fail("expected True or False, got '{}'", word);
  }

  int64_t parse_dim() {
    std::string_view word = parse_word();
    // Python 2 era files may write long integers as "3L".
    if (!word.empty() && word.back() == 'L') word.remove_suffix(1);
    if (word.empty() || word.size() > 18) fail("expected a dimension (a non-negative integer)");
    int64_t value = 0;
    for (char c : word) {
      if (!std::isdigit(static_cast<unsigned char>(c))) fail("'{}' is not a dimension", word);
      value = value * 10 + (c - '0');
    }
    return value;
  }

  std::vector<int64_t> parse_shape() {
    std::vector<int64_t> shape;
    expect('(');
    while (!try_consume(')')) {
      shape.push_back(parse_dim());
      if (!try_consume(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  std::string_view text_;
  const std::string& where_;
  size_t pos_ = 0;
};

std::string format_shape_tuple(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);  // Python's 1-tuple needs the comma
  return fmt::format("({})", fmt::join(shape, ", "));
}

}  // namespace

NpyHeader parse_npy_header(std::string_view text, const std::string& where) {
  return HeaderParser(text, where).parse();
}

std::string format_npy_header(const NpyHeader& header) {
  return fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': {}, }}", header.descr,
                     header.fortran_order ? "True" : "False", format_shape_tuple(header.shape));
}

}  // namespace tilefuse::io
