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
// Enhanced multi-frame images (Enhanced MR Image Storage and the other IODs with functional groups, PS3.3
// C.7.6.16): each frame's geometry, rescale and 4D keys from its Per-frame Functional Groups, else from the
// Shared ones; and an Enhanced frame's header turned into a classic single-frame MR header for the writer.
#include "SVDLowRankDicomFrameParsing.h"

#include <cmath>

namespace svdlr_io
{
namespace
{

// The first item of the functional group macro `sequence` for one frame: the Per-frame one wins over the
// Shared one (PS3.3 C.7.6.16: a macro sits in one or the other).
DcmItem *
GroupItem(DcmItem * perFrame, DcmItem * shared, const DcmTagKey & sequence)
{
  DcmItem * item = nullptr;
  if (perFrame != nullptr && perFrame->findAndGetSequenceItem(sequence, item, 0).good() && item != nullptr)
    return item;
  if (shared != nullptr && shared->findAndGetSequenceItem(sequence, item, 0).good() && item != nullptr)
    return item;
  return nullptr;
}

// The position in DimensionIndexValues of the in-stack dimension (the one that places a frame in its volume),
// or -1: the remaining indices tell the volumes of a multi-dimensional file apart.
long
InStackDimension(DcmItem * dataset)
{
  DcmSequenceOfItems * dimensions = nullptr;
  if (dataset->findAndGetSequence(DCM_DimensionIndexSequence, dimensions).bad() || dimensions == nullptr)
    return -1;
  for (unsigned long i = 0; i < dimensions->card(); ++i)
  {
    DcmElement * element = nullptr;
    DcmTagKey    pointer;
    if (dimensions->getItem(i)->findAndGetElement(DCM_DimensionIndexPointer, element).good() &&
        element->ident() == EVR_AT && static_cast<DcmAttributeTag *>(element)->getTagVal(pointer, 0).good() &&
        (pointer == DCM_InStackPositionNumber || pointer == DCM_ImagePositionPatient))
      return static_cast<long>(i);
  }
  return -1;
}

// Copies `from`'s `tag` (first found) to `to`'s `as`: a functional group attribute moved to the top level.
void
Lift(DcmItem * from, const DcmTagKey & tag, DcmItem * to, const DcmTagKey & as)
{
  OFString value;
  if (from != nullptr && from->findAndGetOFStringArray(tag, value).good())
  {
    to->putAndInsertString(as, value.c_str());
  }
}

void
PutIfAbsent(DcmItem * dataset, const DcmTagKey & tag, const std::string & value)
{
  if (!dataset->tagExists(tag))
    dataset->putAndInsertString(tag, value.c_str());
}

} // namespace

std::vector<DicomFrame>
ParseFunctionalGroupFrames(DcmItem * dataset, const DicomFrame & common)
{
  DcmSequenceOfItems * perFrameGroups = nullptr;
  if (dataset->findAndGetSequence(DCM_PerFrameFunctionalGroupsSequence, perFrameGroups).bad() ||
      perFrameGroups == nullptr)
  {
    return {};
  }
  if (perFrameGroups->card() != common.framesInFile)
  {
    throw FileError(common.file,
                    "has " + std::to_string(perFrameGroups->card()) + " Per-frame Functional Groups for " +
                      std::to_string(common.framesInFile) + " frames (NumberOfFrames)");
  }
  DcmItem * shared = nullptr;
  dataset->findAndGetSequenceItem(DCM_SharedFunctionalGroupsSequence, shared, 0);
  const long inStack = InStackDimension(dataset);

  std::vector<DicomFrame> frames;
  for (unsigned int f = 0; f < common.framesInFile; ++f)
  {
    DcmItem *  perFrame = perFrameGroups->getItem(f);
    DicomFrame frame = common;
    frame.frame = f;
    double values[6];
    if (GetDecimals(GroupItem(perFrame, shared, DCM_PlanePositionSequence), DCM_ImagePositionPatient, values, 3))
    {
      frame.hasPosition = true;
      frame.position = { { values[0], values[1], values[2] } };
    }
    if (GetDecimals(GroupItem(perFrame, shared, DCM_PlaneOrientationSequence), DCM_ImageOrientationPatient, values, 6))
    {
      frame.hasOrientation = true;
      frame.rowDirection = { { values[0], values[1], values[2] } };
      frame.columnDirection = { { values[3], values[4], values[5] } };
    }
    DcmItem * measures = GroupItem(perFrame, shared, DCM_PixelMeasuresSequence);
    if (GetDecimals(measures, DCM_PixelSpacing, values, 2) && values[0] > 0.0 && values[1] > 0.0)
    {
      frame.rowSpacing = values[0];
      frame.columnSpacing = values[1];
    }
    if (GetDecimals(measures, DCM_SliceThickness, values, 1))
      frame.sliceThickness = values[0];
    if (GetDecimals(measures, DCM_SpacingBetweenSlices, values, 1))
      frame.spacingBetweenSlices = values[0];
    DcmItem * transformation = GroupItem(perFrame, shared, DCM_PixelValueTransformationSequence);
    if (GetDecimals(transformation, DCM_RescaleSlope, values, 1) && values[0] != 0.0)
      frame.slope = values[0];
    if (GetDecimals(transformation, DCM_RescaleIntercept, values, 1))
      frame.intercept = values[0];

    // The 4D keys.
    DicomFrameKey & key = frame.key;
    if (GetDecimals(GroupItem(perFrame, shared, DCM_MREchoSequence), DCM_EffectiveEchoTime, values, 1))
      key.echoTime = values[0];
    DcmItem * diffusion = GroupItem(perFrame, shared, DCM_MRDiffusionSequence);
    if (GetDecimals(diffusion, DCM_DiffusionBValue, values, 1))
      key.bValue = values[0];
    DcmItem * direction = nullptr;
    if (diffusion != nullptr &&
        diffusion->findAndGetSequenceItem(DCM_DiffusionGradientDirectionSequence, direction, 0).good() &&
        GetDecimals(direction, DCM_DiffusionGradientOrientation, values, 3))
      key.gradient = { { values[0], values[1], values[2] } };
    if (GetDecimals(GroupItem(perFrame, shared, DCM_CardiacSynchronizationSequence),
                    DCM_NominalCardiacTriggerDelayTime,
                    values,
                    1))
      key.triggerTime = values[0];
    else if (GetDecimals(
               GroupItem(perFrame, shared, DCM_TemporalPositionSequence), DCM_TemporalPositionTimeOffset, values, 1))
      key.triggerTime = values[0] * 1000.0; // seconds; trigger times are in ms
    DcmItem * content = GroupItem(perFrame, nullptr, DCM_FrameContentSequence);
    Uint32    index = 0;
    if (content != nullptr && content->findAndGetUint32(DCM_TemporalPositionIndex, index).good())
      key.temporalPosition = static_cast<int>(index);
    key.dimensionIndex.clear();
    for (unsigned long i = 0;
         content != nullptr && content->findAndGetUint32(DCM_DimensionIndexValues, index, i).good();
         ++i)
    {
      if (static_cast<long>(i) != inStack)
        key.dimensionIndex.push_back(static_cast<int>(index));
    }
    frames.push_back(frame);
  }
  return frames;
}

void
FlattenFunctionalGroups(DcmItem * dataset, unsigned int frame)
{
  DcmItem * perFrame = nullptr;
  if (dataset->findAndGetSequenceItem(DCM_PerFrameFunctionalGroupsSequence, perFrame, static_cast<int>(frame)).bad())
  {
    perFrame = nullptr;
  }
  DcmItem * shared = nullptr;
  dataset->findAndGetSequenceItem(DCM_SharedFunctionalGroupsSequence, shared, 0);

  DcmItem * measures = GroupItem(perFrame, shared, DCM_PixelMeasuresSequence);
  Lift(measures, DCM_SliceThickness, dataset, DCM_SliceThickness);
  Lift(measures, DCM_SpacingBetweenSlices, dataset, DCM_SpacingBetweenSlices);
  DcmItem * timing = GroupItem(perFrame, shared, DCM_MRTimingAndRelatedParametersSequence);
  Lift(timing, DCM_RepetitionTime, dataset, DCM_RepetitionTime);
  Lift(timing, DCM_FlipAngle, dataset, DCM_FlipAngle);
  Lift(timing, DCM_EchoTrainLength, dataset, DCM_EchoTrainLength);
  Lift(GroupItem(perFrame, shared, DCM_MREchoSequence), DCM_EffectiveEchoTime, dataset, DCM_EchoTime);
  DcmItem * diffusion = GroupItem(perFrame, shared, DCM_MRDiffusionSequence);
  Lift(diffusion, DCM_DiffusionBValue, dataset, DCM_DiffusionBValue);
  DcmItem * direction = nullptr;
  if (diffusion != nullptr &&
      diffusion->findAndGetSequenceItem(DCM_DiffusionGradientDirectionSequence, direction, 0).good())
  {
    Lift(direction, DCM_DiffusionGradientOrientation, dataset, DCM_DiffusionGradientOrientation);
  }
  Lift(GroupItem(perFrame, shared, DCM_CardiacSynchronizationSequence),
       DCM_NominalCardiacTriggerDelayTime,
       dataset,
       DCM_TriggerTime);
  DcmItem * window = GroupItem(perFrame, shared, DCM_FrameVOILUTSequence);
  Lift(window, DCM_WindowCenter, dataset, DCM_WindowCenter);
  Lift(window, DCM_WindowWidth, dataset, DCM_WindowWidth);
  DcmItem * content = GroupItem(perFrame, nullptr, DCM_FrameContentSequence);
  Uint32    temporal = 0;
  if (content != nullptr && content->findAndGetUint32(DCM_TemporalPositionIndex, temporal).good())
  {
    dataset->putAndInsertString(DCM_TemporalPositionIdentifier, std::to_string(temporal).c_str());
  }
  // Position, orientation and pixel spacing come from the derived image's geometry (the writer sets them).

  // Classic MR Image module (PS3.3 C.8.3.1): ScanningSequence from the Enhanced pulse sequence attributes,
  // the other attributes it requires present, if empty.
  std::string scanning;
  OFString    value;
  const bool  isMR = GetString(dataset, DCM_Modality) == "MR";
  if (dataset->findAndGetOFString(DCM_EchoPulseSequence, value).good())
  {
    scanning = value == "SPIN" ? "SE" : value == "GRADIENT" ? "GR" : value == "BOTH" ? "SE\\GR" : "";
  }
  if (dataset->findAndGetOFString(DCM_InversionRecovery, value).good() && value == "YES")
    scanning += scanning.empty() ? "IR" : "\\IR";
  if (dataset->findAndGetOFString(DCM_EchoPlanarPulseSequence, value).good() && value == "YES")
    scanning += scanning.empty() ? "EP" : "\\EP";
  if (isMR)
  {
    PutIfAbsent(dataset, DCM_ScanningSequence, scanning.empty() ? "RM" : scanning);
    PutIfAbsent(dataset, DCM_SequenceVariant, "NONE");
    PutIfAbsent(dataset, DCM_ScanOptions, "");
    PutIfAbsent(dataset, DCM_MRAcquisitionType, "");
    PutIfAbsent(dataset, DCM_EchoTime, "");
    PutIfAbsent(dataset, DCM_RepetitionTime, "");
    PutIfAbsent(dataset, DCM_EchoTrainLength, "");
  }

  // The classic storage class of the Enhanced one; others stay as they are, as single frames.
  const std::string sopClass = GetString(dataset, DCM_SOPClassUID);
  const bool ct = sopClass == UID_EnhancedCTImageStorage || sopClass == UID_LegacyConvertedEnhancedCTImageStorage;
  const bool mr = sopClass == UID_EnhancedMRImageStorage || sopClass == UID_LegacyConvertedEnhancedMRImageStorage;
  for (const DcmTagKey & tag : { DCM_SharedFunctionalGroupsSequence,
                                 DCM_PerFrameFunctionalGroupsSequence,
                                 DCM_DimensionOrganizationSequence,
                                 DCM_DimensionIndexSequence,
                                 DCM_DimensionOrganizationType,
                                 DCM_NumberOfFrames,
                                 DCM_ConcatenationUID,
                                 DCM_ConcatenationFrameOffsetNumber,
                                 DCM_InConcatenationNumber,
                                 DCM_InConcatenationTotalNumber,
                                 DCM_SourceImageEvidenceSequence,
                                 DCM_ReferencedImageEvidenceSequence })
  {
    dataset->findAndDeleteElement(tag, OFTrue);
  }
  if (mr || ct)
  {
    dataset->putAndInsertString(DCM_SOPClassUID, ct ? UID_CTImageStorage : UID_MRImageStorage);
  }
  else
  {
    dataset->putAndInsertString(DCM_NumberOfFrames, "1");
  }
}

} // namespace svdlr_io
