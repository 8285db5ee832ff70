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
// DenoiseLocalLowRank on the CPU. Patches are processed by steps of whole planes of centres (fixed z), in
// increasing z; within a step the work is handed out unit by unit to the worker threads, each with its own
// PatchLowRank. The patch work calls no BLAS routine that locks (svdlrPatchKernels.h says why). A step holds enough
// planes for at least kLinesPerWorkerAndStep lines per worker, so that the wait at its end (for the last unit) is
// short.
//
// Results go through a window of per-plane accumulators (a sum per voxel and volume, a count per voxel, and the
// maps' sums) before they reach the output. Patch starts never decrease with their centre's z, so once the centres
// of the planes up to z are done, every plane below the start of plane z + 1's patches is final: it is written out
// (divided by its counts, voxels outside the mask copied) and its slot reused. The window holds patch-extent planes
// plus those of a step less one, so memory stays small; and no plane is written while a later patch may still read
// it, so the output may be the input itself.
//
// Along a line of centres the patch moves one voxel along x at a time: its Casorati matrix then changes by one
// column of voxels, so the Gram matrix XᵀX is updated (the leaving column's contribution removed, the entering
// one's added: two rank-(ey ez) updates instead of a rank-(ex ey ez) product, and a fifth of the reads) and formed
// afresh every few steps and at the start of every line (of a block, with OverlapAverage).
//
// Races: with CentreVoxel each voxel receives one row, from its own patch, so threads take whole lines of centres.
// With OverlapAverage patches overlap: OverlapSchedule (svdlrOverlapSchedule.h) cuts a plane into blocks of centres
// coloured so that blocks of one colour never touch the same voxel, hands out their rows, and makes a worker that
// has decomposed its row's patches wait until the rows before it in a fixed sum order that touch its voxels are
// added. Each voxel's sum is formed in the same order whatever the thread count, so the result is reproducible bit
// for bit. (Before, the colours ran as four rounds per plane with a barrier after each: 240 barriers for 60
// planes, each round of 36 blocks on 16 workers, which bounded 16 threads at 12x on a whole volume and 8.9x in a
// brain mask. Each block row starts with a fresh Gram matrix.)
//
// Spherical patches (svdlrSpherePatch.h) are gathered voxel by voxel from the sorted offset table, and their Gram
// matrices formed afresh: the sliding update needs a patch that changes by one column of voxels. Their box plays the
// cuboid's part in the window and the schedule. Overlap aggregations add weight × row (svdlrPatchGeometry.h) and
// divide by the sum of the weights; OverlapAverage's weight is 1, so its sums are the plain mean's, bit for bit.
#include "denoise/svdlrLocalDenoiseBackends.h"

#include "shared/svdlrBlasThreads.h"
#include "noise/svdlrChooseRank.h"
#include "denoise/svdlrOverlapSchedule.h"
#include "shared/svdlrParallel.h"
#include "denoise/svdlrPatchCentres.h"
#include "denoise/svdlrPatchGeometry.h" // PatchStart
#include "denoise/svdlrPatchLowRank.h"
#include "denoise/svdlrPatchKernels.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <numeric>

namespace svdlr
{
namespace detail
{
namespace
{

/** The sums of one plane of voxels: voxel-major weighted values (voxel * volumes + t) and per-voxel sums of the
 * weights and of the weighted maps. */
struct PlaneSums
{
  std::vector<double> values;
  std::vector<double> weights;
  std::vector<double> sigma;
  std::vector<double> rank;

