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
// Phase demodulation of complex series (svdlr/ComplexSeries.h): a separable Gaussian low-pass of each volume's
// complex image gives its smooth phase, which is then removed.
//
// Why an image-domain Gaussian rather than a k-space window (NORDIC's Tukey window, MRtrix3's mrfilter demodulate):
// it needs no FFT in the engine, it does not wrap the image around its borders (a k-space filter treats the image
// as periodic, so the phase at one edge leaks into the other), and its cost is a few taps per voxel and axis. The
// argument of the filtered image does not depend on the kernel's sum, so the kernel is simply cut at the borders.
#include "svdlr/ComplexSeries.h"

#include "svdlrComplexSeriesDetail.h"
#include "svdlrParallel.h"

#include <cmath>
#include <complex>
#include <string>
#include <vector>

namespace svdlr
{
namespace
{

using Complex = std::complex<double>;

/** w[k] = exp(-k^2 / (2 sigma^2)) for k in [0, ceil(3 sigma)]; {1} for sigma 0 (no smoothing). */
std::vector<double>
HalfGaussian(double sigma)
{
  if (sigma == 0.0)
  {
    return { 1.0 };
  }
  const auto          radius = static_cast<std::size_t>(std::ceil(3.0 * sigma));
  std::vector<double> weights(radius + 1);
  for (std::size_t k = 0; k <= radius; ++k)
  {
    weights[k] = std::exp(-0.5 * static_cast<double>(k * k) / (sigma * sigma));
  }
  return weights;
}

/** out = in convolved along `axis` with the symmetric kernel `half` (cut at the image's borders). */
void
SmoothAlongAxis(const std::vector<Complex> & in, std::vector<Complex> & out, const std::array<std::size_t, 3> & size,
                unsigned axis, const std::vector<double> & half)
{
  const std::size_t stride = axis == 0 ? 1 : axis == 1 ? size[0] : size[0] * size[1];
  const auto        radius = static_cast<std::ptrdiff_t>(half.size() - 1);
  const auto        length = static_cast<std::ptrdiff_t>(size[axis]);
  for (std::size_t v = 0; v < in.size(); ++v)
  {
    const auto position = static_cast<std::ptrdiff_t>(v / stride % size[axis]);
    const auto first = std::max<std::ptrdiff_t>(-radius, -position);
    const auto last = std::min<std::ptrdiff_t>(radius, length - 1 - position);
    Complex    sum = 0.0;
    for (std::ptrdiff_t k = first; k <= last; ++k)
    {
      sum += half[static_cast<std::size_t>(std::abs(k))] *
             in[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(v) + k * static_cast<std::ptrdiff_t>(stride))];
    }
    out[v] = sum;
  }
}

} // namespace

void
DemodulatePhase(const SeriesView<const float> & real, const SeriesView<const float> & imag,
                const SeriesView<float> & phase, const SeriesView<float> & demodulatedReal,
                const SeriesView<float> & demodulatedImag, const PhaseDemodulationOptions & options)
{
  detail::RequireSeries(real, "the real part");
  detail::RequireSameShape(real, imag, "the imaginary part");
  detail::RequireSameShape(real, SeriesView<const float>(phase), "the phase output");
  detail::RequireSameShape(real, SeriesView<const float>(demodulatedReal), "the demodulated real output");
  if (demodulatedImag.data)
  {
    detail::RequireSameShape(real, SeriesView<const float>(demodulatedImag), "the demodulated imaginary output");
  }
  for (double sigma : options.filterSigma)
  {
    if (!(std::isfinite(sigma) && sigma >= 0.0))
    {
      throw Error(ErrorCode::InvalidArgument,
                  "the phase filter's width must be finite and >= 0 voxels, got " + std::to_string(sigma));
    }
  }
  const std::array<std::vector<double>, 3> kernels{ HalfGaussian(options.filterSigma[0]),
                                                    HalfGaussian(options.filterSigma[1]),
                                                    HalfGaussian(options.filterSigma[2]) };
  const std::size_t                        voxels = real.VoxelCount();
  const auto                               run = detail::ParallelForOrThreads(
    options.parallelFor, std::min<unsigned>(detail::WorkerCount(options.threads), static_cast<unsigned>(real.volumes)));
  run(real.volumes, [&](std::size_t t) {
    std::vector<Complex> image(voxels), scratch(voxels);
    for (std::size_t v = 0; v < voxels; ++v)
    {
      const std::size_t at = detail::ElementOffset(real, v, t);
      const float       re = real.data[at], im = imag.data[detail::ElementOffset(imag, v, t)];
      if (!std::isfinite(re) || !std::isfinite(im))
      {
        throw Error(ErrorCode::NonFiniteInput,
                    "the complex series holds NaN or Inf at voxel " + std::to_string(v) + ", volume " +
                      std::to_string(t),
                    static_cast<std::ptrdiff_t>(v));
      }
      image[v] = Complex(re, im);
    }
    std::vector<Complex> smooth = image;
    for (unsigned axis = 0; axis < 3; ++axis)
    {
      if (kernels[axis].size() > 1)
      {
        SmoothAlongAxis(smooth, scratch, real.size, axis, kernels[axis]);
        smooth.swap(scratch);
      }
    }
    for (std::size_t v = 0; v < voxels; ++v)
    {
      // Leave the voxel itself out (the kernel's centre weight is 1): its phase then does not depend on its own
      // noise, so Re(z e^{-i phi}) keeps Gaussian noise of sigma, without a bias towards |noise| at low SNR.
      const Complex others = smooth[v] - image[v];
      const double  angle = others == Complex(0.0, 0.0) ? 0.0 : std::arg(others);
      const Complex rotated = image[v] * std::polar(1.0, -angle);
      phase.data[detail::ElementOffset(phase, v, t)] = static_cast<float>(angle);
      demodulatedReal.data[detail::ElementOffset(demodulatedReal, v, t)] = static_cast<float>(rotated.real());
      if (demodulatedImag.data)
      {
        demodulatedImag.data[detail::ElementOffset(demodulatedImag, v, t)] = static_cast<float>(rotated.imag());
      }
    }
  });
}

void
RemodulatePhase(const SeriesView<const float> & value, const SeriesView<const float> & phase,
                const SeriesView<float> & real, const SeriesView<float> & imag, unsigned threads)
{
  detail::RequireSeries(value, "the demodulated series");
  detail::RequireSameShape(value, phase, "the phase");
  detail::RequireSameShape(value, SeriesView<const float>(real), "the real output");
  detail::RequireSameShape(value, SeriesView<const float>(imag), "the imaginary output");
  const std::size_t voxels = value.VoxelCount();
  const auto        run = detail::ParallelForOrThreads(
    {}, std::min<unsigned>(detail::WorkerCount(threads), static_cast<unsigned>(value.volumes)));
  run(value.volumes, [&](std::size_t t) {
    for (std::size_t v = 0; v < voxels; ++v)
    {
      const double a = value.data[detail::ElementOffset(value, v, t)];
      const double angle = phase.data[detail::ElementOffset(phase, v, t)];
      real.data[detail::ElementOffset(real, v, t)] = static_cast<float>(a * std::cos(angle));
      imag.data[detail::ElementOffset(imag, v, t)] = static_cast<float>(a * std::sin(angle));
    }
  });
}

} // namespace svdlr
