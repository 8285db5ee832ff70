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
// Why an image-domain Gaussian rather than a k-space window (the Tukey window of NORDIC's Python ports, MRtrix3's
// mrfilter demodulate):
// it needs no FFT in the engine, it does not wrap the image around its borders (a k-space filter treats the image
// as periodic, so the phase at one edge leaks into the other), and its cost is a few taps per voxel and axis. The
// argument of the filtered image does not depend on the kernel's sum, so the kernel is simply cut at the borders.
#include "svdlr/ComplexSeries.h"

#include "noise/svdlrComplexSeriesDetail.h"
#include "shared/svdlrParallel.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace svdlr
{
namespace
{

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

/** out = in convolved along x (stride 1) with `half`, row by row. Each output value is a sum over the kernel's taps
 * in rising order of the input index, starting from 0, as SmoothAlongAxis's planes are, so the two give the same
 * bits; the loop over a row's outputs is inside the loop over the taps, so that it vectorises (a sum per output
 * in one register, with the taps inside, did not, and made the x pass most of the smoothing's time). */
void
SmoothAlongRows(const std::vector<double> & in, std::vector<double> & out, std::size_t length,
                const std::vector<double> & half)
{
  const std::size_t    rows = in.size() / length;
  const std::ptrdiff_t radius = static_cast<std::ptrdiff_t>(half.size()) - 1;
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(length);
  for (std::size_t r = 0; r < rows; ++r)
  {
    const double * row = in.data() + r * length;
    double *       target = out.data() + r * length;
    std::fill(target, target + length, 0.0);
    // Tap k adds w(|k|) row[p + k] to output p, for the outputs whose p + k lies in the row.
    for (std::ptrdiff_t k = -radius; k <= radius; ++k)
    {
      const double         w = half[static_cast<std::size_t>(k < 0 ? -k : k)];
      const std::ptrdiff_t first = std::max<std::ptrdiff_t>(0, -k);
      const std::ptrdiff_t last = std::min(n, n - k); // one past
      for (std::ptrdiff_t p = first; p < last; ++p)
      {
        target[p] += w * row[p + k];
      }
    }
  }
}

/** out = in convolved along `axis` with the symmetric kernel `half` (cut at the image's borders). The image is
 * x fastest; along an axis of stride S and length n it is a run of blocks of n planes of S values, and each output
 * plane is a weighted sum of whole input planes, so the inner loop runs over S contiguous values (along x, S is 1:
 * SmoothAlongRows). */
void
SmoothAlongAxis(const std::vector<double> & in, std::vector<double> & out, const std::array<std::size_t, 3> & size,
                unsigned axis, const std::vector<double> & half)
{
  if (axis == 0)
  {
    SmoothAlongRows(in, out, size[0], half);
    return;
  }
  const std::size_t stride = axis == 1 ? size[0] : size[0] * size[1];
  const std::size_t length = size[axis];
  const std::size_t blocks = in.size() / (stride * length);
  const std::size_t radius = half.size() - 1;
  for (std::size_t b = 0; b < blocks; ++b)
  {
    const double * block = in.data() + b * stride * length;
    for (std::size_t p = 0; p < length; ++p)
    {
      double *          target = out.data() + (b * length + p) * stride;
      const std::size_t first = p >= radius ? p - radius : 0;
      const std::size_t last = std::min(p + radius, length - 1);
      std::fill(target, target + stride, 0.0);
      for (std::size_t q = first; q <= last; ++q)
      {
        const double   w = half[q > p ? q - p : p - q];
        const double * source = block + q * stride;
        for (std::size_t i = 0; i < stride; ++i)
        {
          target[i] += w * source[i];
        }
      }
    }
  }
}

/** The part of the series one task demodulates: slices [firstSlice, firstSlice + slices) of one volume. */
struct SlabOfVolume
{
  std::size_t volume{ 0 };
  std::size_t firstSlice{ 0 };
  std::size_t slices{ 0 };
};

/** Calls visit(v, offset) for every voxel v (x fastest, counted from the slab's first slice) of `slab` of `view`,
 * offset in elements. */
template <typename T, typename TVisit>
void
ForEachVoxel(const SeriesView<T> & view, const SlabOfVolume & slab, TVisit visit)
{
  std::size_t v = 0;
  for (std::size_t z = slab.firstSlice; z < slab.firstSlice + slab.slices; ++z)
  {
    for (std::size_t y = 0; y < view.size[1]; ++y)
    {
      const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(z) * view.strides[2] +
                                 static_cast<std::ptrdiff_t>(y) * view.strides[1] +
                                 static_cast<std::ptrdiff_t>(slab.volume) * view.strides[3];
      for (std::size_t x = 0; x < view.size[0]; ++x, ++v)
      {
        visit(v, static_cast<std::size_t>(row + static_cast<std::ptrdiff_t>(x) * view.strides[0]));
      }
    }
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
  if (phase.data)
  {
    detail::RequireSameShape(real, SeriesView<const float>(phase), "the phase output");
  }
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
  // Without smoothing along z each slice is a task of its own: a few times more tasks than threads (a volume a task
  // left a quarter of 16 threads idle in the last round of 65 volumes), and a slice's buffers stay in the cache.
  // The values are the same either way: no sum crosses a slice then.
  const std::size_t slabSlices = kernels[2].size() > 1 ? real.size[2] : 1;
  const std::size_t slabsPerVolume = real.size[2] / slabSlices;
  const std::size_t voxels = real.size[0] * real.size[1] * slabSlices;
  const std::array<std::size_t, 3> slabSize{ real.size[0], real.size[1], slabSlices };
  const std::size_t                tasks = real.volumes * slabsPerVolume;
  const auto                       run = detail::ParallelForOrThreads(
    options.parallelFor, static_cast<unsigned>(std::min<std::size_t>(detail::WorkerCount(options.threads), tasks)));
  run(tasks, [&](std::size_t task) {
    const SlabOfVolume slab{ task / slabsPerVolume, (task % slabsPerVolume) * slabSlices, slabSlices };
    // The slab's real and imaginary parts in float64, x fastest; then their low-passed copies.
    std::vector<double> re(voxels), im(voxels);
    ForEachVoxel(real, slab, [&](std::size_t v, std::size_t at) { re[v] = real.data[at]; });
    ForEachVoxel(imag, slab, [&](std::size_t v, std::size_t at) { im[v] = imag.data[at]; });
    for (std::size_t v = 0; v < voxels; ++v)
    {
      if (!std::isfinite(re[v]) || !std::isfinite(im[v]))
      {
        const std::size_t voxel = slab.firstSlice * real.size[0] * real.size[1] + v;
        throw Error(ErrorCode::NonFiniteInput,
                    "the complex series holds NaN or Inf at voxel " + std::to_string(voxel) + ", volume " +
                      std::to_string(slab.volume),
                    static_cast<std::ptrdiff_t>(voxel));
      }
    }
    // The first pass reads re and im themselves, not copies of them.
    std::vector<double> smoothRe(voxels), smoothIm(voxels), scratch(voxels);
    bool                smoothed = false;
    for (unsigned axis = 0; axis < 3; ++axis)
    {
      if (kernels[axis].size() > 1)
      {
        SmoothAlongAxis(smoothed ? smoothRe : re, scratch, slabSize, axis, kernels[axis]);
        smoothRe.swap(scratch);
        SmoothAlongAxis(smoothed ? smoothIm : im, scratch, slabSize, axis, kernels[axis]);
        smoothIm.swap(scratch);
        smoothed = true;
      }
    }
    if (!smoothed)
    {
      smoothRe = re;
      smoothIm = im;
    }
    // Leave the voxel itself out (the kernel's centre weight is 1): its phase then does not depend on its own
    // noise, so Re(z e^{-i phi}) keeps Gaussian noise of sigma, without a bias towards |noise| at low SNR.
    // (cos, sin) of phi is the unit vector of the others' sum: no trigonometry but the phase's own atan2, and that
    // only when the phase is asked for. Written over the low-passed parts, which are read only here: two buffers
    // fewer to allocate and fault in. The squares cannot overflow: the parts are sums of floats, in float64.
    std::vector<double> &cosine = smoothRe, &sine = smoothIm;
    for (std::size_t v = 0; v < voxels; ++v)
    {
      const double a = smoothRe[v] - re[v], b = smoothIm[v] - im[v];
      const double length = std::sqrt(a * a + b * b);
      cosine[v] = length > 0.0 ? a / length : 1.0;
      sine[v] = length > 0.0 ? b / length : 0.0;
    }
    if (phase.data)
    {
      ForEachVoxel(SeriesView<const float>(phase), slab, [&](std::size_t v, std::size_t at) {
        phase.data[at] = static_cast<float>(std::atan2(sine[v], cosine[v]));
      });
    }
    ForEachVoxel(SeriesView<const float>(demodulatedReal), slab, [&](std::size_t v, std::size_t at) {
      demodulatedReal.data[at] = static_cast<float>(re[v] * cosine[v] + im[v] * sine[v]);
    });
    if (demodulatedImag.data)
    {
      ForEachVoxel(SeriesView<const float>(demodulatedImag), slab, [&](std::size_t v, std::size_t at) {
        demodulatedImag.data[at] = static_cast<float>(im[v] * cosine[v] - re[v] * sine[v]);
      });
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
