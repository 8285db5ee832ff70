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
#ifndef svdlrDicomTestData_h
#define svdlrDicomTestData_h

// What the DICOM, PNG-folder and tool tests share: fresh random data, scratch folders, DICOM series
// written by DCMTK with known answers, ITK's own GDCM reader for cross-checks, and the real files
// fetched by fetch-test-data.sh.

#include "SVDLowRankDicomSeries.h"
#include "svdlrDicomImageBuilder.h"
#include "svdlrTestData.h"
#include "svdlrTestScratch.h"

#include "dcmtk/dcmjpeg/djrplol.h"

#include "itkGDCMImageIO.h"
#include "itkGDCMSeriesFileNames.h"
#include "itkImageSeriesReader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace svdlr_test
{
namespace fs = std::filesystem;
using svdlr_io::DicomVolumeImage;

/** A series to write: geometry, pixel format and encoding. Stored values are random over the format's
 * range (never all zero). */
struct SeriesSpec
{
  unsigned int     rows{ 24 };
  unsigned int     columns{ 20 };
  unsigned int     slices{ 6 };
  unsigned int     bitsAllocated{ 16 };
  unsigned int     bitsStored{ 16 };
  bool             isSigned{ false };
  Vector3          origin{ { -50.5, 20.25, 10.0 } };
  Vector3          rowDirection{ { 1.0, 0.0, 0.0 } };
  Vector3          columnDirection{ { 0.0, 1.0, 0.0 } };
  double           rowSpacing{ 0.8 };    // PixelSpacing[0]
  double           columnSpacing{ 0.7 }; // PixelSpacing[1]
  double           sliceSpacing{ 2.5 };
  double           slope{ 1.0 };
  double           intercept{ 0.0 };
  bool             slopePerSlice{ false }; // slope * (1 + k / 2) on slice k
  E_TransferSyntax transferSyntax{ EXS_LittleEndianExplicit };
  std::string      seriesUID;
  std::string      seriesDescription{ "synthetic t1" };
  std::string      seriesNumber{ "3" };
  std::string      photometric{ "MONOCHROME2" };
};

/** Oblique: rotated about two axes. */
inline void
MakeOblique(SeriesSpec & spec)
{
  const double a = 0.3, b = -0.45;
  spec.rowDirection = { { std::cos(a), std::sin(a) * std::cos(b), std::sin(a) * std::sin(b) } };
  spec.columnDirection = { { -std::sin(a), std::cos(a) * std::cos(b), std::cos(a) * std::sin(b) } };
}

inline Vector3
Cross(const Vector3 & a, const Vector3 & b)
{
  return { { a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0] } };
}

inline Vector3
SlicePosition(const SeriesSpec & spec, unsigned int k)
{
  const Vector3 normal = Cross(spec.rowDirection, spec.columnDirection);
  return { { spec.origin[0] + k * spec.sliceSpacing * normal[0],
             spec.origin[1] + k * spec.sliceSpacing * normal[1],
             spec.origin[2] + k * spec.sliceSpacing * normal[2] } };
}

inline double
SliceSlope(const SeriesSpec & spec, unsigned int k)
{
  return spec.slopePerSlice ? spec.slope * (1.0 + 0.5 * k) : spec.slope;
}

/** A written series: its files in slice order and the values a reader must return (rescale applied),
 * slice-major, row-major within a slice. */
struct WrittenSeries
{
  std::vector<std::string> files;
  std::vector<double>      values;
  SeriesSpec               spec;
};

