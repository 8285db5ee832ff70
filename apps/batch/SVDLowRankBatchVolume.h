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
#ifndef SVDLowRankBatchVolume_h
#define SVDLowRankBatchVolume_h

// One volume's steps in the batch pipeline, each a function the pipeline's threads call: read it into a
// leased buffer (float32, x fastest), reconstruct it in place through the engine, write it atomically. The
// reconstruction's matrices are the slices along the last axis, as the tool's default slice axis.

#include "SVDLowRankBatchBuffers.h"
#include "SVDLowRankBatchInputs.h"
#include "SVDLowRankImageFileErrors.h"
#include "SVDLowRankReconstructionResult.h"

#include "svdlr/Engine.h"

#include <array>
#include <cstddef>
#include <memory>

namespace svdlr_batch
{

/** A volume that cannot be read, reconstructed or written: this volume fails, the run goes on. */
SVDLR_DECLARE_ERROR(VolumeError, std::runtime_error);

struct VolumeGeometry
{
  unsigned int                dimension{ 3 }; // 2: a single image, written back as a 2D image
  std::array<std::size_t, 3>  size{ { 0, 0, 0 } };
  std::array<double, 3>       spacing{ { 1, 1, 1 } };
  std::array<double, 3>       origin{ { 0, 0, 0 } };
  std::array<double, 9>       direction{ { 1, 0, 0, 0, 1, 0, 0, 0, 1 } }; // row-major
  std::size_t
  Pixels() const
  {
    return size[0] * size[1] * size[2];
  }
};

/** A volume between reading and writing. */
struct StagedVolume
{
  std::size_t    index{ 0 }; // in the run's inputs
  VolumeGeometry geometry;
  BufferLease    pixels;
  std::shared_ptr<const void> dicomSource; // the series' metadata (svdlr_io::DicomVolume), DICOM inputs only
};

/** Reads `input` into a buffer of `pool`. Throws VolumeError (unreadable file, not a scalar 2D/3D image). */
StagedVolume
ReadVolume(const BatchInput & input, std::size_t index, HostBufferPool & pool);

/** Reconstructs the volume's slices in place. Throws svdlr::Error. */
svdlr::Report
ReconstructVolume(StagedVolume & volume, const svdlr::Options & options);

/** Writes the volume to `result.output` (a file, or a folder of DICOM files for a DICOM series) under a hidden
 * temporary name and renames it into place, creating the output's folders. A derived DICOM series is labelled
 * from `policy` and `result.ranks` as the single-volume path labels it (svdlr_io::DerivedSeriesOptions);
 * `compressionLevel` > 0 sets the writer's (gzip 1-9 for .nii.gz), 0 keeps ITK's. Throws VolumeError. */
void
WriteVolume(const StagedVolume &                   volume,
            const BatchInput &                     input,
            const svdlr_io::ReconstructionResult & result,
            const svdlr::RankPolicy &              policy,
            bool                                   overwrite,
            int                                    compressionLevel = 0);

} // namespace svdlr_batch

#endif
