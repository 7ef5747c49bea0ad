#include "codegen/kernel_emitter.h"

#include <algorithm>
#include <map>
#include <set>

#include "codegen/cpp_names.h"
#include "codegen/kernel_schedule.h"
#include "fusion/iteration_space.h"
#include "fusion/loop_nest.h"
#include "codegen/pointwise_expr.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "tiling/kernel_profile.h"

namespace tilefuse::codegen {

namespace {

using fusion::Level;
using fusion::LoopAxis;
using fusion::LoopNest;
using fusion::build_loop_nest;

// Jit kernels give each worker about this many blocks, so uneven progress evens out.
constexpr int64_t kJitBlocksPerWorker = 4;
// A column reduction's accumulators are arrays of the column tile; a tiling without one (the
// tiling space always gives one) gets this many columns.
constexpr int64_t kFallbackColumnReductionTile = 256;

bool is_mask(const Value* v) { return v->dtype == DType::boolean; }

// Ops whose value at a point of the domain is their input's value there: Transpose, Slice, Expand
// (their input is read through the index map, fusion/iteration_space.h) and views (the
// iteration space spans both shapes).
bool passes_value_through(const Node& n) {
  return n.op == "Transpose" || n.op == "Slice" || n.op == "Expand" || fusion::is_view_op(n);
}

// Accumulator type of each reduction op: one for a row, or (`columns`) one per column of a tile.
std::string accumulator_type(const Node& n, bool columns) {
  std::string kind;
  if (n.op == "ReduceSum" || n.op == "ReduceMean") kind = "Sum";
  if (n.op == "ReduceMax") kind = "Max";
  if (n.op == "ReduceMin") kind = "Min";
  if (n.op == "ReduceProd") kind = "Prod";
  if (kind.empty()) fail_internal("code generation: no accumulator for {}", n.describe());
  return columns ? "tf::Column" + kind + "Acc<kColumnTile>" : "tf::" + kind + "Acc";
}

// Text with indentation, so the generated code reads like hand-written code.
class CodeWriter {
 public:
  void line(const std::string& text = "") {
    if (!text.empty()) out_ += std::string(static_cast<size_t>(indent_) * 2, ' ') + text;
    out_ += '\n';
  }
  void open(const std::string& text) {
    line(text);
    ++indent_;
  }
  void close(const std::string& text = "}") {
    --indent_;
    line(text);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
  int indent_ = 0;
};

class KernelEmitter {
 public:
  KernelEmitter(KernelSchedule schedule, int64_t stream_above_bytes)
      : s_(std::move(schedule)), stream_above_bytes_(stream_above_bytes) {}

  KernelSource emit() {
    emit_header();
    emit_abi_functions();
    emit_run_blocks();
    std::vector<Dim> elements;
    for (const Value* v : buffers_) elements.push_back(buffer_elements(v));
    return {k_.name, w_.take(), buffers_, elements, symbols_};
  }

 private:
  Dim buffer_elements(const Value* v) const {
    const Dim own = num_elements(v->shape);
    const fusion::TensorAccess& access = k_.space.access.at(v);
    if (!is_output(v) || access.level != Level::Full) return own;
    Dim last = access.offset;
    for (size_t d = 0; d < access.strides.size(); ++d) last = last + (k_.space.domain[d] - Dim(1)) * access.strides[d];
    const auto written = (last + Dim(1)).const_value(), held = own.const_value();
    return written && held && *written > *held ? last + Dim(1) : own;
  }

  // ---- types ----

  // The C++ type an expression of `n` computes in: its first non-bool operand's (a comparison,
  // a Cast, Where's branches), else its output's. Float-lane kernels compute everything in V.
  std::string value_type(const Node& n) const {
    if (!native_) return "V";
    for (const Value* in : operands_of(n)) {
      if (in != nullptr && in->dtype != DType::boolean) return cpp_compute_type(in->dtype);
    }
    return cpp_compute_type(n.outputs[0]->dtype);
  }

  // A native kernel converts each integer result to its element type, so that small integers
  // wrap where the op says (C++ computes int8 + int8 in int).
  std::string typed_result(const Node& n, const std::string& expr) const {
    const DType out = n.outputs[0]->dtype;
    return native_ && is_integer(out) ? "static_cast<" + cpp_storage_type(out) + ">(" + expr + ")" : expr;
  }



  bool is_output(const Value* v) const { return std::find(k_.outputs.begin(), k_.outputs.end(), v) != k_.outputs.end(); }

  std::string var(const Value* v) {
    auto it = var_names_.find(v);
    if (it != var_names_.end()) return it->second;
    std::string name = fmt::format("v{}", var_names_.size());
    var_names_[v] = name;
    return name;
  }

  std::string buf(const Value* v) const { return fmt::format("b{}", buffer_index_.at(v)); }
  // The buffer's place for the current row: the unit's row, or in a block of rows
  // (blocks_rows()) the row being computed.
  std::string row(const Value* v) const { return buf(v) + (in_sub_row_ ? "_sub" : "_row"); }

  // ---- emission ----

