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
// DICOM series that are not one volume, read by the library (SVDLowRankDicomFrames): localizers and projections
// image by image, 4D series volume by volume, Enhanced MR files from their functional groups (JPEG 2000 ones
// through GDCM), each checked against Colin27 at every voxel's physical point, ITK's GDCM reader and dcm2niix.
// The tools on the same series: SVDLowRankDicomGeometryToolGTest.
#include "svdlrDicomGeometryFixture.h"

#include <set>

namespace
{
using namespace svdlr_test;
using svdlr_io::DicomLayout;

// --- The library ----------------------------------------------------------------------------------------------

TEST_F(DicomGeometry, LocalizerCutFromColin27IsReadImageByImageEachOnItsPlane)
{
  SVDLR_COLIN27_OR_SKIP();
  const auto planes = WriteLocalizer(Folder("localizer"));
  const auto set = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ Path("localizer") })));
  ASSERT_EQ(set.layout, DicomLayout::Images);
  ASSERT_EQ(set.parts.size(), 3u);
  EXPECT_NE(set.reason.find("must have the same size"), std::string::npos) << set.reason;
  std::set<std::pair<std::size_t, std::size_t>> sizes;
  for (std::size_t p = 0; p < 3; ++p)
  {
    const auto & image = set.parts[p].image;
    const auto   size = image->GetLargestPossibleRegion().GetSize();
    EXPECT_EQ(size[0], planes[p].columns);
    EXPECT_EQ(size[1], planes[p].rows);
    EXPECT_EQ(size[2], 1u);
    sizes.emplace(size[0], size[1]);
    for (unsigned int i = 0; i < 3; ++i)
    {
      EXPECT_NEAR(image->GetOrigin()[i], planes[p].position[i], 1e-4);
      EXPECT_NEAR(image->GetDirection()[i][0], planes[p].rowDirection[i], 1e-6);
      EXPECT_NEAR(image->GetDirection()[i][1], planes[p].columnDirection[i], 1e-6);
    }
    // Every pixel lies on the Colin27 voxel whose value it holds.
    ExpectOnReference(
      image, m_Colin, [](double v) { return v * 0.5 + 10.0; }, 1e-4);
    ExpectSameVolume(ReadFileWithGdcm(set.parts[p].slices[0].file), image, 1e-4, 1e-4, false);
  }
  EXPECT_EQ(sizes.size(), 3u) << "three sizes: the images cannot be stacked either";
}

TEST_F(DicomGeometry, RequireVolumeRefusesTheLocalizerAsReadDicomSeriesDoes)
{
  SVDLR_COLIN27_OR_SKIP();
  WriteLocalizer(Folder("localizer"));
  const auto series = OnlySeries(svdlr_io::FindDicomSeries({ Path("localizer") }));
  SVDLR_ERROR_MESSAGE(svdlr_io::ReadDicomImages(series, true), strict);
  SVDLR_ERROR_MESSAGE(svdlr_io::ReadDicomSeries(series), classic);
  EXPECT_NE(strict.find("must have the same size"), std::string::npos) << strict;
  EXPECT_EQ(strict, classic);
}

TEST_F(DicomGeometry, TwoEchoClassicSeriesIsReadAsTwoVolumesByEcho)
{
  SVDLR_COLIN27_OR_SKIP();
  WriteTwoEchoes(Folder("echoes"));
  const auto series = OnlySeries(svdlr_io::FindDicomSeries({ Path("echoes") }));
  SVDLR_ERROR_MESSAGE(svdlr_io::ReadDicomSeries(series), strict);
  EXPECT_NE(strict.find("several images per slice position"), std::string::npos) << strict;

  const auto set = svdlr_io::ReadDicomImages(series);
  ASSERT_EQ(set.layout, DicomLayout::Volumes);
  EXPECT_EQ(set.by, "echo");
  ASSERT_EQ(set.parts.size(), 2u);
  EXPECT_EQ(set.names[0], "echo 1 (TE 10 ms)");
  EXPECT_EQ(set.names[1], "echo 2 (TE 25 ms)");
  for (std::size_t e = 0; e < 2; ++e)
  {
    const auto & image = set.parts[e].image;
    EXPECT_EQ(image->GetLargestPossibleRegion().GetSize(), (DicomVolumeImage::SizeType{ { 64, 72, 8 } }));
    EXPECT_NEAR(image->GetSpacing()[2], 3.0 * m_Colin->GetSpacing()[2], 1e-4);
    ExpectOnReference(
      image, m_Colin, [e](double v) { return e == 0 ? v : std::round(0.6 * v); }, 1e-4);
  }
}