/** The dataset of slice k of `spec` with `stored` pixel values (already two's complement for signed). */
inline void
FillSliceDataset(DcmDataset *                dataset,
                 const SeriesSpec &          spec,
                 unsigned int                k,
                 const std::string &         studyUID,
                 const std::vector<Uint16> & stored,
                 int                         instanceNumber)
{
  const DicomIdentity identity{ "Test^Patient",     "SVDLR-TEST-1",          studyUID,         spec.seriesUID,
                                spec.seriesNumber, spec.seriesDescription, studyUID + ".9" };
  const DicomPlane    plane{ SlicePosition(spec, k), spec.rowDirection, spec.columnDirection, spec.rowSpacing,
                          spec.columnSpacing,     spec.sliceSpacing, spec.rows,            spec.columns };
  PutClassicMrImage(
    dataset, identity, { spec.bitsAllocated, spec.bitsStored, spec.isSigned, spec.photometric }, plane, instanceNumber);
  Put(dataset, DCM_PatientBirthDate, "19700101");
  Put(dataset, DCM_PatientSex, "O");
  Put(dataset, DCM_StudyDescription, "svdlr test study");
  Put(dataset, DCM_AccessionNumber, "ACC42");
  if (spec.slope != 1.0 || spec.intercept != 0.0 || spec.slopePerSlice)
  {
    Put(dataset, DCM_RescaleSlope, svdlr_io::FormatDecimalString(SliceSlope(spec, k)));
    Put(dataset, DCM_RescaleIntercept, svdlr_io::FormatDecimalString(spec.intercept));
  }
  if (spec.bitsAllocated == 8)
  {
    std::vector<Uint8> bytes(stored.begin(), stored.end());
    dataset->putAndInsertUint8Array(DCM_PixelData, bytes.data(), bytes.size());
  }
  else
  {
    dataset->putAndInsertUint16Array(DCM_PixelData, stored.data(), stored.size());
  }
}

/** Saves `file` in `transferSyntax`, compressing through DCMTK's encoders when needed. */
inline void
SaveAs(DcmFileFormat & file, const std::string & path, E_TransferSyntax transferSyntax)
{
  svdlr_io::RegisterDicomCodecs();
  DcmDataset * dataset = file.getDataset();
  if (DcmXfer(transferSyntax).isEncapsulated())
  {
    DJ_RPLossless                      jpegLossless(1, 0);
    const DcmRepresentationParameter * parameter =
      transferSyntax == EXS_JPEGProcess14SV1 ? static_cast<const DcmRepresentationParameter *>(&jpegLossless) : nullptr;
    ASSERT_TRUE(dataset->chooseRepresentation(transferSyntax, parameter).good());
    ASSERT_TRUE(dataset->canWriteXfer(transferSyntax)) << DcmXfer(transferSyntax).getXferName();
  }
  const OFCondition status = file.saveFile(path.c_str(), transferSyntax);
  ASSERT_TRUE(status.good()) << path << ": " << status.text();
}

/** Writes `spec` into `directory` under random file names, with InstanceNumbers in shuffled order, so
 * that only the positions tell the slice order. */
inline WrittenSeries
WriteSeries(const std::string & directory, SeriesSpec spec, std::mt19937 & random)
{
  char uid[100];
  if (spec.seriesUID.empty())
  {
    spec.seriesUID = dcmGenerateUniqueIdentifier(uid, SITE_SERIES_UID_ROOT);
  }
  const std::string studyUID = "1.2.826.0.1.3680043.9.7261.1";
  WrittenSeries     series;
  series.spec = spec;
  std::vector<int> instanceNumbers(spec.slices);
  for (unsigned int k = 0; k < spec.slices; ++k)
    instanceNumbers[k] = static_cast<int>(k) + 1;
  std::shuffle(instanceNumbers.begin(), instanceNumbers.end(), random);

  const double storedMin = spec.isSigned ? -std::ldexp(1.0, spec.bitsStored - 1) : 0.0;
  const double storedMax =
    spec.isSigned ? std::ldexp(1.0, spec.bitsStored - 1) - 1 : std::ldexp(1.0, spec.bitsStored) - 1;
  std::uniform_int_distribution<long> value(static_cast<long>(storedMin), static_cast<long>(storedMax));
  std::uniform_int_distribution<long> name(100000, 999999);
  for (unsigned int k = 0; k < spec.slices; ++k)
  {
    std::vector<Uint16> stored(spec.rows * spec.columns);
    for (auto & s : stored)
    {
      const long v = value(random);
      series.values.push_back(static_cast<double>(v) * SliceSlope(spec, k) + spec.intercept);
      s = static_cast<Uint16>(v < 0 ? v + (1L << spec.bitsAllocated) : v);
    }
    DcmFileFormat file;
    FillSliceDataset(file.getDataset(), spec, k, studyUID, stored, instanceNumbers[k]);
    const std::string path = directory + "/" + std::to_string(name(random)) + "_" + std::to_string(k) + ".dcm";
    SaveAs(file, path, spec.transferSyntax);
    series.files.push_back(path);
  }
  return series;
}

