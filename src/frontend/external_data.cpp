#include "frontend/external_data.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <vector>

#include "ir/checked_size.h"
#include "ir/error.h"
#include "ir/memory_budget.h"

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

// The file a location names, symlinks resolved, if it is a regular file inside the model's
// folder (itself resolved): a link that points out of the folder is refused like a "..".
fs::path resolve_inside(const fs::path& model_dir, const ExternalRef& ref, const std::string& where) {
  std::error_code ec;
  const fs::path dir = fs::canonical(model_dir.empty() ? fs::path(".") : model_dir, ec);
  if (ec) fail_user("{}: cannot resolve the model's folder '{}': {}", where, model_dir.string(), ec.message());
  const fs::path file = fs::canonical(dir / ref.location, ec);
  if (ec) fail_user("{}: cannot open external data file '{}': {}", where, (dir / ref.location).string(), ec.message());
  const fs::path relative = file.lexically_relative(dir);
  if (relative.empty() || *relative.begin() == "..") {
    fail_user("{}: external data location '{}' resolves to '{}', outside the model's folder '{}' (symlinks are "
              "followed, then checked)", where, ref.location, file.string(), dir.string());
  }
  if (!fs::is_regular_file(file, ec)) {
    fail_user("{}: external data location '{}' is not a regular file", where, ref.location);
  }
  return file;
}

// Bytes the initializer's dims and element type call for, if its type is one we read (other
// types are refused later by the TensorProto conversion, with their own message).
std::optional<int64_t> expected_bytes(const onnx::TensorProto& t, const std::string& where) {
  std::optional<DType> dtype = dtype_from_onnx(t.data_type());
  if (!dtype) return std::nullopt;
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  return static_cast<int64_t>(checked_nbytes(*dtype, dims, where));
}

std::string read_range(const fs::path& file, const ExternalRef& ref, std::optional<int64_t> expected,
                       const std::string& where) {
  std::error_code ec;
  auto size = fs::file_size(file, ec);
  if (ec) fail_user("{}: cannot read external data file '{}': {}", where, file.string(), ec.message());
  int64_t file_size = static_cast<int64_t>(size);
  int64_t length = ref.length < 0 ? file_size - ref.offset : ref.length;
  if (ref.offset > file_size || length < 0 || length > file_size - ref.offset) {
    fail_user("{}: external data range offset {} length {} lies outside '{}' ({} bytes)", where, ref.offset, length,
              file.string(), file_size);
  }
  if (expected && length != *expected) {
    fail_user("{}: external data in '{}' has {} bytes at offset {}, but its dims and element type need {}", where,
              ref.location, length, ref.offset, *expected);
  }
  require_memory(static_cast<size_t>(length), where);
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
    const fs::path file = resolve_inside(model_dir, ref, where);
    init.set_raw_data(read_range(file, ref, expected_bytes(init, where), where));
    init.clear_external_data();
    init.set_data_location(onnx::TensorProto::DEFAULT);
  }
}

}  // namespace tilefuse::frontend
