#include "models/cc/cc_algorithm.h"

#include "models/cc/dcqcn.h"

namespace rdmasim {
namespace {

const ParamTable& dcqcn_table() { return dcqcn_params(); }
std::unique_ptr<CcConfig> new_dcqcn() {
  return std::make_unique<CcConfigOf<DcqcnConfig, Dcqcn, check_dcqcn>>("dcqcn");
}

constexpr CcAlgorithm kAlgorithms[] = {
    {"dcqcn", "DCQCN reaction and notification points (docs/congestion-control.md)", dcqcn_table,
     new_dcqcn},
};

}  // namespace

std::span<const CcAlgorithm> cc_algorithms() { return kAlgorithms; }

namespace {

ParamTable make_cc_table(bool item) {
  ParamTable f(item ? "traffic.cc" : "fabric.cc",
               item ? "this item's congestion control, instead of fabric.cc's"
                    : "congestion control of every QP (docs/congestion-control.md)");
  std::vector<std::pair<std::string, int64_t>> names{{"none", 0}};
  for (size_t i = 0; i < std::size(kAlgorithms); ++i) {
    names.emplace_back(kAlgorithms[i].name, static_cast<int64_t>(i + 1));
  }
  ParamBuilder a = f.add_choice("algorithm", names);
  if (item) {
    a.computed("fabric.cc.algorithm")
        .doc(
            "the algorithm of this item's QPs; its keys not given here are fabric.cc's when the "
            "algorithm is the same");
  } else {
    a.def(int64_t{0})
        .doc(
            "the algorithm of every QP: none (line rate, or a flow's `rate`), or one "
            "of those below");
  }
  for (const CcAlgorithm& alg : kAlgorithms) {
    f.add_object(alg.name, alg.params()).when("algorithm", {alg.name}).doc(alg.description);
  }
  return f;
}

}  // namespace

const ParamTable& cc_params() {
  static const ParamTable t = make_cc_table(false);
  return t;
}

const ParamTable& cc_item_params() {
  static const ParamTable t = make_cc_table(true);
  return t;
}

}  // namespace rdmasim