/** Reads the series in `files` (any order) through ITK: GDCMSeriesFileNames orders them, GDCMImageIO and
 * ImageSeriesReader read them. */
inline DicomVolumeImage::Pointer
ReadWithGdcm(const std::string & directory)
{
  auto names = itk::GDCMSeriesFileNames::New();
  names->SetUseSeriesDetails(false);
  names->SetDirectory(directory);
  const auto uids = names->GetSeriesUIDs();
  EXPECT_EQ(uids.size(), 1u) << "ReadWithGdcm expects one series in " << directory;
  auto reader = itk::ImageSeriesReader<DicomVolumeImage>::New();
  reader->SetImageIO(itk::GDCMImageIO::New());
  reader->SetFileNames(names->GetFileNames(uids.front()));
  reader->Update();
  return reader->GetOutput();
}

/** Same size, origin, spacing and direction (within `tolerance` mm), and the same pixels. */
inline void
ExpectSameVolume(const DicomVolumeImage * expected,
                 const DicomVolumeImage * actual,
                 double                   tolerance = 1e-4,
                 double                   pixelTolerance = 0.0,
                 bool                     compareSliceSpacing = true)
{
  ASSERT_EQ(expected->GetLargestPossibleRegion().GetSize(), actual->GetLargestPossibleRegion().GetSize());
  for (unsigned int i = 0; i < 3; ++i)
  {
    EXPECT_NEAR(expected->GetOrigin()[i], actual->GetOrigin()[i], tolerance) << "origin[" << i << "]";
    if (i < 2 || compareSliceSpacing)
    {
      EXPECT_NEAR(expected->GetSpacing()[i], actual->GetSpacing()[i], tolerance) << "spacing[" << i << "]";
    }
    for (unsigned int j = 0; j < 3; ++j)
    {
      EXPECT_NEAR(expected->GetDirection()[i][j], actual->GetDirection()[i][j], tolerance)
        << "direction[" << i << "][" << j << "]";
    }
  }
  const std::size_t n = expected->GetLargestPossibleRegion().GetNumberOfPixels();
  std::size_t       mismatches = 0;
  for (std::size_t i = 0; i < n; ++i)
  {
    const double e = expected->GetBufferPointer()[i], a = actual->GetBufferPointer()[i];
    if (std::abs(e - a) > pixelTolerance + 1e-6 * std::abs(e))
    {
      if (++mismatches <= 5)
      {
        ADD_FAILURE() << "pixel " << i << ": expected " << e << ", got " << a;
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

/** A real test file fetched by fetch-test-data.sh; empty (and the test skips, or fails when
 * SVDLR_REQUIRE_TEST_DATA=1) when it is missing. */
inline std::string
RealData(const std::string & relative)
{
  return ExistingTestFile(std::string(SVDLR_DICOM_TEST_DATA_DIR) + "/" + relative, "run apps/test/fetch-test-data.sh");
}

#define SVDLR_REAL_DATA_OR_SKIP(variable, relative)                                                                    \
  const std::string variable = ::svdlr_test::RealData(relative);                                                       \
  if (variable.empty())                                                                                                \
  {                                                                                                                    \
    GTEST_SKIP() << "real DICOM file " << (relative) << " not found: run apps/test/fetch-test-data.sh";               \
  }

/** The message of the exception `statement` throws, or "" (and a failure) when it throws none. */
#define SVDLR_ERROR_MESSAGE(statement, message)                                                                        \
  std::string message;                                                                                                 \
  try                                                                                                                  \
  {                                                                                                                    \
    statement;                                                                                                         \
    ADD_FAILURE() << #statement " did not throw";                                                                      \
  }                                                                                                                    \
  catch (const std::exception & error)                                                                                 \
  {                                                                                                                    \
    message = error.what();                                                                                            \
  }

} // namespace svdlr_test

#endif