  void emit_header() {
    // The source names no tensor or node of the model (only op types and buffer slots), so equal
    // kernels of different models are one cache entry.
    w_.line("// Generated by tilefuse: " + k_.name);
    std::string ops;
    for (const Node* n : k_.nodes) ops += " " + n->op;
    w_.line("// ops:" + ops);
    std::string domain = "// domain " + shape_to_string(k_.space.domain);
    if (!k_.space.reduced_axes.empty()) {
      domain += ", reduced axes";
      for (int64_t a : k_.space.reduced_axes) domain += fmt::format(" {}", a);
    }
    if (columns_) {
      w_.line(domain + fmt::format("; column reduction: {} outer x {} reduced x {} columns, {} pass(es)",
                                   nest_.outer_count().to_string(), nest_.reduced_count().to_string(),
                                   column_axis().extent.to_string(), num_passes_));
    } else {
      w_.line(domain + fmt::format("; loop: {} outer x {} inner, {} pass(es){}", nest_.outer_count().to_string(),
                                   nest_.inner_count().to_string(), num_passes_,
                                   blocks_rows() ? "; rows in blocks of tf::kLanes, inputs read across rows "
                                                   "transposed in registers"
                                                 : ""));
    }
    for (const Value* v : buffers_) {
      std::string inside;  // a part stored at a larger tensor's strides (a Concat's)
      const Dim elements = buffer_elements(v);
      if (!(elements == num_elements(v->shape))) {
        const fusion::TensorAccess& access = k_.space.access.at(v);
        std::vector<std::string> strides;
        for (const Dim& d : access.strides) strides.push_back(d.to_string());
        inside = fmt::format(", inside {} elements at strides [{}] from element {}", elements.to_string(),
                             fmt::join(strides, ", "), access.offset.to_string());
      }
      w_.line(fmt::format("// buffers[{}] {} {}{}", buffer_index_.at(v), is_output(v) ? "out" : "in ", v->type_string(), inside));
    }
    if (!symbols_.empty()) {
      std::string syms;
      for (size_t i = 0; i < symbols_.size(); ++i) syms += fmt::format(" [{}]={}", i, symbols_[i]);
      w_.line("// symbols:" + syms);
    }
    if (jit_) {
      const std::string stores = !tiling_.stream_stores ? "0"
                                 : streams_by_size()    ? fmt::format("above {} output bytes", stream_above_bytes_)
                                                        : "1";
      w_.line(fmt::format("// tiling: jit, blocks split at launch; column tile {}, non-temporal stores {}, prefetch {}",
                          column_tile(), stores, tiling_.prefetch_ahead));
    } else {
      w_.line("// tiling: " + tiling_.repr());
    }
    if (native_) w_.line("// values keep their element types: a scalar loop that the compiler vectorises");
    w_.line("#include \"tilefuse_kernel.h\"");
    w_.line();
    w_.open("namespace {");
    w_.line("// Tiling parameters: the only numbers the tuner changes between candidates.");
    if (jit_) {
      w_.line(fmt::format("constexpr int64_t kBlocksPerWorker = {};  // the block split is made at launch",
                          kJitBlocksPerWorker));
    } else {
      w_.line(fmt::format("constexpr int64_t kUnitsPerBlock = {};", tiling_.units_per_block));
    }
    w_.line(fmt::format("constexpr int64_t kColumnTile = {};  // 0: whole rows", column_tile()));
    w_.line(fmt::format("constexpr bool kStreamStores = {};  // non-temporal stores of full-size outputs",
                        tiling_.stream_stores ? "true" : "false"));
    if (streams_by_size()) {
      w_.line(fmt::format("constexpr int64_t kStreamAboveBytes = {};  // ...where the outputs outgrow the caches",
                          stream_above_bytes_));
    }
    w_.line(fmt::format("constexpr int64_t kPrefetchAhead = {};  // {}; 0: no software prefetch", tiling_.prefetch_ahead,
                        columns_ ? "reduced rows" : "elements"));
    w_.close("}  // namespace");
    w_.line();
  }

  // Units in column-tile-major order, for loads strided along the vectorised axis
  // (fusion::LoopNest::walks_across_rows).
  bool column_tiles_down_rows() const { return column_tile() > 0 && nest_.walks_across_rows(k_.inputs); }

  int64_t column_tile() const {
    if (!nest_.tiles_columns()) return 0;
    if (columns_ && tiling_.column_tile <= 0) return kFallbackColumnReductionTile;
    return tiling_.column_tile;
  }

  void bind_symbols() {
    if (symbols_.empty()) {
      w_.line("(void)symbols;");
      return;
    }
    for (size_t i = 0; i < symbols_.size(); ++i) {
      w_.line(fmt::format("const int64_t {} = symbols[{}];", symbol_variable(symbols_[i]), i));
    }
  }

  const LoopAxis& column_axis() const { return nest_.inner.back(); }

  void emit_counts() {
    if (blocks_rows()) {
      Dim others = 1;
      for (size_t a = 0; a + 1 < nest_.outer.size(); ++a) others = others * nest_.outer[a].extent;
      w_.line(fmt::format("const int64_t outer = {} * {};  // blocks of tf::kLanes rows", cpp_int_expr(others),
                          row_blocks_expr()));
    } else {
      w_.line("const int64_t outer = " + cpp_int_expr(nest_.outer_count()) + ";");
    }
    if (column_tile() > 0) {
      w_.line("const int64_t columns = " + cpp_int_expr(column_axis().extent) + ";");
      w_.line("const int64_t column_tiles = tf::ceil_div(columns, kColumnTile);");
    } else {
      w_.line("const int64_t column_tiles = 1;");
    }
    w_.line("const int64_t units = outer * column_tiles;");
    if (jit_) {
      // At least 1: a symbol bound to 0 (an empty batch) leaves no units, and so no blocks.
      w_.line("const int64_t blocks_wanted = std::max<int64_t>(1, workers * kBlocksPerWorker);");
      w_.line("const int64_t units_per_block = std::max<int64_t>(1, tf::ceil_div(units, blocks_wanted));");
    } else {
      // The tiling counts rows; a unit of a block of rows is tf::kLanes of them.
      w_.line(blocks_rows() ? "const int64_t units_per_block = std::max<int64_t>(1, kUnitsPerBlock / tf::kLanes);"
                            : "const int64_t units_per_block = kUnitsPerBlock;");
      w_.line("(void)workers;");
    }
  }

