#include "driver/gemm_tuning.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "build/file_lock.h"
#include "build/hashing.h"
#include "io/atomic_file.h"
#include "ir/log.h"
#include "ir/shape.h"
#include "ir/tensor_compare.h"
#include "runtime/cpu_isa.h"
#include "runtime/cpu_wait.h"
#include "tune/autotuner.h"

namespace tilefuse::driver {

namespace {

// One change of the model's blocking; 0 leaves a field as the model has it.
struct Tweak {
  int64_t mc = 0, kc_times2 = 0, nb_times2 = 0, nc = 0;
};

runtime::GemmBlocking tweaked(const runtime::GemmBlocking& model, const Tweak& t) {
  runtime::GemmBlocking b = model;
  if (t.mc != 0) b.mc = std::min(model.mc, t.mc);
  if (t.kc_times2 != 0) b.kc = std::clamp<int64_t>(model.kc * t.kc_times2 / 2, 64, 2048);
  if (t.nb_times2 != 0)
    b.nb = std::max<int64_t>(runtime::kNR, model.nb * t.nb_times2 / 2 / runtime::kNR * runtime::kNR);
  if (t.nc != 0) b.nc = std::min(model.nc, t.nc);
  return b;
}

bool same(const runtime::GemmBlocking& a, const runtime::GemmBlocking& b) {
  return a.mc == b.mc && a.kc == b.kc && a.nc == b.nc && a.nb == b.nb;
}

// A convolution's constant weight is packed ahead of time as A: its tiles keep their rows whole
// (mc does not matter), and its unfolded input is packed nb columns at a time.
bool weight_is_a(const Node& node) {
  return (node.op == "Conv" || node.op == "FusedConv") && node.input(1)->constant.has_value();
}

std::string attributes_key(const Node& node) {
  std::string key;
  for (const auto& [name, attr] : node.attrs) {
    key += name + "=";
    std::visit(
        [&](const auto& a) {
          using T = std::decay_t<decltype(a)>;
          if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double> || std::is_same_v<T, std::string>) {
            key += fmt::format("{}", a);
          } else if constexpr (std::is_same_v<T, Tensor>) {
            key += a.summary();
          } else if constexpr (std::is_same_v<T, GraphRef>) {
            key += a->name;
          } else {
            key += fmt::format("{}", fmt::join(a, ","));
          }
        },
        attr);
    key += ";";
  }
  return key;
}

// Everything the winner depends on: what is multiplied, by how many workers, on which caches.
std::string tuning_key(const Node& node, const BlockingTuning& t,
                       const std::vector<runtime::GemmBlocking>& candidates) {
  std::string key = fmt::format("gemm blocking v1\nop={}\nattrs={}\n", node.op, attributes_key(node));
  for (const Value* v : node.inputs) {
    if (v == nullptr) {
      key += "input -\n";
      continue;
    }
    key += fmt::format("input {} {}{}\n", dtype_name(v->dtype), shape_to_string(v->shape),
                       v->constant.has_value() ? " constant" : "");
  }
  key += fmt::format("threads={} l1d={} l2={} isa={}\n", t.threads, t.l1d_bytes, t.l2_bytes,
                     isa_name(runtime::vector_isa()));
  for (const runtime::GemmBlocking& b : candidates) key += blocking_record(b) + "\n";
  return key;
}

std::string entry_dir(const Node& node, const BlockingTuning& t, const std::vector<runtime::GemmBlocking>& candidates) {
  std::string op = node.op;
  std::transform(op.begin(), op.end(), op.begin(), [](unsigned char c) { return std::tolower(c); });
  const std::string hash = build::md5_hex(tuning_key(node, t, candidates)).substr(0, 16);
  return (std::filesystem::path(t.cache_root) / "gemm_blocking" / (op + "_" + hash)).string();
}

// ---- the record ----

struct Record {
  runtime::GemmBlocking winner;
  int topn = 1;
};

std::string record_body(const Record& r) { return fmt::format("{}\ntopn={}\n", blocking_record(r.winner), r.topn); }

void write_record(const std::string& path, const Record& r) {
  const std::string body = record_body(r);
  io::write_file_atomically(path, body + "sha256=" + build::sha256_hex(body) + "\n");
}

std::optional<Record> read_record(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  auto invalid = [&](const std::string& why) -> std::optional<Record> {
    logger().warn("ignoring {}: {}; the GEMM is tuned again", path, why);
    return std::nullopt;
  };
  std::string winner, topn, checksum;
  if (!std::getline(in, winner) || !std::getline(in, topn) || !std::getline(in, checksum)) {
    return invalid("it is truncated (expected 3 lines)");
  }
  Record r;
  auto blocking = parse_blocking_record(winner);
  if (!blocking) return invalid(fmt::format("line 1 '{}' is not mc=..;kc=..;nc=..;nb=..", winner));
  r.winner = *blocking;
  if (std::sscanf(topn.c_str(), "topn=%d", &r.topn) != 1 || r.topn < 1) {
    return invalid(fmt::format("line 2 '{}' is not topn=<n>", topn));
  }
  if (checksum != "sha256=" + build::sha256_hex(record_body(r))) return invalid("its checksum does not match");
  return r;
}

// ---- measuring ----

// Inputs of the node's shapes: its constants (the weights the call packed), and a fixed
// pattern for the rest. A GEMM's time does not depend on the values it multiplies.
std::vector<Tensor> stand_in_inputs(const Node& node) {
  std::vector<Tensor> inputs;
  for (const Value* v : node.inputs) {
    if (v == nullptr) {
      inputs.emplace_back();
    } else if (v->constant.has_value()) {
      inputs.push_back(*v->constant);
    } else {
      Tensor t(v->dtype, static_dims(v->shape));
      for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, (i * 7 % 13) * 0.125 - 0.75);
      inputs.push_back(std::move(t));
    }
  }
  return inputs;
}

