#include "property/window_spec.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/printer.h"
#include "property/graph_assembly.h"

namespace tilefuse::property {
namespace {

const char* const kAutoPad[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};

int64_t effective(int64_t kernel, int64_t dilation) { return (kernel - 1) * dilation + 1; }

// The spec with what its engine class needs (Engine).
WindowSpec for_engine(WindowSpec s) {
  const bool square3 = s.kernel[0] % 2 == 1;  // a drawn bit: 3x3 or the alternative
  switch (s.engine) {
    case Engine::Winograd:
      s.op = WindowOp::Conv, s.kernel = {3, 3}, s.strides = s.dilations = {1, 1}, s.groups = 0, s.wide = true;
      s.image[2] = std::max<int64_t>(s.image[2], 12), s.image[3] = std::max<int64_t>(s.image[3], 12);
      break;
    case Engine::Stem:
      s.op = WindowOp::Conv, s.image[1] = 3, s.groups = 0, s.wide = false, s.maps = 8 + s.maps;
      s.kernel = square3 ? std::vector<int64_t>{3, 3} : std::vector<int64_t>{7, 7}, s.strides = {2, 2}, s.dilations = {1, 1};
      break;
    case Engine::Depthwise:
      s.op = WindowOp::Conv, s.groups = 1, s.wide = false;
      s.kernel = square3 ? std::vector<int64_t>{3, 3} : std::vector<int64_t>{5, 5};
      break;
    default: break;
  }
  return s;
}

class WindowBuilder {
 public:
  WindowBuilder(const WindowSpec& drawn, int64_t batch) : spec_(for_engine(drawn)), g_(spec_.data_seed) {
    const WindowSpec& spec = spec_;
    const bool pool = spec.op == WindowOp::MaxPool || spec.op == WindowOp::AveragePool;
    for (int a = 0; a < 2; ++a) {
      kernel_[a] = spec.kernel[a];
      stride_[a] = spec.strides[a];
      dilation_[a] = spec.op == WindowOp::AveragePool ? 1 : spec.dilations[a];  // opset 19 only
      const int64_t eff = effective(kernel_[a], dilation_[a]);
      // Pools: a pad of at most half the window (PyTorch's rule); convolutions: any pad that
      // leaves a tap on the image (a larger one is legal but reads nothing but padding).
      const int64_t bound = pool ? kernel_[a] / 2 + 1 : eff;
      pad_begin_[a] = spec.pads[a] % bound;
      pad_end_[a] = spec.pads[a + 2] % bound;
    }
    auto_pad_ = spec.op == WindowOp::ConvTranspose ? (spec.auto_pad == 3 ? 3 : 0) : spec.auto_pad;
    if (auto_pad_ != 0) pad_begin_ = pad_end_ = {0, 0};
    channels_ = spec.wide ? 32 + spec.image[1] % 9 : spec.image[1];
    for (int a = 0; a < 2; ++a) {
      // Enough rows and columns for one window (a transposed convolution always has one).
      const int64_t need = spec.op == WindowOp::ConvTranspose ? 1 : effective(kernel_[a], dilation_[a]) - pad_begin_[a] - pad_end_[a];
      extent_[a] = std::max({spec.image[2 + a], need, int64_t{1}});
      // A transposed convolution's pads cut its output, which must keep a row and a column.
      if (spec.op == WindowOp::ConvTranspose &&
          stride_[a] * (extent_[a] - 1) + effective(kernel_[a], dilation_[a]) - pad_begin_[a] - pad_end_[a] < 1) {
        pad_begin_[a] = pad_end_[a] = 0;
      }
    }
    Shape image = {spec.symbolic_batch ? Dim(SymExpr::symbol("N")) : Dim(batch), Dim(channels_), Dim(extent_[0]),
                   Dim(extent_[1])};
    g_.bind("N", batch);
    x_ = g_.input(image);
  }

  BuiltGraph run() {
    Value* y = nullptr;
    switch (spec_.op) {
      case WindowOp::Conv: y = epilogue(convolution(false)); break;
      case WindowOp::ConvTranspose: y = epilogue(convolution(true)); break;
      default: y = pool(spec_.op == WindowOp::MaxPool ? "MaxPool" : "AveragePool"); break;
    }
    if (spec_.stem_pool) {
      y = node("MaxPool", {y}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}},
                                {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    }
    return g_.finish({y});
  }