  void emit_abi_functions() {
    w_.line("TF_EXPORT int tf_abi_version() { return TILEFUSE_KERNEL_ABI_VERSION; }");
    w_.line();
    w_.open("TF_EXPORT int64_t tf_num_blocks(const int64_t* symbols, int64_t workers) {");
    bind_symbols();
    emit_counts();
    w_.line("return tf::ceil_div(units, units_per_block);");
    w_.close();
    w_.line();
    w_.open("TF_EXPORT size_t tf_scratch_bytes(const int64_t* symbols) {");
    // A kernel with gathers reports an index out of range at the start of its scratch.
    const std::string error_bytes = k_.space.gathers.empty() ? "" : "tf::kGatherErrorBytes + ";
    if (scratch_slot_.empty()) {
      w_.line("(void)symbols;");
      w_.line(fmt::format("return {};", k_.space.gathers.empty() ? "0" : "tf::kGatherErrorBytes"));
    } else {
      bind_symbols();
      w_.line(fmt::format("return {}size_t({}) * {} * sizeof(float);", error_bytes, scratch_row_elements(),
                          scratch_slot_.size()));
    }
    w_.close();
    w_.line();
  }

  // One scratch row per value, padded to whole cache lines.
  std::string scratch_row_elements() const { return "(" + cpp_int_expr(nest_.inner_count()) + " + 15) / 16 * 16"; }

  void emit_run_blocks() {
    w_.open(
        "TF_EXPORT void tf_run_blocks(void* const* buffers, const int64_t* symbols, int64_t workers, int64_t "
        "first_block, int64_t end_block, void* scratch) {");
    bind_symbols();
    if (streams_by_size()) {
      // The launch's half of the tiling: the kernel is instantiated with and without non-temporal
      // stores, and the run's output bytes choose (the cost model's rule, at the run's sizes).
      // The buffer pointers are declared inside: captured, they lost __restrict, and a column
      // reduction ran 1.5x slower.
      w_.open("auto run_units = [&](auto streaming) {");
      w_.line("constexpr bool kStreamStores = decltype(streaming)::value;");
    }
    for (const Value* v : buffers_) {
      std::string type = cpp_storage_type(v->dtype);
      std::string cv = is_output(v) ? "" : "const ";
      w_.line(fmt::format("{0}{1}* __restrict {2} = static_cast<{0}{1}*>(buffers[{3}]);", cv, type, buf(v),
                          buffer_index_.at(v)));
    }
    if (!k_.space.gathers.empty()) {
      w_.line("// [gather number, index] of an index out of range, zeroed by the runtime and read after the run");
      w_.line("int64_t* const gather_error = static_cast<int64_t*>(scratch);");
    }
    if (scratch_slot_.empty()) {
      if (k_.space.gathers.empty()) w_.line("(void)scratch;");
    } else {
      w_.line("const int64_t scratch_row = " + scratch_row_elements() + ";");
      const std::string rows = k_.space.gathers.empty()
                                   ? "static_cast<float*>(scratch)"
                                   : "reinterpret_cast<float*>(static_cast<char*>(scratch) + tf::kGatherErrorBytes)";
      // In slot order (slots follow node order): naming the values in the map's pointer order
      // made the kernel text, and so its cache key, differ from one process to the next.
      std::vector<const Value*> by_slot(scratch_slot_.size());
      for (const auto& [v, slot] : scratch_slot_) by_slot[static_cast<size_t>(slot)] = v;
      for (size_t slot = 0; slot < by_slot.size(); ++slot) {
        w_.line(fmt::format("float* __restrict s{} = {} + {} * scratch_row;  // row of {}", slot, rows, slot,
                            var(by_slot[slot])));
      }
    }
    emit_counts();
    w_.line("const int64_t unit_end = std::min(units, end_block * units_per_block);");
    w_.open("for (int64_t unit = first_block * units_per_block; unit < unit_end; ++unit) {");
    emit_unit_setup();
    emit_passes();
    w_.close();
    w_.line("if constexpr (kStreamStores) tf::stream_fence();");
    if (streams_by_size()) {
      w_.close("};");
      w_.line(fmt::format("const int64_t output_bytes = {};", cpp_int_expr(output_bytes())));
      w_.line("if (output_bytes > kStreamAboveBytes) run_units(std::true_type{});");
      w_.line("else run_units(std::false_type{});");
    }
    w_.close();
  }

  // Whether the kernel chooses its store kind at launch (a jit kernel whose tiling streams).
  bool streams_by_size() const { return jit_ && tiling_.stream_stores && stream_above_bytes_ > 0; }

  // Bytes the kernel's outputs take, in the symbols (what kernel_profile counts as write bytes).
  Dim output_bytes() const {
    Dim bytes = 0;
    for (const Value* out : k_.outputs) bytes = bytes + num_elements(out->shape) * Dim(int64_t(dtype_size(out->dtype)));
    return bytes;
  }