class BlockingBench : public tune::CandidateBench {
 public:
  BlockingBench(runtime::LibraryCall& call, const Node& node, std::vector<runtime::GemmBlocking> candidates,
                int threads)
      : call_(call), candidates_(std::move(candidates)), threads_(threads), inputs_(stand_in_inputs(node)) {
    for (const Value* out : node.outputs) outputs_.emplace_back(out->dtype, static_dims(out->shape));
  }

  int count() const override { return static_cast<int>(candidates_.size()); }
  void prepare() override { team_ = std::make_unique<runtime::MeasuringTeam>(threads_); }
  void run(int candidate) override {
    call_.set_blocking(candidates_.at(static_cast<size_t>(candidate)));
    call_.run(team_->team(), inputs_, outputs_);
  }
  void keep_as_reference() override {
    reference_.clear();
    for (const Tensor& t : outputs_) reference_.push_back(t.clone());
  }
  std::optional<std::string> differs_from_reference() override {
    for (size_t o = 0; o < outputs_.size(); ++o) {
      // Another depth block sums in another order: close, not bitwise equal.
      CompareResult r = compare_tensors(outputs_[o], reference_[o], {.rtol = 1e-4, .atol = 1e-5});
      if (!r.ok) return fmt::format("output {}: {}", o, r.message);
    }
    return std::nullopt;
  }
  double cpu_waiting_share() const override { return team_ ? team_->waiting_share() : 0; }

 private:
  runtime::LibraryCall& call_;
  std::vector<runtime::GemmBlocking> candidates_;
  int threads_;
  std::vector<Tensor> inputs_, outputs_, reference_;
  std::unique_ptr<runtime::MeasuringTeam> team_;
};

}  // namespace

std::string blocking_record(const runtime::GemmBlocking& b) {
  return fmt::format("mc={};kc={};nc={};nb={}", b.mc, b.kc, b.nc, b.nb);
}

std::optional<runtime::GemmBlocking> parse_blocking_record(const std::string& text) {
  runtime::GemmBlocking b;
  long long mc = 0, kc = 0, nc = 0, nb = 0;
  int used = 0;
  if (std::sscanf(text.c_str(), "mc=%lld;kc=%lld;nc=%lld;nb=%lld%n", &mc, &kc, &nc, &nb, &used) != 4 ||
      used != static_cast<int>(text.size()) || mc < runtime::kMR || kc < 1 || nc < runtime::kNR || nb < 0) {
    return std::nullopt;
  }
  b.mc = mc, b.kc = kc, b.nc = nc, b.nb = nb;
  return b;
}

std::vector<runtime::GemmBlocking> blocking_candidates(const Node& node, const runtime::GemmBlocking& model, int topn) {
  // Most promising first: the list is cut at topn.
  static const std::vector<Tweak> kWeightA = {
      {.kc_times2 = 4}, {.nb_times2 = 1}, {.kc_times2 = 1}, {.nb_times2 = 4}, {.kc_times2 = 4, .nb_times2 = 1}};
  static const std::vector<Tweak> kOthers = {{.mc = 96},  {.kc_times2 = 4}, {.mc = 96, .kc_times2 = 4},
                                             {.mc = 192}, {.nc = 1024},     {.nb_times2 = 1},
                                             {.mc = 48},  {.kc_times2 = 1}};
  std::vector<runtime::GemmBlocking> candidates = {model};
  for (const Tweak& t : weight_is_a(node) ? kWeightA : kOthers) {
    if (static_cast<int>(candidates.size()) >= topn) break;
    const runtime::GemmBlocking b = tweaked(model, t);
    if (std::none_of(candidates.begin(), candidates.end(),
                     [&](const runtime::GemmBlocking& c) { return same(b, c); })) {
      candidates.push_back(b);
    }
  }
  return candidates;
}

BlockingTuneResult tune_blocking(runtime::LibraryCall& call, const Node& node, const runtime::GemmBlocking& model,
                                 const BlockingTuning& tuning) {
  BlockingTuneResult result{model};
  const std::vector<runtime::GemmBlocking> candidates = blocking_candidates(node, model, tuning.topn);
  auto known = [](const Value* v) { return v == nullptr || is_static(v->shape); };
  const bool static_shapes = std::all_of(node.inputs.begin(), node.inputs.end(), known) &&
                             std::all_of(node.outputs.begin(), node.outputs.end(), known);
  if (candidates.size() < 2 || !static_shapes || !call.tunes_blocking()) return result;
  const std::string dir = entry_dir(node, tuning, candidates);
  std::filesystem::create_directories(dir);
  build::FileLock lock(dir + "/tune.lock");
  const std::string record_path = dir + "/optimize_tiling";
  if (auto record = read_record(record_path); record && record->topn >= tuning.topn) {
    result.blocking = record->winner, result.reused = true;
    call.set_blocking(result.blocking);
    return result;
  }
  BlockingBench bench(call, node, candidates, tuning.threads);
  const std::string name = fmt::format("{} {}", node.op, node.name);
  logger().info("Autotune {}: measuring {} blockings", name, candidates.size());
  const tune::AutotuneResult measured = tune::autotune(name, dir, bench);
  result.blocking = candidates.at(static_cast<size_t>(measured.best));
  result.measured = !measured.fell_back;
  result.withheld = !runtime::may_record(measured.cpu_waiting_share, name + "'s GEMM blocking");
  if (!result.withheld) write_record(record_path, {result.blocking, tuning.topn});
  call.set_blocking(result.blocking);
  return result;
}

}  // namespace tilefuse::driver
