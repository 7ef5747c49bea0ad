// File names for a model's outputs: ONNX names like "logits/Add:0" or "../x" must not escape
// the output directory or collide once sanitised.
#pragma once

#include <string>
#include <vector>

namespace tilefuse::api {

// One "<name>.npy" per output name, in order: characters other than letters, digits, '-', '_'
// and '.' become '_', a leading '.' too (no hidden files, no ".."), and duplicates get a
// numeric suffix.
std::vector<std::string> output_file_names(const std::vector<std::string>& output_names);

// One name made safe as a file name the same way ("output" when empty).
std::string safe_file_stem(const std::string& name);

}  // namespace tilefuse::api