  // Outer coordinates of the unit, each buffer's row pointer, and the unit's column range.
  void emit_unit_setup() {
    if (column_tiles_down_rows()) {
      w_.line("int64_t rest = unit % outer;  // down the rows of one column tile, then the next tile");
    } else {
      w_.line("int64_t rest = unit / column_tiles;");
    }
    std::vector<std::string> coords(nest_.outer.size());
    for (size_t a = nest_.outer.size(); a-- > 0;) {
      coords[a] = fmt::format("o{}", a);
      // In blocks of rows, the last outer axis counts blocks: its coordinate is a block's first row.
      const bool blocked = blocks_rows() && a + 1 == nest_.outer.size();
      const std::string scale = blocked ? " * tf::kLanes" : "";
      if (a == 0) {
        w_.line(fmt::format("const int64_t o0 = rest{};", scale));
      } else {
        std::string extent = blocked ? row_blocks_expr() : cpp_int_expr(nest_.outer[a].extent);
        w_.line(fmt::format("const int64_t o{} = rest % {}{};", a, extent, scale));
        w_.line(fmt::format("rest /= {};", extent));
      }
    }
    if (nest_.outer.empty()) w_.line("(void)rest;");
    if (blocks_rows()) {
      w_.line(fmt::format("const int64_t block_rows = std::min<int64_t>(tf::kLanes, {} - o{});",
                          cpp_int_expr(nest_.outer.back().extent), nest_.outer.size() - 1));
    }
    for (const Value* v : buffers_) {
      std::string offset;
      const Dim& origin = k_.space.access.at(v).offset;  // a Slice's start
      if (!(origin == Dim(0))) offset = cpp_int_expr(origin);
      for (size_t a = 0; a < nest_.outer.size(); ++a) {
        const Dim& s = nest_.outer[a].strides.at(v);
        if (s == Dim(0)) continue;
        offset += (offset.empty() ? "" : " + ") + coords[a] + (s == Dim(1) ? "" : " * " + cpp_int_expr(s));
      }
      std::string cv = is_output(v) ? "" : "const ";
      w_.line(fmt::format("{}{}* {} = {}{};", cv, cpp_storage_type(v->dtype), row(v), buf(v),
                          offset.empty() ? "" : " + (" + offset + ")"));
    }
    if (column_tile() > 0) {
      w_.line(column_tiles_down_rows() ? "const int64_t c_begin = (unit / outer) * kColumnTile;"
                                       : "const int64_t c_begin = (unit % column_tiles) * kColumnTile;");
      w_.line("const int64_t c_end = std::min(columns, c_begin + kColumnTile);");
    } else {
      w_.line("const int64_t c_begin = 0;");
      w_.line("const int64_t c_end = " + cpp_int_expr(column_axis().extent) + ";");
    }
  }

  void emit_passes() {
    for (int p = 0; p < num_passes_; ++p) {
      emit_row_level(p);
      emit_pass(p);
    }
    emit_row_level(num_passes_);
  }

  // Row-level work that becomes possible before pass p: reduction results, row-level loads,
  // row-level pointwise ops and their stores.
  void emit_row_level(int p) {
    std::vector<const Node*> work;
    for (const Node* n : k_.nodes) {
      const Value* out = n->outputs[0];
      if (is_reduction(*n) ? reduction_pass_.at(n) + 1 == p : s_.level_of(out) == Level::Reduced && ready_after_.at(out) == p) {
        work.push_back(n);
      }
    }
    if (work.empty()) return;
    if (columns_) return emit_column_level(work, p);
    for (const Node* n : work) is_reduction(*n) ? emit_reduction_result(*n) : emit_row_node(*n);
  }

  // A column reduction's row-level values are one per column of the tile: computed in a loop
  // over the tile's columns, and kept in arrays (`<name>_col`) where later passes need them.
  void emit_column_level(const std::vector<const Node*>& work, int p) {
    for (const Node* n : work) {
      if (used_after_level(n->outputs[0], p)) w_.line(fmt::format("alignas(64) float {}_col[kColumnTile];", var(n->outputs[0])));
    }
    w_.open("tf::for_lanes(c_end - c_begin, [&](auto lane_tag, int64_t lane) {");
    w_.line("using V = decltype(lane_tag);");
    w_.line("const int64_t i = c_begin + lane;");
    loaded_.clear();
    for (const Node* n : work) {
      const Value* out = n->outputs[0];
      if (is_reduction(*n)) {
        std::string result = fmt::format("acc{}.template result<V>(lane)", var(out));
        if (n->op == "ReduceMean") result += fmt::format(" / V(float({}))", cpp_int_expr(nest_.reduced_count()));
        w_.line(fmt::format("const auto {} = {};  // {}", var(out), result, n->op));
      } else {
        std::vector<std::string> operands;
        for (const Value* in : operands_of(*n)) operands.push_back(in == nullptr ? "" : column_operand(in));
        w_.line(fmt::format("const auto {} = {};  // {}", var(out), pointwise_expr(*n, operands, "V"), n->op));
      }
      loaded_.insert(out);
      if (used_after_level(out, p)) {
        std::string value = is_mask(out) ? fmt::format("tf::select({}, V(1.0f), V(0.0f))", var(out)) : var(out);
        w_.line(fmt::format("tf::store({}_col + lane, {});", var(out), value));
      }
      if (is_output(out)) emit_store(out);
    }
    w_.close("});");
  }

  // Whether a row-level value made at level p is read by a pass or by a later row level.
  bool used_after_level(const Value* v, int p) const {
    return std::any_of(v->users.begin(), v->users.end(), [&](const Node* user) {
      if (std::find(k_.nodes.begin(), k_.nodes.end(), user) == k_.nodes.end()) return false;
      const Value* out = user->outputs[0];
      return is_reduction(*user) || s_.level_of(out) == Level::Full || ready_after_.at(out) != p;
    });
  }

  // A row-level operand inside a column loop (or a pass body of a column reduction): made in
  // this loop, kept in its column array, or loaded.
  std::string column_operand(const Value* in) {
    if (loaded_.count(in)) return var(in);
    if (!s_.internal(in)) return load_operand(in);
    loaded_.insert(in);
    std::string load = fmt::format("tf::load<V>({}_col + lane)", var(in));
    if (is_mask(in)) load = "(" + load + " != V(0.0f))";
    w_.line(fmt::format("const auto {} = {};", var(in), load));
    return var(in);
  }

  std::string row_operand(const Value* in) {
    if (s_.internal(in)) return var(in);
    if (!row_loaded_.insert(in).second) return var(in);
    if (native_ && in->constant && in->constant->numel() == 1 && (is_integer(in->dtype) || is_mask(in))) {
      // A literal: the compiler turns a division by it into a multiplication and vectorises it.
      w_.line(fmt::format("constexpr {} {} = {};  // buffers[{}]", cpp_storage_type(in->dtype), var(in),
                          in->constant->get_i64(0), buffer_index_.at(in)));
      return var(in);
    }
    std::string load = native_ ? fmt::format("tf::to_compute(*{})", row(in))
                       : is_mask(in) ? fmt::format("*{}", row(in))
                                     : fmt::format("tf::to_f32(*{})", row(in));
    w_.line(fmt::format("const auto {} = {};", var(in), load));
    return var(in);
  }