 private:
  Value* node(const std::string& op, std::vector<Value*> inputs, AttributeMap attrs = {}) {
    return g_.node(op, std::move(inputs), std::move(attrs));
  }

  // The window's attributes every op shares.
  AttributeMap window_attributes() const {
    AttributeMap attrs = {{"kernel_shape", std::vector<int64_t>{kernel_[0], kernel_[1]}},
                          {"strides", std::vector<int64_t>{stride_[0], stride_[1]}}};
    if (spec_.op != WindowOp::AveragePool) attrs["dilations"] = std::vector<int64_t>{dilation_[0], dilation_[1]};
    if (auto_pad_ == 0) {
      attrs["pads"] = std::vector<int64_t>{pad_begin_[0], pad_begin_[1], pad_end_[0], pad_end_[1]};
    } else {
      attrs["auto_pad"] = std::string(kAutoPad[auto_pad_]);
    }
    return attrs;
  }

  int64_t groups() const {
    if (spec_.groups == 1) return channels_;
    if (spec_.groups == 2 && channels_ % 2 == 0) return 2;
    return 1;
  }

  // Output maps: a depthwise convolution's multiplier is 1 or 2.
  int64_t output_maps(int64_t group) const {
    const int64_t per_group = spec_.wide ? 16 + spec_.maps : spec_.maps;
    return group == channels_ && group > 1 ? channels_ * (1 + spec_.maps % 2) : group * per_group;
  }

  // A Conv's weight is [maps, channels / group, kh, kw], a ConvTranspose's [channels, maps /
  // group, kh, kw]. The transposed one gets output padding 1 (where the stride allows it) when
  // ceil_mode is drawn: the field means nothing else there.
  Value* convolution(bool transposed) {
    const int64_t group = groups(), maps = output_maps(group);
    const std::vector<int64_t> weight = transposed ? std::vector<int64_t>{channels_, maps / group, kernel_[0], kernel_[1]}
                                                   : std::vector<int64_t>{maps, channels_ / group, kernel_[0], kernel_[1]};
    std::vector<Value*> inputs = {x_, g_.weights(weight)};
    if (spec_.bias) inputs.push_back(g_.weights({maps}));
    AttributeMap attrs = window_attributes();
    attrs["group"] = group;
    if (transposed && spec_.ceil_mode) {
      attrs["output_padding"] = std::vector<int64_t>{stride_[0] > 1 ? 1 : 0, stride_[1] > 1 ? 1 : 0};
    }
    return node(transposed ? "ConvTranspose" : "Conv", inputs, attrs);
  }

  Value* pool(const std::string& op) {
    AttributeMap attrs = window_attributes();
    if (auto_pad_ == 0) attrs["ceil_mode"] = int64_t{spec_.ceil_mode};
    if (op == "AveragePool") attrs["count_include_pad"] = int64_t{spec_.count_include_pad};
    return node(op, {x_}, attrs);
  }

  Value* epilogue(Value* y) {
    auto scalar = [&](float v) { return g_.scalar(v); };
    switch (spec_.epilogue) {
      case 1: return node("Relu", {y});
      case 2: return node("Clip", {y, scalar(0.0f), scalar(6.0f)});
      case 3: return node("HardSwish", {y});
      case 4: return node("Sigmoid", {y});
      case 5: return node("Mul", {y, node("Sigmoid", {y})});
      case 6: return node("Relu", {node("Add", {y, g_.input(y->shape)})});
      default: return y;
    }
  }

