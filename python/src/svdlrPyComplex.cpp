/*=========================================================================
 *
 *  Copyright SVDLowRankReconstruction contributors
 *
 *  Licensed under the Apache License, Version 2.0 (the "License");
 *  you may not use this file except in compliance with the License.
 *  You may obtain a copy of the License at
 *
 *         https://www.apache.org/licenses/LICENSE-2.0.txt
 *
 *  Unless required by applicable law or agreed to in writing, software
 *  distributed under the License is distributed on an "AS IS" BASIS,
 *  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 *  See the License for the specific language governing permissions and
 *  limitations under the License.
 *
 *=========================================================================*/
// `demodulate_phase`: svdlr::DemodulatePhase on C-ordered float32 arrays of shape (volumes, n0, n1, n2), which the
// engine sees as x = a2, y = a1, z = a0 (as denoise_local_low_rank does); the filter widths are given in array order.
#include "svdlrPyModule.h"

#include "svdlrPyErrors.h"

#include "svdlr/ComplexSeries.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>

#include <array>
#include <memory>
#include <string>

namespace nb = nanobind;
using namespace nb::literals;

namespace svdlr
{
namespace python
{
namespace
{

using VolumeArray = nb::ndarray<nb::ro, float, nb::ndim<4>, nb::c_contig, nb::device::cpu>;

SeriesView<const float>
ViewOf(const VolumeArray & array)
{
  const std::size_t n0 = array.shape(1), n1 = array.shape(2), n2 = array.shape(3);
  return { array.data(),
           { n2, n1, n0 },
           array.shape(0),
           { 1, static_cast<std::ptrdiff_t>(n2), static_cast<std::ptrdiff_t>(n2 * n1),
             static_cast<std::ptrdiff_t>(n2 * n1 * n0) } };
}

nb::object
NewLike(const VolumeArray & like, float *& data)
{
  const std::size_t    shape[4] = { like.shape(0), like.shape(1), like.shape(2), like.shape(3) };
  std::unique_ptr<float[]> buffer(new float[std::max<std::size_t>(like.size(), 1)]);
  nb::capsule          owner(buffer.get(), [](void * p) noexcept { delete[] static_cast<float *>(p); });
  data = buffer.release();
  return nb::ndarray<nb::numpy, float>(data, 4, shape, owner).cast();
}

nb::tuple
DemodulatePhaseArrays(const VolumeArray & real, const VolumeArray & imag, std::array<double, 3> filterSigma,
                      unsigned threads)
{
  float *    phaseData = nullptr;
  float *    realData = nullptr;
  nb::object phase = NewLike(real, phaseData);
  nb::object demodulated = NewLike(real, realData);
  const auto input = ViewOf(real);
  PhaseDemodulationOptions options;
  options.filterSigma = { filterSigma[2], filterSigma[1], filterSigma[0] }; // array order -> x, y, z
  options.threads = threads;
  try
  {
    nb::gil_scoped_release release;
    DemodulatePhase(input, ViewOf(imag), { phaseData, input.size, input.volumes, input.strides },
                    { realData, input.size, input.volumes, input.strides }, {}, options);
  }
  catch (const Error & error)
  {
    RaiseEngineError(error);
  }
  return nb::make_tuple(phase, demodulated);
}

} // namespace

void
DefineComplex(nb::module_ & module)
{
  module.def("demodulate_phase", &DemodulatePhaseArrays, "real"_a, "imag"_a, nb::kw_only(),
             "filter_sigma"_a = std::array<double, 3>{ 0.0, 2.0, 2.0 }, "threads"_a = 0u,
             R"doc(Removes each volume's smooth phase from a complex series: svdlr::DemodulatePhase.

real, imag : float32 C-ordered arrays of shape (volumes, n0, n1, n2)
filter_sigma : the Gaussian's standard deviation in voxels along n0, n1, n2 (0: no smoothing along that axis)
threads : CPU threads, 0 for all

Returns (phase, demodulated_real), both of the input's shape: the smooth phase in radians and Re(z e^{-i phase}).
Most users want local_low_rank_denoising_image_filter(..., phase=...).)doc");
}

} // namespace python
} // namespace svdlr