  void emit_row_node(const Node& n) {
    std::vector<std::string> operands;
    for (const Value* in : operands_of(n)) operands.push_back(in == nullptr ? "" : row_operand(in));
    const Value* out = n.outputs[0];
    w_.line(fmt::format("const auto {} = {};  // {}", var(out), pointwise_expr(n, operands, "float"), n.op));
    if (is_output(out)) w_.line(fmt::format("tf::store({}, {});", row(out), var(out)));
  }

  void emit_reduction_result(const Node& n) {
    const Value* out = n.outputs[0];
    std::string result = fmt::format("acc{}.result()", var(out));
    if (n.op == "ReduceMean") result = fmt::format("{} / float({})", result, cpp_int_expr(nest_.reduced_count()));
    w_.line(fmt::format("const float {} = {};  // {}", var(out), result, n.op));
    if (is_output(out)) w_.line(fmt::format("tf::store({}, {});", row(out), var(out)));
  }

  // The inner loop nest of one pass: plain loops over all inner axes but the last, which is
  // walked with tf::for_lanes_packed (packs, then vectors, then a scalar tail), or with
  // tf::for_lanes (no packs) where rows are too short for one.
  void emit_pass(int p) {
    if (blocks_rows()) return emit_block_pass(p);
    w_.line(fmt::format("// pass {}", p));
    emit_pass_preamble(p);
    w_.open("{");
    size_t depth = nest_.inner.size() - 1;
    for (size_t a = 0; a < depth; ++a) {
      w_.open(fmt::format("for (int64_t j{0} = 0; j{0} < {1}; ++j{0}) {{", a, cpp_int_expr(nest_.inner[a].extent)));
    }
    if (native_) {
      w_.open("for (int64_t i = c_begin; i < c_end; ++i) {");
    } else {
      const Value* streamed = rows_can_hold_a_pack() ? streamed_output(p) : nullptr;
      if (streamed != nullptr) {
        // Rows that start off a vector boundary (1500 floats) would stream no vector.
        w_.line(fmt::format("const int64_t head = kStreamStores ? tf::lanes_to_alignment({} + c_begin) : 0;  // to a "
                            "vector boundary",
                            base_pointer(streamed)));
        w_.open("tf::for_lanes_packed_after(c_end - c_begin, head, [&](auto lane_tag, int64_t lane) {");
      } else {
        w_.open(fmt::format("tf::{}(c_end - c_begin, [&](auto lane_tag, int64_t lane) {{",
                            rows_can_hold_a_pack() ? "for_lanes_packed" : "for_lanes"));
      }
      w_.line("using V = decltype(lane_tag);");
      w_.line("const int64_t i = c_begin + lane;");
      if (p == prefetch_pass_ && tiling_.prefetch_ahead > 0 && !streamed_.empty()) emit_prefetch();
    }
    loaded_.clear();
    emit_pass_body(p);
    w_.close(native_ ? "}" : "});");
    if (columns_) {
      // A reduced row of the tile is in: sums fold their f32 partials now and then.
      for (const Node* n : k_.nodes) {
        if (is_reduction(*n) && s_.in_pass(*n, p)) w_.line(fmt::format("acc{}.end_row(c_end - c_begin);", var(n->outputs[0])));
      }
    }
    for (size_t a = 0; a < depth; ++a) w_.close();
    for (const Node* n : k_.nodes) {
      if (columns_ && is_reduction(*n) && s_.in_pass(*n, p)) w_.line(fmt::format("acc{}.finish(c_end - c_begin);", var(n->outputs[0])));
    }
    w_.close();
  }

  // Before a pass's loops: its accumulators, and the row-level inputs it broadcasts (loaded once
  // per unit) with the divisions by them.
  void emit_pass_preamble(int p) {
    for (const Node* n : k_.nodes) {
      if (!s_.in_pass(*n, p)) continue;
      if (is_reduction(*n)) w_.line(fmt::format("{} acc{};", accumulator_type(*n, columns_), var(n->outputs[0])));
      for (const Value* in : operands_of(*n)) {
        if (in != nullptr && !s_.internal(in) && s_.constant_over_row(in)) row_operand(in);
      }
      if (divides_by_row_value(*n)) {
        w_.line(fmt::format("const tf::RowDivisor {}({});", row_divisor(*n), var(n->input(1))));
      }
      if (native_ && fusion::is_gather_op(*n)) row_gathered_offset(*n);
    }
  }

  std::string gathered_offset_var(int64_t number) const { return fmt::format("gather{}_offset", number); }

  // A native kernel's gather whose index is the same along the whole row (an embedding lookup:
  // one id per row of the hidden dim): its offset checked and found once per unit. Checked in
  // the loop, the branch to the error report kept the compiler from vectorising it.
  void row_gathered_offset(const Node& n) {
    const auto& gathers = k_.space.gathers;
    const auto it = std::find_if(gathers.begin(), gathers.end(), [&](const auto& g) { return g.first == n.outputs[0]; });
    if (it == gathers.end() || !s_.constant_over_row(it->second.indices)) return;
    const fusion::GatherLoad& g = it->second;
    if (!row_loaded_.insert(g.indices).second) return;
    const int64_t number = it - gathers.begin() + 1;
    w_.line(fmt::format("const int64_t {} = tf::gathered_offset(int64_t(*{}), {}, {}, gather_error, {});",
                        gathered_offset_var(number), row(g.indices), cpp_int_expr(g.axis_stride), cpp_int_expr(g.extent),
                        number));
  }

  // ---- blocks of rows (a Transpose materialised) ----


