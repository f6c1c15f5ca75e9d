// tf_gulp._core's warp functions: the colour draws the fused decode + warp
// kernels make (cc/warp/color_transform.h), for
// tf_gulp.transforms.color_draws (what a test or a user compares an output
// with: the same function of (seed, epoch, element) the kernels call).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cc/util/stateless_random.h"
#include "cc/warp/color_transform.h"
#include "tf_gulp/pybind/status.h"

namespace py = pybind11;

namespace tf_gulp {
namespace pybind {
namespace {

// The steps of element `element`, as (name, factor) pairs in the order they run.
std::vector<std::pair<std::string, float>> ColorDraws(const std::vector<float>& params,
                                                      int64_t seed, int64_t epoch,
                                                      int64_t element) {
  tfg::warp::ColorSpec spec;
  ThrowIfError(tfg::warp::ParseColorSpec(params, &spec));
  // The fused kernels' key of (seed, epoch, element) (fused_warp_args.cc, GulpDataset's).
  const tfg::warp::ColorDraw draw = tfg::warp::DrawColor(
      spec, tfg::HashKey({static_cast<uint64_t>(seed), static_cast<uint64_t>(epoch),
                          static_cast<uint64_t>(element)}));
  static const char* const kNames[] = {"brightness", "contrast", "saturation", "hue",
                                       "grayscale"};
  std::vector<std::pair<std::string, float>> out;
  for (int i = 0; i < draw.count; ++i) {
    out.emplace_back(kNames[static_cast<int>(draw.steps[i].op)], draw.steps[i].factor);
  }
  return out;
}

}  // namespace

void RegisterWarp(py::module_& m) {
  m.def("color_draws", &ColorDraws, py::arg("params"), py::arg("seed"), py::arg("epoch"),
        py::arg("element"),
        "The colour steps the fused kernels apply to an element: [(name, factor)], in order.");
}

}  // namespace pybind
}  // namespace tf_gulp