  PlaneSums(std::size_t voxels, std::size_t volumes)
    : values(voxels * volumes, 0.0)
    , weights(voxels, 0.0)
    , sigma(voxels, 0.0)
    , rank(voxels, 0.0)
  {}
  /** Clears voxels [first, first + count). */
  void
  Reset(std::size_t first, std::size_t count)
  {
    const std::size_t volumes = values.size() / weights.size();
    std::fill_n(values.begin() + first * volumes, count * volumes, 0.0);
    std::fill_n(weights.begin() + first, count, 0.0);
    std::fill_n(sigma.begin() + first, count, 0.0);
    std::fill_n(rank.begin() + first, count, 0.0);
  }
};

/** A decomposed patch of an OverlapAverage unit, waiting for its turn to be added (its approximation is kept in the
 * lane). */
struct PendingPatch
{
  std::int64_t start[3];
  std::int64_t centre[3];
  double       sigma;
  int          rank;
};

/** One worker's state: its patch solvers (a group of patches is decomposed together), a row buffer, and the
 * centres of the line at hand. */
struct Lane
{
  std::array<std::unique_ptr<PatchLowRank>, kTridiagonalBatch> patches;
  std::vector<double>                                         row;
  std::vector<std::size_t>                                    centres;
  std::vector<PendingPatch>                                   pending;       // OverlapAverage: the unit's patches
  std::vector<double>                                         pendingValues; // and their approximations, in turn
};

class CpuDenoiser
{
public:
  CpuDenoiser(const SeriesView<const float> & input, const SeriesView<float> & output, const LocalDenoiseMaps & maps,
              const LocalDenoiseOptions & options, const std::array<std::size_t, 3> & patch)
    : m_Input(input)
    , m_Output(output)
    , m_Maps(maps)
    , m_Options(options)
    , m_Patch(patch)
    , m_Nx(input.size[0])
    , m_Ny(input.size[1])
    , m_Nz(input.size[2])
    , m_Nv(input.volumes)
    , m_Sphere(options.patchShape == PatchShape::Sphere)
    , m_Gather(input, patch, options)
    , m_PatchVoxels(m_Gather.Voxels())
    , m_Group(TridiagonalBatchFor(std::min(m_PatchVoxels, m_Nv)))
    , m_Workers(WorkerCount(options.threads))
    , m_Lanes(m_Workers)
    , m_InPlace(static_cast<const void *>(input.data) == static_cast<const void *>(output.data))
    , m_MapsOnly(output.data == nullptr)
  {
    m_Centres = PatchCentres(input.size, patch, BackendPatchStride(options, patch), options.mask);
    m_Total = static_cast<std::size_t>(std::count(m_Centres.begin(), m_Centres.end(), std::uint8_t{ 1 }));
    // The lines of several planes of centres make one parallel step, so that the workers rarely wait at its end
    // (with a mask, many lines are empty); the window then also holds those planes. Progress and abort are looked
    // at between steps, so a volume keeps at least kMinimumSteps of them however many workers there are (on 16
    // cores a small volume was one step: one progress report and no chance to abort).
    const std::size_t lines = kLinesPerWorkerAndStep * m_Workers;
    const std::size_t mostPlanes = std::max<std::size_t>(1, m_Nz / kMinimumSteps);
    m_PlanesPerStep = std::clamp<std::size_t>((lines + m_Ny - 1) / m_Ny, 1, mostPlanes);
    const std::size_t slots = patch[2] + m_PlanesPerStep - 1;
    m_Slots.reserve(slots);
    for (std::size_t i = 0; i < slots; ++i)
    {
      m_Slots.emplace_back(m_Nx * m_Ny, m_Nv);
    }
    if (NeedsMarchenkoPasturMedian(options.policy, options.noiseSigma != nullptr))
    {
      const PatchNoiseShape shape = NoiseShapeOf(static_cast<int>(m_PatchVoxels), static_cast<int>(m_Nv),
                                                 static_cast<int>(options.removedVolumeDimensions));
      m_Median = MarchenkoPasturMedian(NoiseAspectRatio(shape.rows, shape.cols));
    }
    m_ParallelFor = ParallelForOrThreads(options.parallelFor, m_Workers);
  }

  std::size_t
  Run()
  {
    const BlasThreadsScope blasThreads(1); // many small calls, one per worker
    std::size_t            done = 0;
    for (std::size_t z = 0; z < m_Nz; z += m_PlanesPerStep)
    {
      const std::size_t end = std::min(m_Nz, z + m_PlanesPerStep);
      done += IsOverlapAggregation(m_Options.aggregation) ? OverlapPlanes(z, end) : CentrePlanes(z, end);
      const std::size_t final = end < m_Nz ? static_cast<std::size_t>(Start(2, end)) : m_Nz;
      if (m_Flushed < final)
      {
        Flush(m_Flushed, final);
        m_Flushed = final;
      }
      ReportProgress(m_Options.progress, done, m_Total, "patches");
    }
    return m_Total;
  }

private:
  /** Lines of centres per worker in one parallel step (at least; whole planes are taken). */
  static constexpr std::size_t kLinesPerWorkerAndStep = 16;
  /** The fewest parallel steps in a volume of at least this many planes. */
  static constexpr std::size_t kMinimumSteps = 4;

