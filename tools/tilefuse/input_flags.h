// `--input NAME=FILE.npy` (repeatable), shared by run, bench and tune-report: inputs from files,
// the rest filled with seeded random data.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ir/tensor.h"

namespace tilefuse::cli {

void add_input_option(CLI::App* sub, std::vector<std::string>& specs);

// The tensors the specs name, by input name; `files` gets each input's file. Throws UserError
// on a malformed spec, an input given twice or an unreadable file.
std::map<std::string, Tensor> read_given_inputs(const std::vector<std::string>& specs,
                                                std::map<std::string, std::string>& files);

}  // namespace tilefuse::cli