  bool blocks_rows() const { return !transposed_.empty(); }

  // The blocks of rows along the last outer axis.
  std::string row_blocks_expr() const {
    return fmt::format("tf::ceil_div({}, tf::kLanes)", cpp_int_expr(nest_.outer.back().extent));
  }

  // A pass over a block of rows: whole tf::kLanes x tf::kLanes blocks first (the inputs read
  // across rows transposed in registers, then each row of the block computed from them), then
  // the columns left and the rows of a last partial block one row at a time, with strided loads.
  void emit_block_pass(int p) {
    w_.line(fmt::format("// pass {}: blocks of tf::kLanes x tf::kLanes", p));
    emit_pass_preamble(p);  // row-level values are the same for every row of the block
    w_.open("{");
    w_.line("int64_t blocked = 0;  // columns done in whole blocks");
    w_.open("if (block_rows == tf::kLanes) {");
    w_.open("for (; blocked + tf::kLanes <= c_end - c_begin; blocked += tf::kLanes) {");
    w_.line("const int64_t i = c_begin + blocked;");
    for (const Value* in : transposed_) {
      const std::string stride = cpp_int_expr(nest_.inner.back().strides.at(in));
      w_.line(fmt::format("tf::VF {}_t[tf::kLanes];  // buffers[{}], transposed", var(in), buffer_index_.at(in)));
      w_.line(fmt::format("tf::load_transposed({} + i * {}, {}, {}_t);", row(in), stride, stride, var(in)));
    }
    w_.open("for (int64_t r = 0; r < tf::kLanes; ++r) {");
    w_.line("using V = tf::VF;");
    emit_block_row_body(p, true);
    w_.close();
    w_.close();
    w_.close();
    w_.open("for (int64_t r = 0; r < block_rows; ++r) {");
    w_.open("tf::for_lanes(c_end - c_begin - blocked, [&](auto lane_tag, int64_t lane) {");
    w_.line("using V = decltype(lane_tag);");
    w_.line("const int64_t i = c_begin + blocked + lane;");
    emit_block_row_body(p, false);
    w_.close("});");
    w_.close();
    w_.close();
  }

  // Row r of a block: each buffer's place in that row, then the pass body; inputs read across
  // rows come from their transposed blocks where `from_blocks`.
  void emit_block_row_body(int p, bool from_blocks) {
    for (const Value* v : buffers_) {
      const Dim& down = nest_.outer.back().strides.at(v);
      std::string cv = is_output(v) ? "" : "const ";
      w_.line(fmt::format("[[maybe_unused]] {}{}* {}_sub = {}_row{};", cv, cpp_storage_type(v->dtype), buf(v), buf(v),
                          down == Dim(0) ? "" : down == Dim(1) ? " + r" : " + r * " + cpp_int_expr(down)));
    }
    in_sub_row_ = true;
    loaded_.clear();
    if (from_blocks) {
      for (const Value* in : transposed_) {
        w_.line(fmt::format("const auto {0} = {0}_t[r];", var(in)));
        loaded_.insert(in);
      }
    }
    emit_pass_body(p);
    in_sub_row_ = false;
  }

  void emit_prefetch() {
    if (columns_) {
      // The hardware prefetchers follow a row within its 4 KiB page; a column tile's next row is
      // in another page, so it is asked for explicitly.
      w_.line("// the same columns kPrefetchAhead reduced rows ahead");
      for (const Value* in : streamed_) {
        w_.line(fmt::format("tf::prefetch<V>({} + i + kPrefetchAhead * {});", base_pointer(in),
                            cpp_int_expr(nest_.inner[nest_.inner.size() - 2].strides.at(in))));
      }
      return;
    }
    if (num_passes_ > 1) w_.line("// the next rows' inputs, fetched in the pass with the most arithmetic");
    const std::string ahead = row_prefetch_at_run_size() ? cpp_int_expr(nest_.inner_count()) : "kPrefetchAhead";
    if (row_prefetch_at_run_size()) w_.line("// one row ahead, at the run's row length");
    for (const Value* in : streamed_) w_.line(fmt::format("tf::prefetch<V>({} + i + {});", base_pointer(in), ahead));
  }

  // A reducing row kernel prefetches one row ahead (the tiling space's only distance for it); a
  // jit kernel's rows have the run's length, not the planning size's (16x longer for a batch of
  // 8 against 128: every prefetch fell past the data).
  bool row_prefetch_at_run_size() const { return jit_ && nest_.reduces && !columns_; }

  // Pointer to `v` at the current outer row and inner loop indices j0.. (not yet i).
  std::string base_pointer(const Value* v) const {
    std::string offset = outer_inner_offset(v);
    return offset == "0" ? row(v) : row(v) + " + (" + offset + ")";
  }

  // Element offset of `v` from the inner loop indices j0.. (all inner axes but the last).
  std::string outer_inner_offset(const Value* v) const {
    std::string offset;
    for (size_t a = 0; a + 1 < nest_.inner.size(); ++a) {
      const Dim& s = nest_.inner[a].strides.at(v);
      if (s == Dim(0)) continue;
      offset += fmt::format("{}j{}{}", offset.empty() ? "" : " + ", a, s == Dim(1) ? "" : " * " + cpp_int_expr(s));
    }
    return offset.empty() ? "0" : offset;
  }

  std::string scratch_index() const {
    std::string idx;
    for (size_t a = 0; a + 1 < nest_.inner.size(); ++a) {
      idx = idx.empty() ? fmt::format("j{}", a) : fmt::format("({}) * {} + j{}", idx, cpp_int_expr(nest_.inner[a].extent), a);
    }
    return idx.empty() ? "i" : fmt::format("({}) * {} + i", idx, cpp_int_expr(nest_.inner.back().extent));
  }