  std::int64_t
  Start(int axis, std::size_t centre) const
  {
    return PatchStart(static_cast<std::int64_t>(centre), static_cast<std::int64_t>(m_Patch[axis]),
                      static_cast<std::int64_t>(m_Input.size[axis]));
  }

  PlaneSums &
  Plane(std::size_t z)
  {
    return m_Slots[z % m_Slots.size()];
  }

  bool
  Inside(std::size_t voxel) const
  {
    return m_Options.mask == nullptr || m_Options.mask[voxel] != 0;
  }

  /** Runs body(lane, unit) for every unit in [0, units) on the workers; rethrows the first exception here. */
  template <typename TBody>
  void
  ForEachUnit(std::size_t units, TBody && body)
  {
    if (units == 0)
    {
      return;
    }
    const std::size_t        lanes = std::min<std::size_t>(m_Workers, units);
    std::atomic<std::size_t> next{ 0 };
    std::exception_ptr       failure;
    std::mutex               failureMutex;
    m_ParallelFor(lanes, [&](std::size_t lane) {
      try
      {
        for (std::size_t unit = next++; unit < units; unit = next++)
        {
          body(m_Lanes[lane], unit);
        }
      }
      catch (...)
      {
        const std::lock_guard<std::mutex> lock(failureMutex);
        if (!failure)
        {
          failure = std::current_exception();
        }
        next = units; // the other lanes stop at their next unit
      }
    });
    if (failure)
    {
      std::rethrow_exception(failure);
    }
  }

  /** Row of voxel (x, y, z) in the Casorati matrix of the patch starting at `start`. Rows are grouped by x column,
   * the group of column x at position x mod ex, so that the patch one voxel further along x differs from this one
   * in one group only, in place: PatchLowRank then updates its Gram matrix instead of forming it again. */
  std::size_t
  CasoratiRow(std::size_t x, std::size_t y, std::size_t z, const std::int64_t (&start)[3]) const
  {
    return (x % m_Patch[0]) * (m_Patch[1] * m_Patch[2]) + (y - static_cast<std::size_t>(start[1])) +
           m_Patch[1] * (z - static_cast<std::size_t>(start[2]));
  }

