#include "input_flags.h"

#include "io/npy.h"
#include "ir/error.h"

namespace tilefuse::cli {

void add_input_option(CLI::App* sub, std::vector<std::string>& specs) {
  sub->add_option("--input", specs, "An input from a .npy file: NAME=FILE.npy (repeatable)");
}

std::map<std::string, Tensor> read_given_inputs(const std::vector<std::string>& specs,
                                                std::map<std::string, std::string>& files) {
  std::map<std::string, Tensor> given;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      fail_user("--input '{}': expected NAME=FILE.npy", spec);
    }
    std::string name = spec.substr(0, eq);
    std::string file = spec.substr(eq + 1);
    if (given.count(name)) fail_user("--input: input '{}' is given twice", name);
    given.emplace(name, io::read_npy(file));
    files.emplace(name, file);
  }
  return given;
}

}  // namespace tilefuse::cli