  // Loads an external full-level input (once per pass body).
  std::string full_operand(const Value* in, int p) {
    if (s_.internal(in)) {
      if (s_.level_of(in) == Level::Reduced) {
        return columns_ ? column_operand(in) : (is_mask(in) ? "tf::mask_bcast<V>(" : "V(") + var(in) + ")";
      }
      if (pass_of_.at(in) == p) return var(in);
      return columns_ ? recompute(in, p) : reload_from_scratch(in);
    }
    if ((s_.level_of(in) == Level::Reduced && !columns_) || (s_.constant_over_row(in) && row_loaded_.count(in))) {
      if (native_) return row_operand_in_body(in);
      return (is_mask(in) ? "tf::mask_bcast<V>(" : "V(") + row_operand_in_body(in) + ")";
    }
    return load_operand(in);
  }

  // A full-size value of an earlier pass, in a column reduction: computed again from its
  // operands (it would need a scratch of the whole unit, reduced rows x column tile, to keep).
  std::string recompute(const Value* v, int p) {
    if (loaded_.count(v)) return var(v);
    const Node& n = *v->producer;
    std::vector<std::string> operands;
    for (const Value* in : operands_of(n)) operands.push_back(in == nullptr ? "" : full_operand(in, p));
    std::string expr = fusion::is_gather_op(n)  ? gathered_load(n)
                       : passes_value_through(n) ? operands[0]
                                                 : pointwise_expr(n, operands, "V");
    w_.line(fmt::format("const auto {} = {};  // {}, computed again", var(v), expr, n.op));
    loaded_.insert(v);
    return var(v);
  }

  // The value gather `n` picks at the current element (fusion::GatherLoad): its data at
  // this point, with the index read here in place of the gathered axis's coordinate.
  std::string gathered_load(const Node& n) const {
    const auto& gathers = k_.space.gathers;
    const auto it = std::find_if(gathers.begin(), gathers.end(), [&](const auto& g) { return g.first == n.outputs[0]; });
    if (it == gathers.end()) fail_internal("code generation: {} is no gather of the kernel", n.describe());
    const fusion::GatherLoad& g = it->second;
    auto step = [&](const Value* v) { return nest_.inner.back().strides.at(v); };
    auto at = [&](const Value* v) {
      const Dim s = step(v);
      return s == Dim(0) ? base_pointer(v) : base_pointer(v) + " + i" + (s == Dim(1) ? "" : " * " + cpp_int_expr(s));
    };
    const int64_t number = it - gathers.begin() + 1;
    if (native_ && row_loaded_.count(g.indices)) {  // the row's offset, found before the loop
      return fmt::format("tf::to_compute(({})[{}])", at(g.data), gathered_offset_var(number));
    }
    if (native_) {  // one element at a time
      return fmt::format("tf::load_gathered_element({}, {}, {}, {}, gather_error, {})", at(g.data), at(g.indices),
                         cpp_int_expr(g.axis_stride), cpp_int_expr(g.extent), number);
    }
    return fmt::format("tf::load_gathered<V>({}, {}, {}, {}, {}, {}, gather_error, {})", at(g.data),
                       cpp_int_expr(step(g.data)), at(g.indices), cpp_int_expr(step(g.indices)), cpp_int_expr(g.axis_stride),
                       cpp_int_expr(g.extent), number);
  }

  // Loads an external input at the current element (once per loop body): contiguous, broadcast
  // or strided along the vectorised axis.
  std::string load_operand(const Value* in) {
    if (!loaded_.insert(in).second) return var(in);
    const Dim& last = nest_.inner.back().strides.at(in);
    std::string base = base_pointer(in);
    std::string load;
    if (native_) {
      load = last == Dim(0)   ? fmt::format("tf::to_compute(*{})", base)
             : last == Dim(1) ? fmt::format("tf::to_compute({}[i])", base)
                              : fmt::format("tf::to_compute({}[i * {}])", base, cpp_int_expr(last));
    } else if (is_mask(in)) {
      load = last == Dim(0) ? fmt::format("tf::load_mask_bcast<V>({})", base)
                            : last == Dim(1) ? fmt::format("tf::load_mask<V>({} + i)", base)
                                             : fmt::format("tf::load_mask_strided<V>({} + i * {}, {})", base,
                                                           cpp_int_expr(last), cpp_int_expr(last));
    } else {
      load = last == Dim(0) ? fmt::format("tf::load_bcast<V>({})", base)
                            : last == Dim(1) ? fmt::format("tf::load<V>({} + i)", base)
                                             : fmt::format("tf::load_strided<V>({} + i * {}, {})", base,
                                                           cpp_int_expr(last), cpp_int_expr(last));
    }
    w_.line(fmt::format("const auto {} = {};  // buffers[{}]", var(in), load, buffer_index_.at(in)));
    return var(in);
  }


  // A row-level external value used inside a pass body: loaded at row scope before the pass.
  std::string row_operand_in_body(const Value* in) {
    if (!row_loaded_.count(in)) fail_internal("code generation: row value '{}' used before it was loaded", in->name);
    return var(in);
  }

  std::string reload_from_scratch(const Value* in) {
    std::string name = var(in) + "_r";
    if (loaded_.insert(in).second) {
      std::string load = fmt::format("tf::load<V>(s{} + {})", scratch_slot_.at(in), scratch_index());
      if (is_mask(in)) load = "(" + load + " != V(0.0f))";
      w_.line(fmt::format("const auto {} = {};  // {} from scratch", name, load, var(in)));
    }
    return name;
  }

  // A float division of full-size values by a value constant over the row (Softmax's sum,
  // LayerNorm's standard deviation, a per-row or scalar divisor input such as GELU's sqrt(2)):
  // see tf::RowDivisor.
  bool divides_by_row_value(const Node& n) const {
    if (native_ || n.op != "Div" || !is_float(n.outputs[0]->dtype)) return false;
    if (s_.level_of(n.outputs[0]) != Level::Full) return false;
    if (columns_) return false;  // row-level values differ per column; recomputed values divide plainly
    const Value* divisor = n.input(1);
    return s_.internal(divisor) ? s_.level_of(divisor) == Level::Reduced : s_.constant_over_row(divisor);
  }

