#include "property/graph_spec.h"

#include "ir/printer.h"
#include "property/graph_builder.h"
#include "property/property_params.h"

namespace tilefuse::property {

rc::Gen<int64_t> dim_gen() {
  return rc::gen::weightedOneOf<int64_t>({{2, rc::gen::just<int64_t>(1)},
                                          {2, rc::gen::element<int64_t>(16, 17)},
                                          {6, rc::gen::inRange<int64_t>(2, 18)}});
}

namespace {

rc::Gen<OpKind> op_kind(bool half) {
  // Rounding through f16/bf16 inside a graph only where the comparison is half-precision anyway.
  return rc::gen::weightedElement<OpKind>({{30, OpKind::Unary},
                                           {30, OpKind::Binary},
                                           {8, OpKind::Select},
                                           {15, OpKind::Reduce},
                                           {7, OpKind::Transpose},
                                           {5, OpKind::Softmax},
                                           {5, OpKind::LayerNorm},
                                           {half ? 6u : 0u, OpKind::HalfRoundTrip},
                                           {6, OpKind::IntegerDetour},
                                           {6, OpKind::DenseConcat},
                                           {14, OpKind::IndexMap}});
}

rc::Gen<OpSpec> op_spec(bool half) {
  return rc::gen::build<OpSpec>(rc::gen::set(&OpSpec::kind, op_kind(half)),
                                rc::gen::set(&OpSpec::which, rc::gen::inRange(0, 64)),
                                rc::gen::set(&OpSpec::operand, rc::gen::inRange(0, 64)),
                                rc::gen::set(&OpSpec::other, rc::gen::inRange(0, 64)),
                                rc::gen::set(&OpSpec::axes, rc::gen::inRange(0, 1024)),
                                rc::gen::set(&OpSpec::variant, rc::gen::inRange(0, 16)));
}

// Few ops while rapidcheck's size is small (the first cases, which also repeat kernels), up to 5
// in `make test` and up to 9 when RC_PARAMS counts the cases (`make property-explore`), where
// deeper graphs cost time rather than CI's.
rc::Gen<std::vector<OpSpec>> op_specs(bool half) {
  const int most_extra = cases_from_environment() ? 8 : 4;
  return rc::gen::withSize([half, most_extra](int size) {
    int max_ops = 1 + std::min(most_extra, size * most_extra / 80);
    return rc::gen::mapcat(rc::gen::inRange(1, max_ops + 1), [half](int n) {
      return rc::gen::container<std::vector<OpSpec>>(static_cast<size_t>(n), op_spec(half));
    });
  });
}

}  // namespace

rc::Gen<GraphSpec> graph_spec(bool symbolic) {
  auto dtype = rc::gen::weightedElement<DType>({{8, DType::f32}, {1, DType::f16}, {1, DType::bf16}});
  return rc::gen::mapcat(dtype, [symbolic](DType input_dtype) {
    bool half = input_dtype != DType::f32;
    auto dims = rc::gen::mapcat(rc::gen::inRange<size_t>(1, 5),
                                [](size_t rank) { return rc::gen::container<std::vector<int64_t>>(rank, dim_gen()); });
    return rc::gen::build<GraphSpec>(rc::gen::set(&GraphSpec::dims, dims),
                                     rc::gen::set(&GraphSpec::symbolic, rc::gen::just(symbolic)),
                                     rc::gen::set(&GraphSpec::input_dtype, rc::gen::just(input_dtype)),
                                     rc::gen::set(&GraphSpec::ops, op_specs(half)),
                                     rc::gen::set(&GraphSpec::data_seed, rc::gen::arbitrary<uint64_t>()));
  });
}

void showValue(const GraphSpec& spec, std::ostream& os) {
  os << "dims [";
  for (size_t i = 0; i < spec.dims.size(); ++i) os << (i ? ", " : "") << spec.dims[i];
  os << "] " << (spec.symbolic ? "symbolic" : "static") << " input " << dtype_name(spec.input_dtype)
     << " data_seed " << spec.data_seed << "\n";
  for (const OpSpec& op : spec.ops) {
    os << "  op kind " << static_cast<int>(op.kind) << " which " << op.which << " operand " << op.operand << " other "
       << op.other << " axes " << op.axes << " variant " << op.variant << "\n";
  }
  os << print_graph(build_graph(spec).graph);
}

}  // namespace tilefuse::property
