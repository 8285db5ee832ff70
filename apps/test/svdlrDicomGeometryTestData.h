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
#ifndef svdlrDicomGeometryTestData_h
#define svdlrDicomGeometryTestData_h

// Series that are not one volume, cut from a real MRI (Colin27) with DCMTK: a tri-planar localizer (three
// orientations, three sizes), multi-echo series (classic files, shuffled), and Enhanced MR multi-frame files
// whose frames carry their geometry, rescale and echo in functional groups. Each image's pixels are Colin27's
// voxels on the image's plane, so any reader's geometry can be checked against Colin27 itself.

#include "svdlrDicomTestData.h"

#include "itkImageFileReader.h"
#include "itkImageRegionConstIteratorWithIndex.h"

#include <functional>

namespace svdlr_test
{

/** Colin27 as floats, or null (and the test skips or fails, as ExistingTestFile says) when it is missing. */
inline DicomVolumeImage::Pointer
Colin27OrNull()
{
  const std::string path = Colin27Path();
  return path.empty() ? nullptr : itk::ReadImage<DicomVolumeImage>(path);
}

/** One 2D image on a plane through Colin27: its corner voxel and the volume axes along its rows and columns
 * (signed: -1 walks the axis backwards), sized to stay inside the volume. */
struct PlaneSpec
{
  std::array<long, 3> corner{ { 0, 0, 0 } };
  int                 alongRow{ 0 }; // volume axis walked along a row (increasing column)
  int                 rowSign{ 1 };
  int                 alongColumn{ 1 }; // volume axis walked down a column (increasing row)
  int                 columnSign{ 1 };
  unsigned int        columns{ 0 };
  unsigned int        rows{ 0 };
};

/** The patient-space geometry of a plane and the Colin27 values on it (row-major), all from the volume's own
 * index-to-point mapping. */
struct PlaneImage
{
  Vector3             position{};
  Vector3             rowDirection{};
  Vector3             columnDirection{};
  double              rowSpacing{ 1.0 };    // between rows
  double              columnSpacing{ 1.0 }; // between columns
  unsigned int        rows{ 0 };
  unsigned int        columns{ 0 };
  std::vector<double> values;
};

inline PlaneImage
CutPlane(const DicomVolumeImage * volume, const PlaneSpec & spec)
{
  PlaneImage plane;
  plane.rows = spec.rows;
  plane.columns = spec.columns;
  const auto & direction = volume->GetDirection();
  const auto & spacing = volume->GetSpacing();
  for (unsigned int i = 0; i < 3; ++i)
  {
    plane.rowDirection[i] = spec.rowSign * direction[i][spec.alongRow];
    plane.columnDirection[i] = spec.columnSign * direction[i][spec.alongColumn];
  }
  plane.columnSpacing = spacing[spec.alongRow];
  plane.rowSpacing = spacing[spec.alongColumn];
  DicomVolumeImage::IndexType index{ { spec.corner[0], spec.corner[1], spec.corner[2] } };
  DicomVolumeImage::PointType point;
  volume->TransformIndexToPhysicalPoint(index, point);
  plane.position = { { point[0], point[1], point[2] } };
  for (unsigned int r = 0; r < spec.rows; ++r)
  {
    for (unsigned int c = 0; c < spec.columns; ++c)
    {
      DicomVolumeImage::IndexType at = index;
      at[spec.alongRow] += spec.rowSign * static_cast<long>(c);
      at[spec.alongColumn] += spec.columnSign * static_cast<long>(r);
      plane.values.push_back(volume->GetPixel(at));
    }
  }
  return plane;
}

/** Axial, coronal and sagittal planes through the middle of `volume`, oriented as scanners show them
 * (coronal and sagittal from the top of the head down). Three sizes for Colin27: 181x217, 181x181, 217x181. */
inline std::vector<PlaneSpec>
TriPlanarLocalizer(const DicomVolumeImage * volume)
{
  const auto size = volume->GetLargestPossibleRegion().GetSize();
  const long nx = static_cast<long>(size[0]), ny = static_cast<long>(size[1]), nz = static_cast<long>(size[2]);
  PlaneSpec  axial{ { { 0, 0, nz / 2 } }, 0, 1, 1, 1, static_cast<unsigned>(nx), static_cast<unsigned>(ny) };
  PlaneSpec  coronal{ { { 0, ny / 2, nz - 1 } }, 0, 1, 2, -1, static_cast<unsigned>(nx), static_cast<unsigned>(nz) };
  PlaneSpec  sagittal{ { { nx / 2, 0, nz - 1 } }, 1, 1, 2, -1, static_cast<unsigned>(ny), static_cast<unsigned>(nz) };
  return { axial, coronal, sagittal };
}

/** `count` axial slices of `volume` from `first`, `step` apart, cropped to `columns` x `rows` from (x0, y0). */
inline std::vector<PlaneSpec>
AxialStack(long first, long step, unsigned int count, long x0, long y0, unsigned int columns, unsigned int rows)
{
  std::vector<PlaneSpec> planes;
  for (unsigned int k = 0; k < count; ++k)
  {
    planes.push_back({ { { x0, y0, first + static_cast<long>(k) * step } }, 0, 1, 1, 1, columns, rows });
  }
  return planes;
}

/** Stored 16-bit values of `physical` under value = stored * slope + intercept (exact when `physical` was made
 * from whole stored values). */
inline std::vector<Uint16>
Stored(const std::vector<double> & physical, double slope, double intercept)
{
  std::vector<Uint16> stored;
  for (const double v : physical)
  {
    stored.push_back(static_cast<Uint16>(std::lround((v - intercept) / slope)));
  }
  return stored;
}

/** Who every image cut from Colin27 belongs to: one patient, one study, the series given. */
inline DicomIdentity
Colin27Identity(const std::string & seriesUID, const std::string & description)
{
  return { "Colin^TwentySeven", "SVDLR-COLIN27",  "1.2.826.0.1.3680043.9.7261.27", seriesUID,
           "5",                 description,      "1.2.826.0.1.3680043.9.7261.27.1" };
}

inline std::string
JoinGeometry(const Vector3 & a, const Vector3 & b)
{
  return JoinDS({ a[0], a[1], a[2], b[0], b[1], b[2] });
}

/** One classic MR file of `plane` (stored through slope/intercept); `extra` adds attributes (echo, ...). */
inline void
WriteClassicImage(const std::string &                       path,
                  const PlaneImage &                        plane,
                  const std::string &                       seriesUID,
                  const std::string &                       description,
                  int                                       instanceNumber,
                  double                                    slope,
                  double                                    intercept,
                  const std::function<void(DcmDataset *)> & extra = {})
{
  DcmFileFormat file;
  DcmDataset *  dataset = file.getDataset();
  PutClassicMrImage(dataset,
                    Colin27Identity(seriesUID, description),
                    DicomPixelFormat{},
                    { plane.position, plane.rowDirection, plane.columnDirection, plane.rowSpacing, plane.columnSpacing,
                      1.0, plane.rows, plane.columns },
                    instanceNumber);
  Put(dataset, DCM_Manufacturer, "SVDLR test");
  Put(dataset, DCM_RescaleSlope, svdlr_io::FormatDecimalString(slope));
  Put(dataset, DCM_RescaleIntercept, svdlr_io::FormatDecimalString(intercept));
  if (extra)
  {
    extra(dataset);
  }
  const auto stored = Stored(plane.values, slope, intercept);
  ASSERT_TRUE(dataset->putAndInsertUint16Array(DCM_PixelData, stored.data(), stored.size()).good());
  ASSERT_TRUE(file.saveFile(path.c_str(), EXS_LittleEndianExplicit).good()) << path;
}

/** One frame of an Enhanced MR file: its plane, echo, rescale and dimension indices (echo, in-stack). */
struct EnhancedFrame
{
  PlaneImage plane;
  double     echoTime{ 0.0 };
  int        echoIndex{ 1 };
  int        inStack{ 1 };
  double     slope{ 1.0 };
  double     intercept{ 0.0 };
};

inline DcmItem *
NewItem(DcmItem * parent, const DcmTagKey & sequence)
{
  DcmItem * item = nullptr;
  EXPECT_TRUE(parent->findOrCreateSequenceItem(sequence, item, -2).good());
  return item;
}

/** An Enhanced MR Image Storage file of `frames` (same size): orientation and pixel measures in the Shared
 * Functional Groups (the first frame's), position, echo, rescale and FrameContent (DimensionIndexValues:
 * echo, in-stack position) per frame; the dimensions declared in DimensionIndexSequence. */
inline void
WriteEnhancedMr(const std::string &                path,
                const std::vector<EnhancedFrame> & frames,
                const std::string &                seriesUID,
                const std::string &                description)
{
  DcmFileFormat file;
  DcmDataset *  dataset = file.getDataset();
  PutMrImage(dataset, Colin27Identity(seriesUID, description), UID_EnhancedMRImageStorage, DicomPixelFormat{});
  Put(dataset, DCM_Manufacturer, "SVDLR test");
  Put(dataset, DCM_ImageType, "ORIGINAL\\PRIMARY\\M\\NONE");
  Put(dataset, DCM_InstanceNumber, "1");
  Put(dataset, DCM_ContentDate, "20240102");
  Put(dataset, DCM_ContentTime, "120000");
  Put(dataset, DCM_AcquisitionDateTime, "20240102120000");
  Put(dataset, DCM_EchoPulseSequence, "GRADIENT");
  Put(dataset, DCM_MRAcquisitionType, "2D");
  Put(dataset, DCM_NumberOfFrames, std::to_string(frames.size()));
  const PlaneImage & first = frames.front().plane;
  dataset->putAndInsertUint16(DCM_Rows, static_cast<Uint16>(first.rows));
  dataset->putAndInsertUint16(DCM_Columns, static_cast<Uint16>(first.columns));

  char              uid[100];
  const std::string organization = dcmGenerateUniqueIdentifier(uid, SITE_UID_ROOT);
  Put(NewItem(dataset, DCM_DimensionOrganizationSequence), DCM_DimensionOrganizationUID, organization);
  const std::pair<DcmTagKey, DcmTagKey> dimensions[] = { { DCM_EffectiveEchoTime, DCM_MREchoSequence },
                                                         { DCM_InStackPositionNumber, DCM_FrameContentSequence } };
  for (const auto & [pointer, group] : dimensions)
  {
    DcmItem * item = NewItem(dataset, DCM_DimensionIndexSequence);
    Put(item, DCM_DimensionOrganizationUID, organization);
    item->putAndInsertTagKey(DCM_DimensionIndexPointer, pointer);
    item->putAndInsertTagKey(DCM_FunctionalGroupPointer, group);
  }

  DcmItem * shared = NewItem(dataset, DCM_SharedFunctionalGroupsSequence);
  Put(NewItem(shared, DCM_PlaneOrientationSequence),
      DCM_ImageOrientationPatient,
      JoinGeometry(first.rowDirection, first.columnDirection));
  DcmItem * measures = NewItem(shared, DCM_PixelMeasuresSequence);
  Put(measures, DCM_PixelSpacing, JoinDS({ first.rowSpacing, first.columnSpacing }));
  Put(measures, DCM_SliceThickness, "1");
  DcmItem * timing = NewItem(shared, DCM_MRTimingAndRelatedParametersSequence);
  Put(timing, DCM_RepetitionTime, "2000");
  Put(timing, DCM_FlipAngle, "90");

  std::vector<Uint16> pixels;
  for (const EnhancedFrame & frame : frames)
  {
    DcmItem *       perFrame = NewItem(dataset, DCM_PerFrameFunctionalGroupsSequence);
    const Vector3 & p = frame.plane.position;
    Put(NewItem(perFrame, DCM_PlanePositionSequence), DCM_ImagePositionPatient, JoinDS({ p[0], p[1], p[2] }));
    Put(NewItem(perFrame, DCM_MREchoSequence), DCM_EffectiveEchoTime, svdlr_io::FormatDecimalString(frame.echoTime));
    DcmItem * transformation = NewItem(perFrame, DCM_PixelValueTransformationSequence);
    Put(transformation, DCM_RescaleSlope, svdlr_io::FormatDecimalString(frame.slope));
    Put(transformation, DCM_RescaleIntercept, svdlr_io::FormatDecimalString(frame.intercept));
    Put(transformation, DCM_RescaleType, "US");
    DcmItem *    content = NewItem(perFrame, DCM_FrameContentSequence);
    const Uint32 indices[] = { static_cast<Uint32>(frame.echoIndex), static_cast<Uint32>(frame.inStack) };
    ASSERT_TRUE(content->putAndInsertUint32Array(DCM_DimensionIndexValues, indices, 2).good());
    content->putAndInsertUint32(DCM_InStackPositionNumber, static_cast<Uint32>(frame.inStack));
    Put(content, DCM_StackID, "1");
    const auto stored = Stored(frame.plane.values, frame.slope, frame.intercept);
    pixels.insert(pixels.end(), stored.begin(), stored.end());
  }
  ASSERT_TRUE(dataset->putAndInsertUint16Array(DCM_PixelData, pixels.data(), pixels.size()).good());
  ASSERT_TRUE(file.saveFile(path.c_str(), EXS_LittleEndianExplicit).good()) << path;
}

/** Every voxel of `image` at its physical point in `reference` (a whole voxel there), with `transform` of the
 * reference's value: geometry and pixels checked together, whatever axes each reader chose. */
inline void
ExpectOnReference(const DicomVolumeImage *              image,
                  const DicomVolumeImage *              reference,
                  const std::function<double(double)> & transform,
                  double                                tolerance)
{
  std::size_t bad = 0;
  const auto  region = image->GetLargestPossibleRegion();
  for (itk::ImageRegionConstIteratorWithIndex<DicomVolumeImage> it(image, region); !it.IsAtEnd(); ++it)
  {
    DicomVolumeImage::PointType point;
    image->TransformIndexToPhysicalPoint(it.GetIndex(), point);
    itk::ContinuousIndex<double, 3> index;
    ASSERT_TRUE(reference->TransformPhysicalPointToContinuousIndex(point, index)) << "outside: " << point;
    DicomVolumeImage::IndexType nearest;
    for (unsigned int i = 0; i < 3; ++i)
    {
      ASSERT_NEAR(index[i], std::round(index[i]), 1e-3) << "voxel " << it.GetIndex() << " is off the grid";
      nearest[i] = static_cast<long>(std::round(index[i]));
    }
    const double expected = transform(reference->GetPixel(nearest));
    if (std::abs(expected - it.Get()) > tolerance && ++bad <= 5)
    {
      ADD_FAILURE() << "voxel " << it.GetIndex() << ": expected " << expected << ", got " << it.Get();
    }
  }
  EXPECT_EQ(bad, 0u);
}

} // namespace svdlr_test

#endif