  std::string row_divisor(const Node& n) { return var(n.outputs[0]) + "_divisor"; }

  // The float output pass p stores whole rows of (through tf::store_output, which streams the
  // vectors it can), where p sums nothing: a pass that does may not reorder its lanes.
  const Value* streamed_output(int p) const {
    const Value* streamed = nullptr;
    for (const Node* n : k_.nodes) {
      if (!s_.in_pass(*n, p)) continue;
      if (is_reduction(*n)) return nullptr;
      const Value* out = n->outputs[0];
      if (streamed == nullptr && is_output(out) && tiling::has_streamed_stores(out->dtype) && stored_through_store_output(out)) {
        streamed = out;
      }
    }
    return streamed;
  }

  // Packs (4 vectors a step) interleave independent dependency chains, which pays for long
  // bodies (vector math) and short ones alike (fewer loop steps, reductions as trees); but each
  // instantiation costs compile time, so rows too short for the smallest pack (4 AVX2 vectors)
  // are not compiled for packs. Symbolic rows may be long: they are.
  bool rows_can_hold_a_pack() const {
    constexpr int64_t kSmallestPackFloats = 4 * 8;
    const std::optional<int64_t> row = nest_.inner.back().extent.const_value();
    return !row || *row >= kSmallestPackFloats;
  }

  void emit_pass_body(int p) {
    for (const Node* n : k_.nodes) {
      if (!s_.in_pass(*n, p)) continue;
      std::vector<std::string> operands;
      for (const Value* in : operands_of(*n)) operands.push_back(in == nullptr ? "" : full_operand(in, p));
      if (is_reduction(*n)) {
        w_.line(fmt::format("acc{}.add({}{});", var(n->outputs[0]), columns_ ? "lane, " : "", operands[0]));
        continue;
      }
      const Value* out = n->outputs[0];
      std::string expr = fusion::is_gather_op(*n) ? gathered_load(*n)
                         : passes_value_through(*n) ? operands[0]
                         : divides_by_row_value(*n) ? fmt::format("tf::divide({}, {})", operands[0], row_divisor(*n))
                                                    : typed_result(*n, pointwise_expr(*n, operands, value_type(*n)));
      w_.line(fmt::format("const auto {} = {};  // {}", var(out), expr, n->op));
      if (scratch_slot_.count(out)) {
        std::string value = is_mask(out) ? fmt::format("tf::select({}, V(1.0f), V(0.0f))", var(out)) : var(out);
        w_.line(fmt::format("tf::store(s{} + {}, {});", scratch_slot_.at(out), scratch_index(), value));
      }
      if (is_output(out)) emit_store(out);
    }
  }

  // Whether emit_store writes `out` (a vector kernel's output) through tf::store_output: whole
  // contiguous rows of a full-size value; a row-level one is small and never streamed.
  bool stored_through_store_output(const Value* out) const {
    return nest_.inner.back().strides.at(out) == Dim(1) && s_.level_of(out) != Level::Reduced;
  }

  void emit_store(const Value* out) {
    const Dim& last = nest_.inner.back().strides.at(out);
    std::string base = base_pointer(out);
    if (native_) {
      const std::string at = last == Dim(1) ? base + " + i" : base + " + i * " + cpp_int_expr(last);
      w_.line(fmt::format("tf::store_value({}, {});", at, var(out)));
    } else if (stored_through_store_output(out)) {
      w_.line(fmt::format("tf::store_output<kStreamStores>({} + i, {});", base, var(out)));
    } else if (last == Dim(1)) {
      w_.line(fmt::format("tf::store({} + i, {});", base, var(out)));  // row-level: small, never streamed
    } else {
      w_.line(fmt::format("tf::store_strided({} + i * {}, {}, {});", base, cpp_int_expr(last), cpp_int_expr(last), var(out)));
    }
  }

  const KernelSchedule s_;  // what to print; the names below are its parts
  const fusion::FusedKernel& k_ = *s_.kernel;
  const KernelTiling& tiling_ = s_.tiling;
  const bool jit_ = s_.jit;
  const LoopNest& nest_ = s_.nest;
  const bool columns_ = s_.columns;
  const bool native_ = s_.native;
  const std::vector<const Value*>& buffers_ = s_.buffers;
  const std::map<const Value*, int>& buffer_index_ = s_.buffer_index;
  const std::vector<std::string>& symbols_ = s_.symbols;
  const std::map<const Value*, int>& pass_of_ = s_.pass_of;
  const std::map<const Value*, int>& ready_after_ = s_.ready_after;
  const std::map<const Node*, int>& reduction_pass_ = s_.reduction_pass;
  const std::map<const Value*, int>& scratch_slot_ = s_.scratch_slot;
  const std::vector<const Value*>& streamed_ = s_.streamed;
  const std::vector<const Value*>& transposed_ = s_.transposed;
  const int num_passes_ = s_.num_passes;
  const int prefetch_pass_ = s_.prefetch_pass;
  const int64_t stream_above_bytes_;
  // Printing state.
  CodeWriter w_;
  std::map<const Value*, std::string> var_names_;
  std::set<const Value*> loaded_;      // loaded in the current pass body
  std::set<const Value*> row_loaded_;  // loaded at row scope in the current unit
  bool in_sub_row_ = false;            // emitting row r of a block of rows
};

}  // namespace

KernelSource emit_kernel(const fusion::FusedKernel& kernel, const KernelTiling& tiling, KernelVariant variant,
                         int64_t stream_above_bytes) {
  return KernelEmitter(schedule_kernel(kernel, tiling, variant), stream_above_bytes).emit();
}

}  // namespace tilefuse::codegen
