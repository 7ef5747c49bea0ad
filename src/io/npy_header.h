// The header of an .npy file: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// Only this small literal subset is parsed (strings, True/False, tuples of ints), which is all
// numpy writes; anything else is rejected rather than guessed at.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tilefuse::io {

struct NpyHeader {
  std::string descr;  // numpy dtype string, e.g. "<f4", "|b1"
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// Throws UserError prefixed with `where` (the file) when the text is not a valid header.
NpyHeader parse_npy_header(std::string_view text, const std::string& where);
// The dict literal, without the padding and newline the file format adds.
std::string format_npy_header(const NpyHeader& header);

}  // namespace tilefuse::io
