#include "frontend/external_data.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "ir/error.h"

namespace tilefuse::frontend {

namespace {

namespace fs = std::filesystem;

struct ExternalRef {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  // -1: to the end of the file
};

int64_t parse_count(const std::string& text, const std::string& what, const std::string& where) {
  try {
    size_t used = 0;
    long long v = std::stoll(text, &used);
    if (used == text.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  fail_user("{}: external data {} '{}' is not a non-negative integer", where, what, text);
}

ExternalRef parse_ref(const onnx::TensorProto& t, const std::string& where) {
  ExternalRef ref;
  for (const auto& entry : t.external_data()) {
    if (entry.key() == "location") ref.location = entry.value();
    if (entry.key() == "offset") ref.offset = parse_count(entry.value(), "offset", where);
    if (entry.key() == "length") ref.length = parse_count(entry.value(), "length", where);
  }
  if (ref.location.empty()) fail_user("{}: external data has no 'location'", where);
  fs::path location(ref.location);
  bool escapes = location.is_absolute();
  for (const auto& part : location) escapes = escapes || part == "..";
  if (escapes) fail_user("{}: external data location '{}' must be a relative path inside the model's folder", where, ref.location);
  return ref;
}

std::string read_range(const fs::path& file, const ExternalRef& ref, const std::string& where) {
  std::error_code ec;
  auto size = fs::file_size(file, ec);
  if (ec) fail_user("{}: cannot read external data file '{}': {}", where, file.string(), ec.message());
  int64_t file_size = static_cast<int64_t>(size);
  int64_t length = ref.length < 0 ? file_size - ref.offset : ref.length;
  if (ref.offset > file_size || length < 0 || length > file_size - ref.offset) {
    fail_user("{}: external data range offset {} length {} lies outside '{}' ({} bytes)", where, ref.offset, length,
              file.string(), file_size);
  }
  std::ifstream in(file, std::ios::binary);
  in.seekg(ref.offset);
  std::string bytes(static_cast<size_t>(length), '\0');
  in.read(bytes.data(), length);
  if (!in) fail_user("{}: reading {} bytes of external data from '{}' failed", where, length, file.string());
  return bytes;
}

}  // namespace

void load_external_data(onnx::ModelProto& model, const std::string& model_dir, const std::string& origin) {
  for (auto& init : *model.mutable_graph()->mutable_initializer()) {
    if (init.data_location() != onnx::TensorProto::EXTERNAL) continue;
    std::string where = fmt::format("{}: initializer '{}'", origin, init.name());
    ExternalRef ref = parse_ref(init, where);
    init.set_raw_data(read_range(fs::path(model_dir) / ref.location, ref, where));
    init.clear_external_data();
    init.set_data_location(onnx::TensorProto::DEFAULT);
  }
}

}  // namespace tilefuse::frontend
