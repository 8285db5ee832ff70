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
#ifndef svdlr_MagnitudeTransform_h
#define svdlr_MagnitudeTransform_h

// The non-central chi model's pointwise transforms (svdlr/MagnitudeNoise.h) over its tables, written once for both
// backends: NoncentralChiModel's methods call them on the host tables, and the CUDA denoiser's slab kernels on a
// device copy of the same tables, so that the GPU stabilises a slab as it unpacks it and inverts it as it finalises
// it, without a pass over the series on the host (svdlrMagnitudeNoise.cxx, DenoiseMagnitudeSeries).
#include "shared/svdlrHostDevice.h"

#include <cmath>
#include <cstddef>

namespace svdlr
{

/** The magnitude grid of the stabiliser g (σ = 1): fine enough that its linear interpolation errs by far less than
 * the float32 the series is stored in. */
constexpr double kStabiliserMagnitudeStep = 0.005;
/** The signal table's end (σ = 1); beyond it the asymptotic forms hold. */
constexpr double kNoncentralChiTableEnd = 40.0;

/** Views of a NoncentralChiModel's tables (host or device memory; NoncentralChiModel::Tables). */
struct NoncentralChiTables
{
  const double *      stabilised{ nullptr }; // g(j kStabiliserMagnitudeStep), j < stabilisedCount
  std::size_t         stabilisedCount{ 0 };
  double              endSlope{ 1.0 };        // g' beyond the grid
  const double *      signal{ nullptr };      // nu_i, increasing, i < count
  const double *      mean{ nullptr };        // E[M | nu_i]
  const double *      expected{ nullptr };    // E[g(M) | nu_i]
  std::size_t         count{ 0 };
  const std::size_t * expectedStart{ nullptr }; // per bucket of E[g(M)]: the first i with expected[i] above its edge
  std::size_t         bucketCount{ 0 };
  double              bucketsPerUnit{ 0.0 };
  double              degreesOfFreedom{ 1.0 }; // 2N - 1, of the chi factor
};

/** A pointwise transform of a series by each voxel's σ: where σ(v) > 0, value -> σ(v) f(value / σ(v)); where it is 0
 * (outside a mask) the value is kept. */
struct MagnitudeTransform
{
  NoncentralChiTables tables;
  const float *       sigma{ nullptr }; // VoxelCount() values, x fastest, finite and >= 0
  bool                toSignal{ true }; // the inverse gives nu (the floor removed), else E[M | nu]
};

namespace chi
{

/** std::upper_bound's index over increasing xs[0 .. n). */
SVDLR_HOST_DEVICE inline std::size_t
UpperBound(const double * xs, std::size_t n, double x)
{
  std::size_t low = 0, high = n;
  while (low < high)
  {
    const std::size_t middle = low + (high - low) / 2;
    if (xs[middle] <= x)
    {
      low = middle + 1;
    }
    else
    {
      high = middle;
    }
  }
  return low;
}

/** The linear interpolation of ys over xs[i - 1, i], i = upper clamped to [1, n - 1]. */
SVDLR_HOST_DEVICE inline double
InterpolateAt(const double * xs, const double * ys, std::size_t n, std::size_t upper, double x)
{
  const std::size_t i = upper < 1 ? 1 : (upper > n - 1 ? n - 1 : upper);
  const double      t = (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
  return ys[i - 1] + t * (ys[i] - ys[i - 1]);
}

SVDLR_HOST_DEVICE inline double
MeanBeyondTable(const NoncentralChiTables & c, double signal)
{
  const double dof = c.degreesOfFreedom;
  return c.mean[c.count - 1] + std::sqrt(signal * signal + dof) -
         std::sqrt(kNoncentralChiTableEnd * kNoncentralChiTableEnd + dof);
}

SVDLR_HOST_DEVICE inline double
SignalBeyondTable(const NoncentralChiTables & c, double mean)
{
  const double dof = c.degreesOfFreedom;
  const double root = mean - c.mean[c.count - 1] + std::sqrt(kNoncentralChiTableEnd * kNoncentralChiTableEnd + dof);
  const double square = root * root - dof;
  return std::sqrt(square > 0.0 ? square : 0.0);
}

/** E[M | nu]. */
SVDLR_HOST_DEVICE inline double
MeanMagnitude(const NoncentralChiTables & c, double signal)
{
  signal = signal > 0.0 ? signal : 0.0;
  if (signal > kNoncentralChiTableEnd)
  {
    return MeanBeyondTable(c, signal);
  }
  return InterpolateAt(c.signal, c.mean, c.count, UpperBound(c.signal, c.count, signal), signal);
}

/** g. */
SVDLR_HOST_DEVICE inline double
Stabilise(const NoncentralChiTables & c, double magnitude)
{
  const double last = static_cast<double>(c.stabilisedCount - 1) * kStabiliserMagnitudeStep;
  if (magnitude <= 0.0)
  {
    return magnitude * c.stabilised[1] / kStabiliserMagnitudeStep;
  }
  if (magnitude >= last)
  {
    return c.stabilised[c.stabilisedCount - 1] + (magnitude - last) * c.endSlope;
  }
  const double      position = magnitude / kStabiliserMagnitudeStep;
  const std::size_t j = static_cast<std::size_t>(position);
  return c.stabilised[j] + (position - static_cast<double>(j)) * (c.stabilised[j + 1] - c.stabilised[j]);
}

/** The first index of `expected` above `value`, searched for from the edge of the bucket before value's: a binary
 * search of the whole table was a third of the inverse transform's time on a 65-volume series. Measured on
 * 96x96x60x65 values of 0 to 6 sigma (2 threads), the inverse took 0.41 s stepping from buckets of four entries,
 * 0.54 s by a binary search within them, 0.185 s with this window over buckets of a quarter entry (the forward
 * transform: 0.055 s). The window is counted without branches (the table is sorted), then stepped on where the bound
 * lies beyond it: stepping alone mispredicted its data-dependent exit on almost every voxel. */
SVDLR_HOST_DEVICE inline std::size_t
ExpectedUpperBound(const NoncentralChiTables & c, double value)
{
  const double position = (value - c.expected[0]) * c.bucketsPerUnit;
  std::size_t  bucket = static_cast<std::size_t>(position > 0.0 ? position : 0.0);
  bucket = bucket < c.bucketCount ? bucket : c.bucketCount;
  constexpr std::size_t kWindow = 8;
  std::size_t           upper = bucket == 0 ? 0 : c.expectedStart[bucket - 1];
  if (upper + kWindow <= c.count)
  {
    std::size_t atOrBelow = 0;
    for (std::size_t j = 0; j < kWindow; ++j)
    {
      atOrBelow += c.expected[upper + j] <= value ? 1 : 0;
    }
    upper += atOrBelow;
  }
  while (upper < c.count && c.expected[upper] <= value)
  {
    ++upper;
  }
  return upper;
}

/** nu with E[g(M) | nu] = value, 0 at or below E[g(M) | 0] (the exact unbiased inverse). */
SVDLR_HOST_DEVICE inline double
SignalFromExpectedStabilised(const NoncentralChiTables & c, double value)
{
  if (value <= c.expected[0])
  {
    return 0.0;
  }
  if (value > c.expected[c.count - 1])
  {
    return SignalBeyondTable(c, c.mean[c.count - 1] + (value - c.expected[c.count - 1]) / c.endSlope);
  }
  return InterpolateAt(c.expected, c.signal, c.count, ExpectedUpperBound(c, value), value);
}

/** The inverse of the stabilised series' expectation: nu, or E[M | nu]. */
SVDLR_HOST_DEVICE inline double
Unstabilise(const NoncentralChiTables & c, double denoised, bool toSignal)
{
  const double signal = SignalFromExpectedStabilised(c, denoised);
  return toSignal ? signal : MeanMagnitude(c, signal);
}

} // namespace chi

/** The stabilised value of `value` at a voxel of σ `sigma` (the value itself where σ is 0). */
SVDLR_HOST_DEVICE inline float
StabilisedValue(const MagnitudeTransform & t, float sigma, float value)
{
  const double s = sigma;
  return s > 0.0 ? static_cast<float>(s * chi::Stabilise(t.tables, value / s)) : value;
}

/** The magnitude (nu or E[M | nu]) of a denoised stabilised value at a voxel of σ `sigma` (the value where σ is 0). */
SVDLR_HOST_DEVICE inline float
UnstabilisedValue(const MagnitudeTransform & t, float sigma, float value)
{
  const double s = sigma;
  return s > 0.0 ? static_cast<float>(s * chi::Unstabilise(t.tables, value / s, t.toSignal)) : value;
}

} // namespace svdlr

#endif