  /** Runs emit(x, patch, start) for every centre x in [x0, x1) of line (y, z), in order, with its decomposed patch.
   * Up to m_Group consecutive patches are decomposed together; centres near a border that share a patch
   * share its decomposition; a patch one voxel along x from the one before it is found by replacing the column of
   * voxels that leaves by the one that enters. Each call starts afresh, so that its results do not depend on which
   * lane ran what before (row replacements round differently from a fresh Gram matrix). */
  template <typename TEmit>
  void
  ForEachCentreOfLine(Lane & lane, std::size_t y, std::size_t z, std::size_t x0, std::size_t x1, TEmit && emit)
  {
    if (!lane.patches[0])
    {
      for (int j = 0; j < m_Group; ++j)
      {
        lane.patches[j] = std::make_unique<PatchLowRank>(m_PatchVoxels, m_Nv, m_Options, m_Median);
      }
      lane.row.resize(m_Nv);
    }
    lane.centres.clear();
    for (std::size_t x = x0, voxel = x0 + m_Nx * (y + m_Ny * z); x < x1; ++x, ++voxel)
    {
      if (m_Centres[voxel])
      {
        lane.centres.push_back(x);
      }
    }
    const std::int64_t   sy = Start(1, y), sz = Start(2, z);
    if (m_Sphere)
    {
      ForEachSphereCentre(lane, y, z, emit);
      return;
    }
    const PatchLowRank * previous = nullptr;
    std::int64_t         previousStart = -1;
    for (std::size_t next = 0; next < lane.centres.size();)
    {
      // The group: the next centres whose patches start at up to m_Group distinct x.
      std::int64_t starts[kTridiagonalBatch];
      int          slots = 0;
      std::size_t  end = next;
      for (; end < lane.centres.size(); ++end)
      {
        const std::int64_t sx = Start(0, lane.centres[end]);
        if (slots == 0 || sx != starts[slots - 1])
        {
          if (slots == m_Group)
          {
            break;
          }
          starts[slots++] = sx;
        }
      }
      PatchLowRank * group[kTridiagonalBatch];
      for (int j = 0; j < slots; ++j)
      {
        PatchLowRank &       patch = *lane.patches[j];
        const PatchLowRank * base = j == 0 ? previous : lane.patches[j - 1].get();
        const std::int64_t   baseStart = j == 0 ? previousStart : starts[j - 1];
        const std::int64_t   start[3] = { starts[j], sy, sz };
        if (base != nullptr && starts[j] == baseStart + 1 && base->CanReplaceRows())
        {
          if (base != &patch)
          {
            patch.CopyGramFrom(*base);
          }
          const std::size_t entering = static_cast<std::size_t>(starts[j]) + m_Patch[0] - 1;
          const int         first = static_cast<int>((entering % m_Patch[0]) * m_Patch[1] * m_Patch[2]);
          const int         count = static_cast<int>(m_Patch[1] * m_Patch[2]);
          patch.RemoveRows(first, count);
          m_Gather.Columns(start, entering, entering + 1, patch.Casorati());
          patch.AddRows(first, count);
        }
        else
        {
          m_Gather.Columns(start, static_cast<std::size_t>(starts[j]), static_cast<std::size_t>(starts[j]) + m_Patch[0],
                        patch.Casorati());
          patch.FormGram();
        }
        patch.Tridiagonalize();
        group[j] = &patch;
      }
      PatchLowRank::FinishEigenvalues(group, slots);

      for (int j = 0; next < end; ++next)
      {
        const std::size_t x = lane.centres[next];
        const std::int64_t start[3] = { Start(0, x), sy, sz };
        while (starts[j] != start[0])
        {
          ++j;
        }
        PatchLowRank &    patch = *group[j];
        const std::size_t voxel = x + m_Nx * (y + m_Ny * z);
        ChooseFor(patch, voxel);
        emit(x, patch, start);
      }
      previous = group[slots - 1];
      previousStart = starts[slots - 1];
    }
  }

  /** ForEachCentreOfLine for spherical patches: lane.centres' patches gathered from the offset table, decomposed
   * m_Group at a time. */
  template <typename TEmit>
  void
  ForEachSphereCentre(Lane & lane, std::size_t y, std::size_t z, TEmit && emit)
  {
    for (std::size_t next = 0; next < lane.centres.size();)
    {
      const std::size_t count = std::min<std::size_t>(m_Group, lane.centres.size() - next);
      PatchLowRank *    group[kTridiagonalBatch];
      for (std::size_t j = 0; j < count; ++j)
      {
        group[j] = lane.patches[j].get();
        m_Gather.Sphere({ static_cast<std::int64_t>(lane.centres[next + j]), static_cast<std::int64_t>(y),
                           static_cast<std::int64_t>(z) },
                         group[j]->Casorati());
        group[j]->FormGram();
        group[j]->Tridiagonalize();
      }
      PatchLowRank::FinishEigenvalues(group, static_cast<int>(count));
      for (std::size_t j = 0; j < count; ++j, ++next)
      {
        const std::size_t  x = lane.centres[next];
        const std::int64_t start[3] = { Start(0, x), Start(1, y), Start(2, z) };
        const std::size_t  voxel = x + m_Nx * (y + m_Ny * z);
        ChooseFor(*group[j], voxel);
        emit(x, *group[j], start);
      }
    }
  }

  /** The patch's rank and σ, with σ known at `voxel` when a σ map is given; its kept components too unless the run
   * writes the maps only (a σ pass). */
  void
  ChooseFor(PatchLowRank & patch, std::size_t voxel) const
  {
    const double knownSigma = m_Options.noiseSigma != nullptr ? static_cast<double>(m_Options.noiseSigma[voxel]) : -1.0;
    if (m_MapsOnly)
    {
      patch.ChooseRankOnly(knownSigma);
      return;
    }
    patch.Choose(knownSigma);
  }

