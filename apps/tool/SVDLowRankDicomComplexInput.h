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
#ifndef SVDLowRankDicomComplexInput_h
#define SVDLowRankDicomComplexInput_h

// SVDLowRankDenoiseSeries's DICOM inputs: INPUT a DICOM folder or file (its one series, or a magnitude series and
// its phase series paired by apps/io's rule, SVDLowRankDicomComplexPairs.h), and --phase a DICOM folder or file
// (read with the same 4D reader, RescaleSlope/Intercept applied). The phase then goes through --phase-units as an
// image file's does (SVDLowRankComplexInput.h). Without DCMTK a DICOM input is an InputError naming the build.

#include "SVDLowRankComplexInput.h"

#include <string>
#include <vector>

namespace svdlr_tools
{

/** Whether `path` names a DICOM input: a folder, or a file that starts like DICOM. */
bool
IsDicomInput(const std::string & path);

/** A DICOM INPUT read as a 4D series, with its phase when it has one. */
struct DicomSeriesInput
{
  SeriesImage::Pointer     series;      // the magnitude, or the input's one series
  SeriesImage::Pointer     phase;       // null when there is no phase series (and no --phase)
  std::string              phaseName;   // how messages name the phase: --phase's path, or the paired series
  std::string              description; // "INPUT (DICOM series \"...\", 6 volumes by b-value and direction)"
  std::string              pairing;     // "" or the line that says which series were paired
  std::vector<std::string> volumeNames; // what each volume is: "echo 2 (TE 20 ms)", ...
};

/** Reads the DICOM `input` (InputError for anything it cannot read or pair): its one series, or its magnitude and
 * phase series; with `phasePath` (--phase) the phase comes from there instead (a DICOM folder or file, or an image
 * file), and `input` must hold one series. `phaseUnits` is --phase-units (CheckDicomPhaseUnits). */
DicomSeriesInput
ReadDicomSeriesInput(const std::string & input, const std::string & phasePath, const std::string & phaseUnits);

/** The phase in `path`: a DICOM folder or file (one series, rescale applied, CheckDicomPhaseUnits), else an image
 * file. InputError. */
SeriesImage::Pointer
ReadPhaseInput(const std::string & path, const std::string & phaseUnits);

} // namespace svdlr_tools

#endif