TEST_F(DicomGeometry, EnhancedMrFileIsReadVolumeByVolumeFromItsFunctionalGroups)
{
  SVDLR_COLIN27_OR_SKIP();
  Folder("enhanced");
  const auto frames = WriteEnhanced(Path("enhanced/multi.dcm"), 2);
  const auto series = OnlySeries(svdlr_io::FindDicomSeries({ Path("enhanced") }));
  const auto headers = svdlr_io::ReadDicomFrames(series);
  ASSERT_EQ(headers.size(), 12u);
  for (std::size_t f = 0; f < headers.size(); ++f)
  {
    EXPECT_EQ(headers[f].frame, f);
    EXPECT_DOUBLE_EQ(headers[f].slope, frames[f].slope) << "PixelValueTransformationSequence, frame " << f;
    EXPECT_DOUBLE_EQ(headers[f].intercept, frames[f].intercept);
    EXPECT_DOUBLE_EQ(headers[f].key.echoTime, frames[f].echoTime) << "MREchoSequence";
    EXPECT_EQ(headers[f].key.dimensionIndex, std::vector<int>{ frames[f].echoIndex }) << "in-stack index left out";
    for (unsigned int i = 0; i < 3; ++i)
      EXPECT_NEAR(headers[f].position[i], frames[f].plane.position[i], 1e-4) << "PlanePositionSequence";
  }
  const auto set = svdlr_io::ReadDicomImages(series);
  ASSERT_EQ(set.layout, DicomLayout::Volumes);
  EXPECT_EQ(set.by, "echo");
  ASSERT_EQ(set.parts.size(), 2u);
  for (std::size_t e = 0; e < 2; ++e)
  {
    EXPECT_EQ(set.parts[e].image->GetLargestPossibleRegion().GetSize(), (DicomVolumeImage::SizeType{ { 48, 40, 6 } }));
    ExpectOnReference(
      set.parts[e].image, m_Colin, [e](double v) { return EnhancedValue(v, static_cast<int>(e) + 1); }, 1e-9);
  }
}

TEST_F(DicomGeometry, EnhancedMrVolumeReadsAsDcm2niixReadsIt)
{
  SVDLR_COLIN27_OR_SKIP();
  if (std::string(SVDLR_DCM2NIIX).empty())
  {
    if (TestDataRequired())
      FAIL() << "dcm2niix is required (apt-get install dcm2niix)";
    GTEST_SKIP() << "dcm2niix not installed";
  }
  Folder("enhanced");
  WriteEnhanced(Path("enhanced/single.dcm"), 1, false);
  const auto volume = svdlr_io::ReadDicomSeries(OnlySeries(svdlr_io::FindDicomSeries({ Path("enhanced") })));
  ExpectOnReference(
    volume.image, m_Colin, [](double v) { return EnhancedValue(v, 1); }, 1e-9);
  const std::string command = std::string(SVDLR_DCM2NIIX) + " -z n -b n -f converted -o '" + Folder("nifti") + "' '" +
                              Path("enhanced") + "' > '" + Path("dcm2niix.log") + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const auto nifti = itk::ReadImage<DicomVolumeImage>(Path("nifti/converted.nii"));
  ExpectOnReference(
    nifti, volume.image, [](double v) { return v; }, 1e-3);
}

TEST_F(DicomGeometry, RealTriPlanarLocalizerIsReadImageByImageAsGdcmReadsEachFile)
{
  SVDLR_REAL_DATA_OR_SKIP(folder, "pydicom/localizer");
  const auto series = svdlr_io::FindDicomSeries({ folder });
  ASSERT_EQ(series.size(), 1u);
  const auto set = svdlr_io::ReadDicomImages(series[0]);
  ASSERT_EQ(set.layout, DicomLayout::Images);
  ASSERT_EQ(set.parts.size(), 3u);
  std::set<std::string> orientations;
  for (const auto & part : set.parts)
  {
    ExpectSameVolume(ReadFileWithGdcm(part.slices[0].file), part.image, 1e-4, 1e-4, false);
    std::ostringstream direction;
    direction << part.image->GetDirection();
    orientations.insert(direction.str());
  }
  EXPECT_EQ(orientations.size(), 3u) << "axial, coronal and sagittal";
}

TEST_F(DicomGeometry, RealAngioProjectionsAreReadImageByImageAsGdcmReadsEachFile)
{
  SVDLR_REAL_DATA_OR_SKIP(folder, "pydicom/angio");
  const auto set = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ folder })));
  ASSERT_EQ(set.layout, DicomLayout::Images);
  ASSERT_EQ(set.parts.size(), 7u);
  for (const auto & part : set.parts)
  {
    ExpectSameVolume(ReadFileWithGdcm(part.slices[0].file), part.image, 1e-4, 1e-4, false);
  }
}

// --- JPEG 2000 sources: GDCM's decoding in every layout ------------------------------------------------------

TEST_F(DicomGeometry, Jpeg2000EnhancedMrFileIsDecodedFrameByFrameThroughGdcm)
{
  SVDLR_COLIN27_OR_SKIP();
  SVDLR_GDCMCONV_OR_SKIP();
  ASSERT_TRUE(WriteEnhancedAndJpeg2000Copy());
  const auto plain = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ Path("enhanced") })));
  const auto j2k = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ Path("j2k") })));
  ASSERT_EQ(j2k.layout, DicomLayout::Volumes);
  ASSERT_EQ(j2k.parts.size(), 2u);
  for (std::size_t e = 0; e < 2; ++e)
  {
    // Each frame its own: a frame index lost on the way to GDCM would put frame 0 on every slice.
    ExpectOnReference(
      j2k.parts[e].image, m_Colin, [e](double v) { return EnhancedValue(v, static_cast<int>(e) + 1); }, 1e-9);
    ExpectSameVolume(plain.parts[e].image, j2k.parts[e].image);
    for (const auto & slice : j2k.parts[e].slices)
    {
      EXPECT_EQ(slice.transferSyntaxUID, UID_JPEG2000LosslessOnlyTransferSyntax);
      EXPECT_EQ(slice.framesInFile, 12u);
      EXPECT_FALSE(slice.lossyCompressed);
    }
  }
}

} // namespace
