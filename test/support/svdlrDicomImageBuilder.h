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
#ifndef svdlrDicomImageBuilder_h
#define svdlrDicomImageBuilder_h

// How the DICOM tests build an MR image with DCMTK, written once: who it belongs to (patient, study, series), how
// its pixels are stored, and, for a classic single-frame image, where it lies. The synthetic series
// (apps/test/svdlrDicomTestData.h) and the images cut from Colin27 (apps/test/svdlrDicomGeometryTestData.h) both
// build theirs here.

#include "SVDLowRankDicomTags.h"

#include "dcmtk/dcmdata/dctk.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace svdlr_test
{
using Vector3 = std::array<double, 3>;

/** Values as one DICOM decimal-string attribute (VM > 1: backslash-separated). */
inline std::string
JoinDS(const std::vector<double> & values)
{
  std::string text;
  for (double v : values)
  {
    text += (text.empty() ? "" : "\\") + svdlr_io::FormatDecimalString(v);
  }
  return text;
}

inline void
Put(DcmItem * item, const DcmTagKey & tag, const std::string & value)
{
  ASSERT_TRUE(item->putAndInsertString(tag, value.c_str()).good()) << DcmTag(tag).getTagName();
}

/** Who and what an image belongs to; every image of a test series shares it. */
struct DicomIdentity
{
  std::string patientName;
  std::string patientId;
  std::string studyUID;
  std::string seriesUID;
  std::string seriesNumber;
  std::string seriesDescription;
  std::string frameOfReferenceUID;
};

/** How the pixels are stored. */
struct DicomPixelFormat
{
  unsigned int bitsAllocated{ 16 };
  unsigned int bitsStored{ 16 };
  bool         isSigned{ false };
  std::string  photometric{ "MONOCHROME2" };
};

/** Where a classic single-frame image lies, in patient space. */
struct DicomPlane
{
  Vector3      position{};
  Vector3      rowDirection{};
  Vector3      columnDirection{};
  double       rowSpacing{ 1.0 };    // PixelSpacing[0], between rows
  double       columnSpacing{ 1.0 }; // PixelSpacing[1], between columns
  double       sliceThickness{ 1.0 };
  unsigned int rows{ 0 };
  unsigned int columns{ 0 };
};

/** The attributes every MR test image carries: a new SOP instance of `sopClass`, its patient, study and series, the
 * modality, and its pixel format. */
inline void
PutMrImage(DcmItem * dataset, const DicomIdentity & identity, const char * sopClass, const DicomPixelFormat & format)
{
  char uid[100];
  Put(dataset, DCM_SOPClassUID, sopClass);
  Put(dataset, DCM_SOPInstanceUID, dcmGenerateUniqueIdentifier(uid, SITE_INSTANCE_UID_ROOT));
  Put(dataset, DCM_PatientName, identity.patientName);
  Put(dataset, DCM_PatientID, identity.patientId);
  Put(dataset, DCM_StudyInstanceUID, identity.studyUID);
  Put(dataset, DCM_StudyDate, "20240102");
  Put(dataset, DCM_Modality, "MR");
  Put(dataset, DCM_SeriesInstanceUID, identity.seriesUID);
  Put(dataset, DCM_SeriesNumber, identity.seriesNumber);
  Put(dataset, DCM_SeriesDescription, identity.seriesDescription);
  Put(dataset, DCM_FrameOfReferenceUID, identity.frameOfReferenceUID);
  Put(dataset, DCM_SamplesPerPixel, "1");
  Put(dataset, DCM_PhotometricInterpretation, format.photometric);
  dataset->putAndInsertUint16(DCM_BitsAllocated, format.bitsAllocated);
  dataset->putAndInsertUint16(DCM_BitsStored, format.bitsStored);
  dataset->putAndInsertUint16(DCM_HighBit, format.bitsStored - 1);
  dataset->putAndInsertUint16(DCM_PixelRepresentation, format.isSigned ? 1 : 0);
}

/** A classic MR image (MR Image Storage) of `identity` and `format` on `plane`, numbered `instanceNumber`; the caller
 * adds the rescale, anything else, and the pixels. */
inline void
PutClassicMrImage(DcmItem *                dataset,
                  const DicomIdentity &    identity,
                  const DicomPixelFormat & format,
                  const DicomPlane &       plane,
                  int                      instanceNumber)
{
  PutMrImage(dataset, identity, UID_MRImageStorage, format);
  Put(dataset, DCM_ImageType, "ORIGINAL\\PRIMARY\\M\\ND");
  Put(dataset, DCM_InstanceNumber, std::to_string(instanceNumber));
  Put(dataset, DCM_ImagePositionPatient, JoinDS({ plane.position[0], plane.position[1], plane.position[2] }));
  Put(dataset,
      DCM_ImageOrientationPatient,
      JoinDS({ plane.rowDirection[0],
               plane.rowDirection[1],
               plane.rowDirection[2],
               plane.columnDirection[0],
               plane.columnDirection[1],
               plane.columnDirection[2] }));
  Put(dataset, DCM_PixelSpacing, JoinDS({ plane.rowSpacing, plane.columnSpacing }));
  Put(dataset, DCM_SliceThickness, svdlr_io::FormatDecimalString(plane.sliceThickness));
  dataset->putAndInsertUint16(DCM_Rows, static_cast<Uint16>(plane.rows));
  dataset->putAndInsertUint16(DCM_Columns, static_cast<Uint16>(plane.columns));
}

} // namespace svdlr_test

#endif
