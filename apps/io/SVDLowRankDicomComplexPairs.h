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
#ifndef SVDLowRankDicomComplexPairs_h
#define SVDLowRankDicomComplexPairs_h

// Magnitude and phase DICOM series of one acquisition: which part of the complex signal a series holds (ImageType,
// ComplexImageComponent, GE's private image type), the pairing of a magnitude series with its phase series among
// the series of a folder, and the check that two read series are partners. The rule is written here once; the
// denoiser (apps/tool/SVDLowRankDicomComplexInput.h) applies it, docs/command-line.md states it.

#include "SVDLowRankDicomSeries4D.h"

#include <string>
#include <vector>

class DcmItem;

namespace svdlr_io
{

/** The part of the complex signal one image holds, in this order of precedence:
 * - `complexImageComponent` (0008,9208; Enhanced MR): MAGNITUDE, PHASE, REAL, IMAGINARY (MIXED: Unknown);
 * - a value of `imageType` (0008,0008, backslash-separated) that is M, P, R, I (Siemens' value 3, Philips' value 4,
 *   as dcm2niix reads them) or MAGNITUDE, PHASE, REAL, IMAGINARY; a type naming two parts is Unknown;
 * - `geImageType` (GE's private (0043,102F); -1 when absent): 0 magnitude, 1 phase, 2 real, 3 imaginary.
 * Unknown when none says. */
DicomComplexPart
DicomComplexPartOf(const std::string & imageType, const std::string & complexImageComponent, int geImageType);

/** The complex parts of one DICOM file's images (its DCMTK dataset): its top level's, or, for an Enhanced file whose
 * ComplexImageComponent is MIXED, each frame's (MRImageFrameTypeSequence (0018,9226) in its functional groups).
 * GE's private image type is read only from files whose Manufacturer starts with "GE". */
std::vector<DicomComplexPart>
DicomComplexPartsOfFile(DcmItem * dataset);

/** A series' one complex part: Unknown when its files hold none, or several (a mixed series). */
DicomComplexPart
SeriesComplexPart(const DicomSeriesSummary & series);

/** "series 6 \"ep2d_diff_P\" (UID)": how messages name a series. */
std::string
DescribeSeriesBriefly(const DicomSeriesSummary & series);

/** The series to denoise among those found in a DICOM input, and its phase partner when the input holds one. */
struct DicomComplexPairing
{
  const DicomSeriesSummary * magnitude{ nullptr };
  const DicomSeriesSummary * phase{ nullptr }; // null: no phase series in the input
};

/** Pairs the series found in one DICOM input (a folder, or files):
 * - one series: it, alone (a phase series alone is a DicomError: its magnitude is missing);
 * - exactly two, one magnitude and one phase series: the pair (CheckDicomPhasePartner checks them once read);
 * - anything else (several magnitude or phase series, a series of another kind beside them, a series that holds
 *   magnitude and phase images together): a DicomError naming every series and what each holds. */
DicomComplexPairing
PairMagnitudeAndPhase(const std::vector<DicomSeriesSummary> & series);

/** The phase series given for a magnitude (--phase): one series, which must not be a magnitude (DicomError). */
const DicomSeriesSummary &
SelectPhaseSeries(const std::vector<DicomSeriesSummary> & series, const std::string & where);

/** Whether `phase` (read from `phaseSeries`) is the partner of `magnitude` (from `magnitudeSeries`): the same study
 * and frame of reference where both say, the same grid (size, origin, spacing, direction), the same volumes with
 * the same names (echo, time, b-value). A DicomError naming both series and what differs. */
void
CheckDicomPhasePartner(const DicomSeries4D &      magnitude,
                       const DicomSeriesSummary & magnitudeSeries,
                       const DicomSeries4D &      phase,
                       const DicomSeriesSummary & phaseSeries);

} // namespace svdlr_io

#endif