  /** CentreVoxel: each centre's own row, one line of centres of planes [z0, z1) per unit, the lines with the most
   * centres first (in a mask they range from none to the whole line; the last to be handed out then are short, and so
   * is the wait for them at the step's end). Lines are independent, so their order does not change the result.
   * Returns the patches computed. */
  std::size_t
  CentrePlanes(std::size_t z0, std::size_t z1)
  {
    std::vector<std::size_t> lines, centres;
    for (std::size_t line = z0 * m_Ny; line < z1 * m_Ny; ++line)
    {
      const auto first = m_Centres.begin() + static_cast<std::ptrdiff_t>(line * m_Nx);
      const auto count = static_cast<std::size_t>(std::count(first, first + static_cast<std::ptrdiff_t>(m_Nx), 1));
      if (count > 0)
      {
        lines.push_back(line);
        centres.push_back(count);
      }
    }
    std::vector<std::size_t> order(lines.size());
    std::iota(order.begin(), order.end(), std::size_t{ 0 });
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return centres[a] > centres[b]; });
    std::atomic<std::size_t> patches{ 0 };
    ForEachUnit(order.size(), [&](Lane & lane, std::size_t unit) {
      const std::size_t z = lines[order[unit]] / m_Ny, y = lines[order[unit]] % m_Ny;
      PlaneSums &       plane = Plane(z);
      std::size_t       count = 0;
      ForEachCentreOfLine(lane, y, z, 0, m_Nx, [&](std::size_t x, PatchLowRank & patch, const std::int64_t(&start)[3]) {
        const std::size_t index = x + m_Nx * y;
        if (!m_MapsOnly)
        {
          // A sphere's centre voxel is its row 0 (svdlrSpherePatch.h).
          patch.ApproximateRow(m_Sphere ? 0 : static_cast<int>(CasoratiRow(x, y, z, start)), lane.row.data());
          std::copy(lane.row.begin(), lane.row.end(), plane.values.begin() + index * m_Nv);
        }
        plane.weights[index] = 1.0;
        plane.sigma[index] = patch.Sigma();
        plane.rank[index] = static_cast<double>(patch.Rank());
        ++count;
      });
      patches += count;
    });
    return patches;
  }

  /** OverlapAverage, centre planes [z0, z1): each centre's whole approximation added to every voxel of its patch.
   * Units (rows of blocks of centres) are handed out in OverlapSchedule's order; each worker decomposes its unit's
   * patches, adds them when its turn has come (keeping them in its lane until then), and lets the units waiting on
   * it go. Returns the patches
   * computed. */
  std::size_t
  OverlapPlanes(std::size_t z0, std::size_t z1)
  {
    std::vector<std::int64_t> patchStartZ;
    for (std::size_t z = z0; z < z1; ++z)
    {
      patchStartZ.push_back(Start(2, z));
    }
    OverlapSchedule schedule(m_Nx, m_Ny, m_Patch, z0, z1, patchStartZ,
                             [this](std::size_t y, std::size_t z, std::size_t x0, std::size_t x1) {
                               const auto line = m_Centres.begin() + static_cast<std::ptrdiff_t>(m_Nx * (y + m_Ny * z));
                               return std::find(line + x0, line + x1, std::uint8_t{ 1 }) != line + x1;
                             },
                             // a block's next row is handed out two rounds of workers after the one before it
                             // (the first wait less often than with one round); a lone worker walks block by block
                             m_Workers > 1 ? 2 * m_Workers : 1);
    const std::size_t        values = m_PatchVoxels * m_Nv;
    std::atomic<std::size_t> patches{ 0 };
    ForEachUnit(schedule.Units().size(), [&](Lane & lane, std::size_t index) {
      const OverlapUnit & unit = schedule.Units()[index];
      std::size_t         count = 0;
      bool                turn = false;
      try
      {
        lane.pending.clear();
        const auto add = [&](std::size_t x, PatchLowRank & patch, const std::int64_t(&start)[3]) {
          const PendingPatch decomposed{ { start[0], start[1], start[2] },
                                         { static_cast<std::int64_t>(x), static_cast<std::int64_t>(unit.y),
                                           static_cast<std::int64_t>(unit.z) },
                                         patch.Sigma(),
                                         static_cast<int>(patch.Rank()) };
          ++count;
          turn = turn || (lane.pending.empty() && schedule.IsTurn(unit)); // stays true: read the counters once
          if (turn)
          {
            Accumulate(m_MapsOnly ? nullptr : patch.ApproximateAll(), decomposed); // no copy
            return;
          }
          const std::size_t slot = lane.pending.size();
          lane.pending.push_back(decomposed);
          if (m_MapsOnly)
          {
            return;
          }
          lane.pendingValues.resize(std::max(lane.pendingValues.size(), (slot + 1) * values));
          const double * approximation = patch.ApproximateAll();
          std::copy(approximation, approximation + values, lane.pendingValues.begin() + slot * values);
        };
        ForEachCentreOfLine(lane, unit.y, unit.z, unit.x0, unit.x1, add);
      }
      catch (...)
      {
        schedule.Abandon();
        throw;
      }
      if (!lane.pending.empty() && !schedule.WaitForTurn(unit))
      {
        return; // another worker failed; its error is rethrown
      }
      for (std::size_t i = 0; i < lane.pending.size(); ++i)
      {
        Accumulate(m_MapsOnly ? nullptr : lane.pendingValues.data() + i * values, lane.pending[i]);
      }
      patches += count;
      schedule.Done(unit);
    });
    return patches;
  }