  const WindowSpec spec_;
  GraphAssembly g_;
  std::array<int64_t, 2> kernel_{}, stride_{}, dilation_{}, pad_begin_{}, pad_end_{}, extent_{};
  int auto_pad_ = 0;
  int64_t channels_ = 1;
  Value* x_ = nullptr;
};

rc::Gen<std::vector<int64_t>> pair(int64_t lo, int64_t hi) {
  return rc::gen::container<std::vector<int64_t>>(2, rc::gen::inRange<int64_t>(lo, hi + 1));
}

// Mostly square and mostly what networks use (so that Winograd's 3x3 at stride 1 comes up often),
// sometimes a different value on each axis.
rc::Gen<std::vector<int64_t>> usually_square(rc::Gen<int64_t> value) {
  return rc::gen::apply(
      [](int64_t a, int64_t b, int shape) { return std::vector<int64_t>{a, shape == 0 ? b : a}; }, value, value,
      rc::gen::inRange(0, 4));
}

}  // namespace

rc::Gen<WindowSpec> window_spec() {
  auto image = rc::gen::apply(
      [](int64_t n, int64_t c, std::vector<int64_t> hw) { return std::vector<int64_t>{n, c, hw[0], hw[1]}; },
      rc::gen::inRange<int64_t>(1, 3), rc::gen::inRange<int64_t>(1, 13), pair(1, 20));
  return rc::gen::build<WindowSpec>(
      rc::gen::set(&WindowSpec::engine, rc::gen::element(Engine::AsDrawn, Engine::AsDrawn, Engine::AsDrawn,
                                                         Engine::Winograd, Engine::Stem, Engine::Depthwise)),
      rc::gen::set(&WindowSpec::op, rc::gen::element(WindowOp::Conv, WindowOp::Conv, WindowOp::ConvTranspose,
                                                     WindowOp::MaxPool, WindowOp::AveragePool)),
      rc::gen::set(&WindowSpec::image, image),
      rc::gen::set(&WindowSpec::kernel, usually_square(rc::gen::element<int64_t>(3, 3, 3, 1, 1, 2, 5, 7))),
      rc::gen::set(&WindowSpec::strides, usually_square(rc::gen::element<int64_t>(1, 1, 1, 2, 2, 3))),
      rc::gen::set(&WindowSpec::dilations, usually_square(rc::gen::element<int64_t>(1, 1, 1, 2))),
      rc::gen::set(&WindowSpec::pads, rc::gen::container<std::vector<int64_t>>(4, rc::gen::inRange<int64_t>(0, 6))),
      rc::gen::set(&WindowSpec::auto_pad, rc::gen::inRange(0, 4)), rc::gen::set(&WindowSpec::groups, rc::gen::inRange(0, 3)),
      rc::gen::set(&WindowSpec::maps, rc::gen::inRange<int64_t>(1, 9)), rc::gen::set(&WindowSpec::wide),
      rc::gen::set(&WindowSpec::bias),
      rc::gen::set(&WindowSpec::epilogue, rc::gen::inRange(0, 7)), rc::gen::set(&WindowSpec::stem_pool),
      rc::gen::set(&WindowSpec::ceil_mode), rc::gen::set(&WindowSpec::count_include_pad),
      rc::gen::set(&WindowSpec::symbolic_batch), rc::gen::set(&WindowSpec::data_seed));
}

BuiltGraph build_window(const WindowSpec& spec, int64_t batch) { return WindowBuilder(spec, batch).run(); }

void showValue(const WindowSpec& spec, std::ostream& os) {
  static const char* const kOps[] = {"Conv", "ConvTranspose", "MaxPool", "AveragePool"};
  static const char* const kEngines[] = {"as drawn", "Winograd", "stem", "depthwise"};
  os << fmt::format("engine {}: {} image {} kernel {} strides {} dilations {} pads {} auto_pad {} groups {} maps {} wide {} bias {} "
                    "epilogue {} stem_pool {} ceil_mode {} count_include_pad {} symbolic_batch {} data_seed {}\n",
                    kEngines[static_cast<int>(spec.engine)], kOps[static_cast<int>(spec.op)], spec.image, spec.kernel, spec.strides, spec.dilations, spec.pads,
                    spec.auto_pad, spec.groups, spec.maps, spec.wide, spec.bias, spec.epilogue, spec.stem_pool, spec.ceil_mode,
                    spec.count_include_pad, spec.symbolic_batch, spec.data_seed);
  os << print_graph(build_window(spec, spec.image[0]).graph, {.elide_large_constants = true});
}

}  // namespace tilefuse::property
