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
// DenoiseLocalLowRank's front end: validates a request, resolves the patch extent, picks the backend, and runs it.
#include "svdlr/LocalDenoise.h"
#include "svdlr/CpuThreads.h"
#include "svdlr/PatchFit.h"
#include "svdlr/Names.h"

#include "shared/svdlrBackendChoice.h"
#include "noise/svdlrChooseRank.h"
#include "denoise/svdlrLocalDenoiseBackends.h"
#include "noise/svdlrMagnitudeTransform.h"
#include "shared/svdlrParallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace svdlr
{

namespace
{

[[noreturn]] void
ThrowInvalid(const std::string & message)
{
  throw Error(ErrorCode::InvalidArgument, "svdlr: " + message);
}

std::string
VoxelName(std::size_t voxel, const std::array<std::size_t, 3> & size)
{
  std::ostringstream name;
  name << "voxel " << voxel << " (x " << voxel % size[0] << ", y " << voxel / size[0] % size[1] << ", z "
       << voxel / (size[0] * size[1]) << ")";
  return name.str();
}

/** The lowest and highest element offsets a view addresses, relative to its data pointer. */
template <typename T>
std::pair<std::ptrdiff_t, std::ptrdiff_t>
OffsetRange(const SeriesView<T> & view)
{
  const std::size_t extents[4] = { view.size[0], view.size[1], view.size[2], view.volumes };
  std::ptrdiff_t    low = 0, high = 0;
  for (int axis = 0; axis < 4; ++axis)
  {
    const std::ptrdiff_t reach = view.strides[axis] * static_cast<std::ptrdiff_t>(extents[axis] - 1);
    (reach < 0 ? low : high) += reach;
  }
  return { low, high };
}

/** Whether distinct elements of the view are distinct memory: each axis, by increasing |stride|, must step past
 * everything the axes before it reach. */
template <typename T>
bool
ElementsAreDistinct(const SeriesView<T> & view)
{
  std::array<std::pair<std::size_t, std::size_t>, 4> axes; // (|stride|, extent)
  const std::size_t extents[4] = { view.size[0], view.size[1], view.size[2], view.volumes };
  for (int axis = 0; axis < 4; ++axis)
  {
    axes[axis] = { static_cast<std::size_t>(std::abs(view.strides[axis])), extents[axis] };
  }
  std::sort(axes.begin(), axes.end());
  std::size_t reach = 0; // the largest offset the axes so far reach
  for (const auto & [stride, extent] : axes)
  {
    if (extent > 1)
    {
      if (stride <= reach)
      {
        return false;
      }
      reach += stride * (extent - 1);
    }
  }
  return true;
}

void
ValidateViews(const SeriesView<const float> & input, const SeriesView<float> & output)
{
  if (input.VoxelCount() == 0)
  {
    std::ostringstream msg;
    msg << "empty image: " << input.size[0] << " x " << input.size[1] << " x " << input.size[2] << " voxels";
    ThrowInvalid(msg.str());
  }
  if (input.data == nullptr || output.data == nullptr)
  {
    ThrowInvalid("input or output data pointer is null");
  }
  if (input.volumes < 2)
  {
    ThrowInvalid("a series needs at least 2 volumes to denoise, got " + std::to_string(input.volumes) +
                 " (3D data has no series to take a low rank of)");
  }
  if (output.size != input.size || output.volumes != input.volumes)
  {
    ThrowInvalid("output size or volume count differs from the input's");
  }
  if (!ElementsAreDistinct(output))
  {
    ThrowInvalid("output strides make distinct elements share memory");
  }
  const bool inPlace =
    static_cast<const void *>(input.data) == static_cast<const void *>(output.data) && input.strides == output.strides;
  if (!inPlace)
  {
    const auto [inLow, inHigh] = OffsetRange(input);
    const auto [outLow, outHigh] = OffsetRange(output);
    const float * inBegin = input.data + inLow;
    const float * inEnd = input.data + inHigh + 1;
    const float * outBegin = output.data + outLow;
    const float * outEnd = output.data + outHigh + 1;
    if (inBegin < outEnd && outBegin < inEnd)
    {
      ThrowInvalid("output overlaps the input without being it (same data pointer and strides)");
    }
  }
}

void
CheckPatchSize(std::size_t voxels, std::size_t volumes)
{
  constexpr std::size_t lapackLimit = static_cast<std::size_t>(std::numeric_limits<int>::max() / 8);
  if (voxels > lapackLimit || volumes > lapackLimit || voxels * volumes > lapackLimit)
  {
    ThrowInvalid("a patch of " + std::to_string(voxels) + " voxels x " + std::to_string(volumes) +
                 " volumes is too large");
  }
}

/** A sphere's extent (SpherePatchUsed), checked: its options and its voxel count. */
std::array<std::size_t, 3>
ResolveSphere(const SeriesView<const float> & input, const LocalDenoiseOptions & options, std::size_t & voxels)
{
  if (options.patchSize != std::array<std::size_t, 3>{ 0, 0, 0 })
  {
    ThrowInvalid("a spherical patch takes a radius, not a patch extent (give patchSize {0, 0, 0})");
  }
  if (!(std::isfinite(options.patchRadius) && options.patchRadius >= 0.0))
  {
    ThrowInvalid("patch radius must be finite and >= 0 (0: the default), got " + std::to_string(options.patchRadius));
  }
  if (options.patchStride != 1 && options.patchStride != kAutoPatchStride)
  {
    ThrowInvalid("a spherical patch takes patch stride 1: a sphere does not fill the box that stride's coverage "
                 "rule assumes");
  }
  const std::array<std::size_t, 3> box = RequestedPatchBox(PatchShape::Sphere, options.patchSize, options.patchRadius);
  const unsigned int               axis = PatchAxisBeyondImage(input.size, box);
  if (axis < 3)
  {
    ThrowInvalid("a sphere of radius " + std::to_string(options.patchRadius) + " spans " + std::to_string(box[axis]) +
                 " voxels along axis " + std::to_string(axis) + ", more than the image's " +
                 std::to_string(input.size[axis]) + " (a patch larger than the image is refused, cuboid or sphere)");
  }
  const SpherePatch sphere = SpherePatchUsed(input.size, input.volumes, options.patchRadius);
  voxels = sphere.voxels;
  if (voxels < 2)
  {
    ThrowInvalid("a patch needs at least 2 voxels, got " + std::to_string(voxels) + " within radius " +
                 std::to_string(options.patchRadius));
  }
  return sphere.extent;
}

/** options.patchSize, or the default extent for this series fitted to the image, checked; or a sphere's box. */
std::array<std::size_t, 3>
ResolvePatch(const SeriesView<const float> & input, const LocalDenoiseOptions & options)
{
  const auto & size = input.size;
  if (options.patchShape != PatchShape::Cuboid && options.patchShape != PatchShape::Sphere)
  {
    ThrowInvalid("unknown patch shape " + std::to_string(static_cast<int>(options.patchShape)));
  }
  std::size_t voxels = 0;
  if (options.patchShape == PatchShape::Sphere)
  {
    const std::array<std::size_t, 3> box = ResolveSphere(input, options, voxels);
    CheckPatchSize(voxels, input.volumes);
    return box;
  }
  if (options.patchRadius != 0.0)
  {
    ThrowInvalid("a patch radius needs PatchShape::Sphere (a cuboid takes patchSize)");
  }
  const std::array<std::size_t, 3> patch =
    PatchSizeUsed({ size[0], size[1], size[2] }, input.volumes, options.patchSize);
  for (int axis = 0; axis < 3; ++axis)
  {
    if (patch[axis] == 0 || patch[axis] % 2 == 0)
    {
      ThrowInvalid("patch extent along axis " + std::to_string(axis) + " must be odd and >= 1, got " +
                   std::to_string(patch[axis]) + " (or all three 0 for the default)");
    }
  }
  const unsigned int axis = PatchAxisBeyondImage({ size[0], size[1], size[2] }, patch);
  if (axis < 3)
  {
    ThrowInvalid("patch extent " + std::to_string(patch[axis]) + " along axis " + std::to_string(axis) +
                 " exceeds the image's " + std::to_string(size[axis]) + " voxels");
  }
  voxels = patch[0] * patch[1] * patch[2];
  if (voxels < 2)
  {
    ThrowInvalid("a patch needs at least 2 voxels, got " + std::to_string(patch[0]) + " x " +
                 std::to_string(patch[1]) + " x " + std::to_string(patch[2]));
  }
  CheckPatchSize(voxels, input.volumes);
  return patch;
}

/** `options` checked, with its stride resolved (PatchStrideUsed). */
void
ValidateOptions(const SeriesView<const float> & input, const LocalDenoiseOptions & options,
                const std::array<std::size_t, 3> & patch)
{
  if (options.aggregation != PatchAggregation::CentreVoxel && options.aggregation != PatchAggregation::OverlapAverage &&
      options.aggregation != PatchAggregation::OverlapRankWeighted &&
      options.aggregation != PatchAggregation::OverlapGaussianWeighted)
  {
    ThrowInvalid("unknown patch aggregation " + std::to_string(static_cast<int>(options.aggregation)));
  }
  if (options.shrinkage != Shrinkage::Hard && options.shrinkage != Shrinkage::OptimalFrobenius &&
      options.shrinkage != Shrinkage::Auto)
  {
    ThrowInvalid("unknown shrinkage " + std::to_string(static_cast<int>(options.shrinkage)));
  }
  if (options.patchStride > 1 && options.aggregation == PatchAggregation::CentreVoxel)
  {
    ThrowInvalid("a patch stride above 1 (" + std::to_string(options.patchStride) +
                 ") leaves voxels without their own patch: it needs an overlap aggregation (OverlapAverage or a "
                 "weighted one)");
  }
  const std::size_t smallest = *std::min_element(patch.begin(), patch.end());
  if (options.patchStride > smallest)
  {
    ThrowInvalid("patch stride " + std::to_string(options.patchStride) + " exceeds the smallest patch extent " +
                 std::to_string(smallest) + ", so patches would leave gaps");
  }
  const std::string problem = PolicyProblem(options.policy, Solver::Exact); // the rules every layer shares
  if (!problem.empty())
  {
    ThrowInvalid(problem);
  }
  if (NeedsGivenSigma(options.policy) && !(options.policy.noiseSigma > 0.0) && options.noiseSigma == nullptr)
  {
    ThrowInvalid(std::string("the ") + PolicyName(options.policy) +
                 " policy needs a known σ: give a known σ map (from a noise scan, noise volumes or a value), or "
                 "RankPolicy::noiseSigma > 0");
  }
  if (options.shrinkage == Shrinkage::OptimalFrobenius &&
      !PatchesHaveSigma(options.policy, options.noiseSigma != nullptr))
  {
    ThrowInvalid("OptimalFrobenius shrinkage needs σ: use a Gavish-Donoho or Marchenko-Pastur policy, or give a "
                 "known σ map");
  }
  std::size_t removed = options.removedVolumeDimensions;
  if (options.volumeGroups != nullptr)
  {
    removed += detail::CheckedGroupCount(options.volumeGroups, input.volumes);
  }
  if (removed + 2 > input.volumes)
  {
    ThrowInvalid("demeaning leaves " + std::to_string(input.volumes - std::min(removed, input.volumes)) + " of " +
                 std::to_string(input.volumes) + " volume dimensions (" + std::to_string(removed) +
                 " removed): at least 2 must remain");
  }
  if (options.deviceId < 0)
  {
    ThrowInvalid("device id must be >= 0, got " + std::to_string(options.deviceId));
  }
  if (options.noiseSigma != nullptr)
  {
    const std::size_t voxels = input.VoxelCount();
    for (std::size_t v = 0; v < voxels; ++v)
    {
      const float sigma = options.noiseSigma[v];
      if (!(std::isfinite(sigma) && sigma >= 0.0f))
      {
        std::ostringstream msg;
        msg << "known noise sigma must be finite and >= 0, got " << sigma << " at " << VoxelName(v, input.size);
        ThrowInvalid(msg.str());
      }
    }
  }
}

/** The lowest voxel index of plane z (x fastest) whose series holds NaN or Inf, or the plane's size when none does. */
std::size_t
FirstNonFiniteVoxelOfPlane(const SeriesView<const float> & input, std::size_t z)
{
  const auto &      s = input.strides;
  const std::size_t nx = input.size[0], ny = input.size[1];
  std::size_t       first = nx * ny;
  // Volume by volume, each in voxel order, stopping at the first voxel found so far.
  for (std::size_t t = 0; t < input.volumes; ++t)
  {
    std::size_t v = 0;
    for (std::size_t y = 0; y < ny && v < first; ++y)
    {
      const float * row = input.data + static_cast<std::ptrdiff_t>(t) * s[3] + static_cast<std::ptrdiff_t>(z) * s[2] +
                          static_cast<std::ptrdiff_t>(y) * s[1];
      for (std::size_t x = 0; x < nx && v < first; ++x, ++v)
      {
        if (!std::isfinite(row[static_cast<std::ptrdiff_t>(x) * s[0]]))
        {
          first = v;
        }
      }
    }
  }
  return first;
}

/** The lowest linear voxel index whose series holds NaN or Inf, or VoxelCount() when there is none. The planes are
 * read on the CPU workers: the scan reads the whole series, and alone it took 4-8 % of a 16-thread CPU run. */
std::size_t
FirstNonFiniteVoxel(const SeriesView<const float> & input, const LocalDenoiseOptions & options)
{
  const std::size_t        planeSize = input.size[0] * input.size[1];
  std::vector<std::size_t> firstByPlane(input.size[2], planeSize);
  detail::ParallelForOrThreads(options.parallelFor, detail::WorkerCount(options.threads))(
    input.size[2], [&](std::size_t z) { firstByPlane[z] = FirstNonFiniteVoxelOfPlane(input, z); });
  for (std::size_t z = 0; z < firstByPlane.size(); ++z)
  {
    if (firstByPlane[z] < planeSize)
    {
      return z * planeSize + firstByPlane[z];
    }
  }
  return input.VoxelCount();
}

} // namespace

std::array<std::size_t, 3>
PatchSizeUsed(const std::array<std::size_t, 3> & size, std::size_t volumes, const std::array<std::size_t, 3> & requested)
{
  std::array<std::size_t, 3> patch = requested;
  if (patch == std::array<std::size_t, 3>{ 0, 0, 0 })
  {
    // The default cube, shrunk along axes shorter than it to the largest odd extent they hold; the other axes then
    // grow, two at a time starting with the shortest, until the patch holds as many voxels as there are volumes
    // again (or the image is exhausted), so that a thin image keeps a usable aspect ratio.
    patch = DefaultPatchSize(volumes);
    std::array<std::size_t, 3> limit{};
    for (int axis = 0; axis < 3; ++axis)
    {
      limit[axis] = size[axis] % 2 == 1 ? size[axis] : size[axis] - 1;
      patch[axis] = std::min(patch[axis], limit[axis]);
    }
    while (patch[0] * patch[1] * patch[2] < volumes)
    {
      int grow = -1;
      for (int axis = 0; axis < 3; ++axis)
      {
        if (patch[axis] + 2 <= limit[axis] && (grow < 0 || patch[axis] < patch[grow]))
        {
          grow = axis;
        }
      }
      if (grow < 0)
      {
        break;
      }
      patch[grow] += 2;
    }
  }
  return patch;
}

std::size_t
PatchStrideUsed(const std::array<std::size_t, 3> & patchUsed, PatchShape shape, PatchAggregation aggregation,
                std::size_t requested)
{
  if (requested != kAutoPatchStride)
  {
    return requested;
  }
  if (shape != PatchShape::Cuboid || aggregation == PatchAggregation::CentreVoxel)
  {
    return 1;
  }
  const std::size_t smallest = *std::min_element(patchUsed.begin(), patchUsed.end());
  return std::max<std::size_t>(1, smallest / kPatchExtentPerAutoStride);
}

std::array<std::size_t, 3>
DefaultPatchSize(std::size_t volumes)
{
  std::size_t side = 1;
  while (side * side * side < volumes)
  {
    side += 2;
  }
  return { side, side, side };
}

bool
PatchesHaveSigma(const RankPolicy & policy, bool knownSigma)
{
  return knownSigma || detail::ModelsNoise(policy);
}

Shrinkage
ResolveShrinkage(Shrinkage requested, const RankPolicy & policy, bool knownSigma)
{
  if (requested != Shrinkage::Auto)
  {
    return requested;
  }
  return PatchesHaveSigma(policy, knownSigma) ? Shrinkage::OptimalFrobenius : Shrinkage::Hard;
}

LocalDenoiseReport
DenoiseLocalLowRank(const SeriesView<const float> & input, const SeriesView<float> & output,
                    const LocalDenoiseMaps & maps, const LocalDenoiseOptions & requested)
{
  if (requested.magnitudeNoise.automatic)
  {
    // Resolved once, here, so that the g-factor and magnitude paths below see an explicit model. The series' values
    // matter only where the rule would turn a model on: only then is it scanned for a negative value.
    LocalDenoiseOptions resolved = requested;
    resolved.magnitudeNoise = MagnitudeNoiseUsed(requested, false);
    if (!requested.magnitudeNoise.Active() && resolved.magnitudeNoise.Active() &&
        HasNegativeValue(input, requested.threads))
    {
      resolved.magnitudeNoise = MagnitudeNoiseUsed(requested, true);
    }
    return DenoiseLocalLowRank(input, output, maps, resolved);
  }
  // A call for the CUDA backend is a device worker's: its host-side loops (the NaN scan, the slab packing) take
  // their share of the cores beside the other devices' calls (ShareOfCpuThreads), where no thread count is given.
  std::optional<RunningParallelJob> deviceWorkerCall;
  if (requested.backend == Backend::CUDA)
  {
    deviceWorkerCall.emplace(ParallelJobKind::DeviceEngineCall);
  }
  ValidateViews(input, output);
  if (requested.estimateGFactor)
  {
    return detail::DenoiseWithEstimatedGFactor(input, output, maps, requested); // which comes back with the map
  }
  if (requested.gfactor != nullptr)
  {
    return detail::DenoiseWithGFactor(input, output, maps, requested); // which comes back here without the map
  }
  if (requested.magnitudeNoise.Active())
  {
    return detail::DenoiseMagnitudeSeries(input, output, maps, requested); // which comes back here without it
  }
  return detail::DenoiseLowRankPass(input, output, maps, requested, nullptr);
}

namespace detail
{

LocalDenoiseReport
DenoiseLowRankPass(const SeriesView<const float> & input, const SeriesView<float> & output,
                   const LocalDenoiseMaps & maps, const LocalDenoiseOptions & requested,
                   const MagnitudeTransform * transform)
{
  if (transform != nullptr && requested.volumeGroups != nullptr)
  {
    throw std::logic_error("svdlr: a magnitude transform around the low-rank pass cannot take volume groups");
  }
  if (output.data == nullptr && (transform != nullptr || requested.volumeGroups != nullptr))
  {
    throw std::logic_error("svdlr: a pass for the maps alone takes no magnitude transform and no volume groups");
  }
  const std::array<std::size_t, 3> patch = ResolvePatch(input, requested);
  // The backends see a stride >= 1, and Hard or OptimalFrobenius only.
  LocalDenoiseOptions options = requested;
  options.patchStride = PatchStrideUsed(patch, requested.patchShape, requested.aggregation, requested.patchStride);
  ValidateOptions(input, options, patch);
  options.shrinkage = ResolveShrinkage(requested.shrinkage, requested.policy, requested.noiseSigma != nullptr);
  const std::size_t nonFinite = FirstNonFiniteVoxel(input, options);
  if (nonFinite < input.VoxelCount())
  {
    throw Error(ErrorCode::NonFiniteInput,
                "svdlr: the input holds NaN or Inf at " + VoxelName(nonFinite, input.size),
                static_cast<std::ptrdiff_t>(nonFinite));
  }

  LocalDenoiseReport report;
  report.patchSize = patch;
  report.patchShape = options.patchShape;
  if (options.patchShape == PatchShape::Sphere)
  {
    const SpherePatch sphere = SpherePatchUsed(input.size, input.volumes, options.patchRadius);
    report.patchRadius = sphere.radius;
    report.patchVoxels = sphere.voxels;
  }
  else
  {
    report.patchVoxels = patch[0] * patch[1] * patch[2];
  }
  report.patchStride = options.patchStride;
  report.shrinkage = options.shrinkage;
  const auto run = [&](const SeriesView<const float> & series) {
    report.backend = RunOnChosenBackend(
      options.backend,
      options.deviceId,
      false, // Auto's cold-start rule is for slice batches; a 4D series is never small enough to matter
      [&] {
        report.backend = Backend::CUDA;
        RunLocalDenoiseCuda(series, output, maps, options, patch, report, transform);
      },
      [&] {
        report.backend = Backend::CPU;
        if (transform == nullptr)
        {
          RunLocalDenoiseCpu(series, output, maps, options, patch, report);
          return;
        }
        DenoiseBetweenHostTransforms(series, output, *transform, WorkerCount(options.threads), report.magnitudeSeconds,
                                     [&] { RunLocalDenoiseCpu(output, output, maps, options, patch, report); });
      },
      report.notes);
  };
  if (options.volumeGroups == nullptr)
  {
    run(input);
    return report;
  }
  // Demeaned into the output, which the backends then denoise in place; the means come back after, also when a
  // backend throws, so that an in-place input is left as it was (up to the rounding of subtracting and adding).
  const VolumeGroupMeans means(
    input, options.volumeGroups, ParallelForOrThreads(options.parallelFor, WorkerCount(options.threads)));
  means.Subtract(input, output);
  options.removedVolumeDimensions += means.Groups();
  options.volumeGroups = nullptr;
  const bool inPlace = static_cast<const void *>(input.data) == static_cast<const void *>(output.data);
  const SeriesView<const float> * original = inPlace ? nullptr : &input;
  try
  {
    run(output);
  }
  catch (...)
  {
    means.AddBack(output, nullptr, original);
    throw;
  }
  means.AddBack(output, options.mask, original);
  return report;
}

} // namespace detail
} // namespace svdlr