  /** Adds one patch's approximation to the sums of its voxels, each row weighted (AggregationWeight); null: its σ
   * and rank only, to the maps' sums (a σ pass). */
  void
  Accumulate(const double * approximation, const PendingPatch & patch)
  {
    const std::size_t m = m_PatchVoxels;
    const auto        add = [&](std::size_t row, std::size_t x, std::size_t y, std::size_t z) {
      const std::int64_t dx = static_cast<std::int64_t>(x) - patch.centre[0];
      const std::int64_t dy = static_cast<std::int64_t>(y) - patch.centre[1];
      const std::int64_t dz = static_cast<std::int64_t>(z) - patch.centre[2];
      const double       weight =
        AggregationWeight(m_Options.aggregation, patch.rank, static_cast<double>(dx * dx + dy * dy + dz * dz));
      PlaneSums &       plane = Plane(z);
      const std::size_t index = x + m_Nx * y;
      double *          sums = plane.values.data() + index * m_Nv;
      for (std::size_t t = 0; approximation != nullptr && t < m_Nv; ++t)
      {
        sums[t] += weight * approximation[row + t * m];
      }
      plane.weights[index] += weight;
      plane.sigma[index] += weight * patch.sigma;
      plane.rank[index] += weight * static_cast<double>(patch.rank);
    };
    if (m_Sphere)
    {
      m_Gather.ForEachSphereRow({ patch.centre[0], patch.centre[1], patch.centre[2] },
                       [&](std::int64_t row, std::int64_t x, std::int64_t y, std::int64_t z) {
                         add(static_cast<std::size_t>(row), static_cast<std::size_t>(x), static_cast<std::size_t>(y),
                             static_cast<std::size_t>(z));
                       });
      return;
    }
    const std::size_t sx = static_cast<std::size_t>(patch.start[0]), sy = static_cast<std::size_t>(patch.start[1]),
                      sz = static_cast<std::size_t>(patch.start[2]);
    for (std::size_t z = sz; z < sz + m_Patch[2]; ++z)
    {
      for (std::size_t y = sy; y < sy + m_Patch[1]; ++y)
      {
        for (std::size_t x = sx; x < sx + m_Patch[0]; ++x)
        {
          add(CasoratiRow(x, y, z, patch.start), x, y, z);
        }
      }
    }
  }

