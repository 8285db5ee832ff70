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
#ifndef svdlr_Defaults_h
#define svdlr_Defaults_h

// The defaults of every interface, written once: the engine's RankPolicy, the ITK filters, the command-line tools
// (their options, --help and the batch path) and the Python module read them from here, so that a user gets the
// same result whichever interface runs without the option. ITK-free, like Engine.h.

#include <cstddef>

namespace svdlr
{

/** The rank kept per slice when no rank policy is given: 20 singular triplets hold most of a brain MRI slice's
 * structure (Colin27: 99.6 % of each slice's energy at 1 mm) while dropping its noise. */
constexpr std::size_t kDefaultRank = 20;

/** The local denoiser's rank policy when none is given: Marchenko-Pastur, as MRtrix3's dwidenoise (Exp1). */
constexpr const char * kDefaultDenoisePolicyName = "mp";

/** The CUDA device used when none is named. */
constexpr int kDefaultDeviceId = 0;

/** The output's pixel type, for every interface and every output kind (single file, DICOM, batch, Python):
 * float32. A reconstruction or a denoised image is not integer-valued: rounding it back to an integer input type
 * (uint8 for Colin27) loses the detail the method recovers and clamps its small negative values. float32 is also
 * what the engine computes. "same" (the input's type, rounded and clamped) is the one alternative. */
constexpr const char * kDefaultOutputTypeName = "float32";
constexpr const char * kSameAsInputOutputTypeName = "same";

/** The command-line tools' progress lines off a terminal: at most one every this many seconds. */
constexpr double kProgressLineIntervalSeconds = 5.0;

} // namespace svdlr

#endif