  /** Writes planes [z0, z1) to the output (unless the run writes the maps only) and the maps, and clears their slots
   * for the planes to come. */
  void
  Flush(std::size_t z0, std::size_t z1)
  {
    const auto & si = m_Input.strides;
    const auto & so = m_Output.strides;
    const bool   volumesOuter = std::abs(so[3]) >= std::abs(so[0]);
    ForEachUnit((z1 - z0) * m_Ny, [&](Lane &, std::size_t unit) {
      const std::size_t z = z0 + unit / m_Ny, y = unit % m_Ny;
      PlaneSums &       plane = Plane(z);
      const float * inRow = m_Input.data + static_cast<std::ptrdiff_t>(y) * si[1] + static_cast<std::ptrdiff_t>(z) * si[2];
      float *       outRow = m_MapsOnly ? nullptr
                                        : m_Output.data + static_cast<std::ptrdiff_t>(y) * so[1] +
                                            static_cast<std::ptrdiff_t>(z) * so[2];
      const std::size_t rowStart = m_Nx * y;
      const auto value = [&](std::size_t x, std::size_t t) -> float {
        const std::size_t index = rowStart + x;
        const std::size_t voxel = index + m_Nx * m_Ny * z;
        if (!Inside(voxel) || plane.weights[index] == 0.0) // the centres cover every voxel inside; never 0 there
        {
          return inRow[static_cast<std::ptrdiff_t>(x) * si[0] + static_cast<std::ptrdiff_t>(t) * si[3]];
        }
        return static_cast<float>(plane.values[index * m_Nv + t] / plane.weights[index]);
      };
      const bool skipOutside = m_InPlace; // the voxel already holds its input
      const auto write = [&](std::size_t x, std::size_t t) {
        if (skipOutside && !Inside(rowStart + x + m_Nx * m_Ny * z))
        {
          return;
        }
        outRow[static_cast<std::ptrdiff_t>(x) * so[0] + static_cast<std::ptrdiff_t>(t) * so[3]] = value(x, t);
      };
      if (!m_MapsOnly && volumesOuter)
      {
        for (std::size_t t = 0; t < m_Nv; ++t)
        {
          for (std::size_t x = 0; x < m_Nx; ++x)
          {
            write(x, t);
          }
        }
      }
      else if (!m_MapsOnly)
      {
        for (std::size_t x = 0; x < m_Nx; ++x)
        {
          for (std::size_t t = 0; t < m_Nv; ++t)
          {
            write(x, t);
          }
        }
      }
      for (std::size_t x = 0; x < m_Nx; ++x)
      {
        const std::size_t index = rowStart + x;
        const std::size_t voxel = index + m_Nx * m_Ny * z;
        const bool        covered = Inside(voxel) && plane.weights[index] > 0.0;
        if (m_Maps.noiseSigma != nullptr)
        {
          m_Maps.noiseSigma[voxel] = covered ? static_cast<float>(plane.sigma[index] / plane.weights[index]) : 0.0f;
        }
        if (m_Maps.rank != nullptr)
        {
          const double rank = covered ? AggregatedRank(plane.rank[index], plane.weights[index]) : 0.0;
          m_Maps.rank[voxel] = static_cast<std::uint16_t>(std::min(rank, 65535.0));
        }
      }
      plane.Reset(rowStart, m_Nx);
    });
  }

  const SeriesView<const float> & m_Input;
  const SeriesView<float> &       m_Output;
  const LocalDenoiseMaps &        m_Maps;
  const LocalDenoiseOptions &     m_Options;
  const std::array<std::size_t, 3> m_Patch;
  const std::size_t               m_Nx, m_Ny, m_Nz, m_Nv;
  const bool                      m_Sphere;
  const PatchGather               m_Gather;
  const std::size_t               m_PatchVoxels;
  const int                       m_Group; // patches decomposed together (TridiagonalBatchFor)
  const unsigned                  m_Workers;
  std::vector<Lane>               m_Lanes;
  const bool                      m_InPlace;
  const bool                      m_MapsOnly; // a σ pass: an output view with null data, the maps only
  std::vector<std::uint8_t>       m_Centres;
  std::size_t                     m_Total{ 0 };
  std::size_t                     m_PlanesPerStep{ 1 };
  std::vector<PlaneSums>          m_Slots;
  std::size_t                     m_Flushed{ 0 };
  double                          m_Median{ 0.0 };
  ParallelFor                     m_ParallelFor;
};

} // namespace

void
RunLocalDenoiseCpu(const SeriesView<const float> & input, const SeriesView<float> & output,
                   const LocalDenoiseMaps & maps, const LocalDenoiseOptions & options,
                   const std::array<std::size_t, 3> & patch, LocalDenoiseReport & report)
{
  CpuDenoiser denoiser(input, output, maps, options, patch);
  report.patches = denoiser.Run();
}

} // namespace detail
} // namespace svdlr
