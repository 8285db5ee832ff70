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
// The tools on DICOM series that are not one volume, end to end: SVDLowRankReconstructImage on localizers,
// projections, two-echo and Enhanced MR series (JPEG 2000 ones too), its output checked against a float64 SVD per
// slice, each image's geometry against the source, and read back by ITK's GDCM reader, gdcminfo and dcm2niix;
// SVDLowRankDenoiseSeries on an Enhanced multi-echo file. The library's reading: SVDLowRankDicomGeometryGTest.
#include "SVDLowRankDicomSeries4D.h"
#include "SVDLowRankSliceBatches.h"
#include "svdlrDicomGeometryFixture.h"
#include "svdlrTestMatrices.h"

#include "itkExtractImageFilter.h"
#include "itkImageFileWriter.h"
#include "itkImageRegionConstIteratorWithIndex.h"

#include <set>

namespace
{
using namespace svdlr_test;
using svdlr_io::DicomLayout;

/** The rank-k reconstruction of every slice of `image` in float64 (LAPACK's dgesdd). */
DicomVolumeImage::Pointer
ReferenceReconstruction(const DicomVolumeImage * image, std::size_t k)
{
  auto       result = svdlr_io::LikeVolume(image);
  const auto size = image->GetLargestPossibleRegion().GetSize();
  for (std::size_t s = 0; s < size[2]; ++s)
  {
    svdlr::test::Matrix slice(size[1], size[0]);
    std::copy_n(image->GetBufferPointer() + s * size[0] * size[1], size[0] * size[1], slice.values.begin());
    const auto truncated = svdlr::test::ReferenceSvd(slice).Truncated(k);
    std::copy(truncated.values.begin(), truncated.values.end(), result->GetBufferPointer() + s * size[0] * size[1]);
  }
  return result;
}

/** Slice k of `volume` as a one-slice volume at its place. */
DicomVolumeImage::Pointer
SliceOf(const DicomVolumeImage * volume, std::size_t k)
{
  auto       slice = DicomVolumeImage::New();
  const auto size = volume->GetLargestPossibleRegion().GetSize();
  slice->SetRegions(DicomVolumeImage::SizeType{ { size[0], size[1], 1 } });
  slice->Allocate();
  DicomVolumeImage::IndexType corner{ { 0, 0, static_cast<itk::IndexValueType>(k) } };
  DicomVolumeImage::PointType origin;
  volume->TransformIndexToPhysicalPoint(corner, origin);
  slice->SetOrigin(origin);
  slice->SetSpacing(volume->GetSpacing());
  slice->SetDirection(volume->GetDirection());
  std::copy_n(volume->GetBufferPointer() + k * size[0] * size[1], size[0] * size[1], slice->GetBufferPointer());
  return slice;
}

/** The largest |difference| between `image` and `reference` at each voxel's physical point; infinity when a voxel
 * falls off the reference's grid (or outside it). */
double
DifferenceOnGrid(const DicomVolumeImage * image, const DicomVolumeImage * reference)
{
  double largest = 0.0;
  for (itk::ImageRegionConstIteratorWithIndex<DicomVolumeImage> it(image, image->GetLargestPossibleRegion());
       !it.IsAtEnd();
       ++it)
  {
    DicomVolumeImage::PointType point;
    image->TransformIndexToPhysicalPoint(it.GetIndex(), point);
    itk::ContinuousIndex<double, 3> index;
    if (!reference->TransformPhysicalPointToContinuousIndex(point, index))
      return std::numeric_limits<double>::infinity();
    DicomVolumeImage::IndexType nearest;
    for (unsigned int i = 0; i < 3; ++i)
    {
      if (std::abs(index[i] - std::round(index[i])) > 1e-3)
        return std::numeric_limits<double>::infinity();
      nearest[i] = static_cast<long>(std::round(index[i]));
    }
    largest = std::max(largest, std::abs(static_cast<double>(reference->GetPixel(nearest)) - it.Get()));
  }
  return largest;
}

/** dcm2niix converts `folder` into as many NIfTI files as `parts`, each one of the parts: same voxels at the same
 * places with the same values (within `tolerance`). Skips (or fails when data is required) without dcm2niix. */
void
ExpectDcm2niixFindsTheParts(const std::string &                        folder,
                            const std::string &                        into,
                            const std::vector<svdlr_io::DicomVolume> & parts,
                            double                                     tolerance)
{
  if (std::string(SVDLR_DCM2NIIX).empty())
  {
    if (TestDataRequired())
      ADD_FAILURE() << "dcm2niix is required (apt-get install dcm2niix)";
    return;
  }
  fs::create_directories(into);
  const std::string command = std::string(SVDLR_DCM2NIIX) + " -z n -b n -f part_%s_%j -o '" + into + "' '" + folder +
                              "' > '" + into + "/dcm2niix.log' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::vector<std::string> converted;
  for (const auto & entry : fs::directory_iterator(into))
  {
    if (entry.path().extension() == ".nii")
      converted.push_back(entry.path().string());
  }
  ASSERT_EQ(converted.size(), parts.size()) << ReadText(into + "/dcm2niix.log");
  std::set<std::size_t> matched;
  for (const std::string & file : converted)
  {
    const auto  nifti = itk::ReadImage<DicomVolumeImage>(file);
    double      best = std::numeric_limits<double>::infinity();
    std::size_t which = 0;
    for (std::size_t p = 0; p < parts.size(); ++p)
    {
      if (nifti->GetLargestPossibleRegion().GetNumberOfPixels() !=
          parts[p].image->GetLargestPossibleRegion().GetNumberOfPixels())
        continue;
      const double difference = DifferenceOnGrid(nifti, parts[p].image);
      if (difference < best)
      {
        best = difference;
        which = p;
      }
    }
    EXPECT_LE(best, tolerance) << file << " matches no part";
    matched.insert(which);
  }
  EXPECT_EQ(matched.size(), parts.size()) << "every part converted once";
}

// --- The tool -------------------------------------------------------------------------------------------------

TEST_F(DicomGeometry, ToolWritesALocalizerImageByImageWithEachImagesGeometry)
{
  SVDLR_COLIN27_OR_SKIP();
  WriteLocalizer(Folder("localizer"));
  const auto run = Tool("--rank 6 --backend cpu --no-figure localizer out");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.err.find("note: the series is not one volume; reading it image by image"), std::string::npos)
    << run.err;
  EXPECT_NE(run.out.find("layout:   3 images, each with its own geometry"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("slices:   3 in 3 batches"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("each image with its own geometry"), std::string::npos) << run.out;

  const auto input = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ Path("localizer") })));
  const auto outputSeries = OnlySeries(svdlr_io::FindDicomSeries({ Path("out") }));
  EXPECT_NE(outputSeries.seriesInstanceUID, input.parts[0].seriesInstanceUID);
  const auto output = svdlr_io::ReadDicomImages(outputSeries);
  ASSERT_EQ(output.layout, DicomLayout::Images);
  ASSERT_EQ(output.parts.size(), 3u);
  for (std::size_t p = 0; p < 3; ++p)
  {
    const auto & in = input.parts[p].image;
    const auto & out = output.parts[p].image;
    const auto   expected = ReferenceReconstruction(in, 6);
    ExpectSameVolume(expected, out, 1e-4, output.parts[p].slices[0].rescaleSlope / 2 + 2e-3, false);
    ExpectSameVolume(ReadFileWithGdcm(output.parts[p].slices[0].file), out, 1e-4, 1e-3, false);
    const std::string command = "gdcminfo '" + output.parts[p].slices[0].file + "' > '" + Path("gdcminfo.txt") + "'";
    if (std::system(command.c_str()) == 0)
    {
      EXPECT_NE(ReadText(Path("gdcminfo.txt")).find("MR Image Storage"), std::string::npos);
    }
  }
  ExpectDcm2niixFindsTheParts(Path("out"), Path("nifti"), output.parts, output.parts[0].slices[0].rescaleSlope + 1e-3);
}

TEST_F(DicomGeometry, ToolRefusesALocalizerWithRequireVolumeAndAFileOutputWithout)
{
  SVDLR_COLIN27_OR_SKIP();
  WriteLocalizer(Folder("localizer"));
  const auto strict = Tool("--require-volume --backend cpu localizer out");
  EXPECT_EQ(strict.exitCode, 3) << strict.out;
  EXPECT_NE(strict.err.find("must have the same size"), std::string::npos) << strict.err;
  EXPECT_NE(strict.err.find("--require-volume"), std::string::npos) << strict.err;
  const auto nifti = Tool("--backend cpu localizer out.nii.gz");
  EXPECT_EQ(nifti.exitCode, 2) << nifti.out;
  EXPECT_NE(nifti.err.find("only a DICOM output can hold"), std::string::npos) << nifti.err;
  const auto axis = Tool("--backend cpu --slice-axis 0 localizer out");
  EXPECT_EQ(axis.exitCode, 2) << axis.out;
  EXPECT_NE(axis.err.find("--slice-axis 0"), std::string::npos) << axis.err;
  EXPECT_FALSE(fs::exists(Path("out"))) << "nothing written";
  EXPECT_FALSE(fs::exists(Path("out.nii.gz")));
}

TEST_F(DicomGeometry, ToolFiltersATwoEchoSeriesVolumeByVolumeAndDcm2niixSplitsTheEchoes)
{
  SVDLR_COLIN27_OR_SKIP();
  WriteTwoEchoes(Folder("echoes"));
  const auto run = Tool("--rank 5 --backend cpu --no-figure echoes out");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("layout:   2 volumes by echo"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("echo 2 (TE 25 ms): 64x72x8"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("slices:   16 in 1 batch (16 of 64x72)"), std::string::npos) << run.out;

  const auto input = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ Path("echoes") })));
  const auto output = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ Path("out") })));
  ASSERT_EQ(output.layout, DicomLayout::Volumes);
  ASSERT_EQ(output.names, input.names) << "EchoNumbers and EchoTime kept";
  for (std::size_t e = 0; e < 2; ++e)
  {
    ExpectSameVolume(ReferenceReconstruction(input.parts[e].image, 5),
                     output.parts[e].image,
                     1e-4,
                     output.parts[e].slices[0].rescaleSlope / 2 + 2e-3);
  }
  if (std::string(SVDLR_DCM2NIIX).empty())
  {
    GTEST_SKIP() << "dcm2niix not installed: the round trip through it is not checked";
  }
  const std::string command = std::string(SVDLR_DCM2NIIX) + " -z n -b n -f converted_e%e -o '" + Folder("nifti") +
                              "' '" + Path("out") + "' > '" + Path("dcm2niix.log") + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  for (int e = 1; e <= 2; ++e)
  {
    const std::string name = Path("nifti/converted_e" + std::to_string(e) + ".nii");
    ASSERT_TRUE(fs::exists(name)) << ReadText(Path("dcm2niix.log"));
    ExpectOnReference(
      itk::ReadImage<DicomVolumeImage>(name),
      output.parts[e - 1].image,
      [](double v) { return v; },
      output.parts[e - 1].slices[0].rescaleSlope / 2 + 1e-3);
  }
}

TEST_F(DicomGeometry, ToolWritesAnEnhancedMrFileAsClassicImagesWithEachFramesGeometry)
{
  SVDLR_COLIN27_OR_SKIP();
  Folder("enhanced");
  const auto frames = WriteEnhanced(Path("enhanced/multi.dcm"), 2);
  const auto run = Tool("--rank 4 --backend cpu --no-figure enhanced out");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("layout:   2 volumes by echo"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("DICOM series, 12 files"), std::string::npos) << run.out;

  const auto input = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ Path("enhanced") })));
  const auto outputSeries = OnlySeries(svdlr_io::FindDicomSeries({ Path("out") }));
  ASSERT_EQ(outputSeries.files.size(), 12u);
  for (const std::string & file : outputSeries.files)
  {
    auto         dicom = svdlr_io::LoadDicomFile(file, true);
    DcmDataset * dataset = dicom->getDataset();
    EXPECT_EQ(svdlr_io::GetString(dataset, DCM_SOPClassUID), UID_MRImageStorage) << file;
    EXPECT_FALSE(dataset->tagExists(DCM_NumberOfFrames)) << file;
    EXPECT_FALSE(dataset->tagExists(DCM_PerFrameFunctionalGroupsSequence)) << file;
    EXPECT_EQ(svdlr_io::GetString(dataset, DCM_ScanningSequence), "GR") << "from EchoPulseSequence";
    EXPECT_EQ(svdlr_io::GetString(dataset, DCM_RepetitionTime), "2000") << "from the Shared Functional Groups";
    DcmItem * reference = nullptr;
    ASSERT_TRUE(dataset->findAndGetSequenceItem(DCM_SourceImageSequence, reference, 0).good());
    EXPECT_FALSE(svdlr_io::GetString(reference, DCM_ReferencedFrameNumber).empty());
  }
  const auto output = svdlr_io::ReadDicomImages(outputSeries);
  ASSERT_EQ(output.layout, DicomLayout::Volumes);
  ASSERT_EQ(output.names, (std::vector<std::string>{ "echo (TE 8 ms)", "echo (TE 16 ms)" })) << "EchoTime lifted";
  for (std::size_t e = 0; e < 2; ++e)
  {
    // Each output file at its source frame's position, orientation and spacing, with the float64 reference.
    ExpectSameVolume(ReferenceReconstruction(input.parts[e].image, 4),
                     output.parts[e].image,
                     1e-4,
                     output.parts[e].slices[0].rescaleSlope / 2 + 2e-3);
  }
  const std::string command = "gdcminfo '" + outputSeries.files[0] + "' > '" + Path("gdcminfo.txt") + "' 2>&1";
  if (std::system(command.c_str()) == 0)
  {
    EXPECT_NE(ReadText(Path("gdcminfo.txt")).find("MR Image Storage"), std::string::npos)
      << ReadText(Path("gdcminfo.txt"));
  }
  ExpectSameVolume(
    ReadFileWithGdcm(output.parts[1].slices[3].file), SliceOf(output.parts[1].image, 3), 1e-4, 1e-3, false);
  // dcm2niix splits the classic files into the two echoes again, each at its frames' places.
  ExpectDcm2niixFindsTheParts(Path("out"), Path("nifti"), output.parts, output.parts[0].slices[0].rescaleSlope + 1e-3);
}

TEST_F(DicomGeometry, ToolOnRealAngioProjectionsKeepsEveryProjectionsGeometry)
{
  SVDLR_REAL_DATA_OR_SKIP(folder, "pydicom/angio");
  const auto run = Tool("--rank 3 --backend cpu --no-figure '" + folder + "' out");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("layout:   7 images, each with its own geometry"), std::string::npos) << run.out;
  const auto input = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ folder })));
  const auto output = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ Path("out") })));
  ASSERT_EQ(output.parts.size(), 7u);
  for (std::size_t p = 0; p < 7; ++p)
  {
    ExpectSameVolume(ReferenceReconstruction(input.parts[p].image, 3),
                     output.parts[p].image,
                     1e-4,
                     output.parts[p].slices[0].rescaleSlope / 2 + 2e-3,
                     false);
  }
}

// --- JPEG 2000 sources --------------------------------------------------------------------------------------

TEST_F(DicomGeometry, ToolWritesAJpeg2000EnhancedMrFileInTheTransferSyntaxAsked)
{
  SVDLR_COLIN27_OR_SKIP();
  SVDLR_GDCMCONV_OR_SKIP();
  ASSERT_TRUE(WriteEnhancedAndJpeg2000Copy());
  const auto run = Tool("--rank 4 --backend cpu --no-figure --transfer-syntax rle j2k out");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("layout:   2 volumes by echo"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("DICOM series, 12 files"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("RLE Lossless (1.2.840.10008.1.2.5)"), std::string::npos) << run.out;
  const auto input = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ Path("j2k") })));
  const auto output = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ Path("out") })));
  ASSERT_EQ(output.layout, DicomLayout::Volumes);
  for (std::size_t e = 0; e < 2; ++e)
  {
    ExpectSameVolume(ReferenceReconstruction(input.parts[e].image, 4),
                     output.parts[e].image,
                     1e-4,
                     output.parts[e].slices[0].rescaleSlope / 2 + 2e-3);
    for (const auto & slice : output.parts[e].slices)
    {
      EXPECT_EQ(slice.transferSyntaxUID, UID_RLELosslessTransferSyntax) << slice.file;
      EXPECT_FALSE(slice.lossyCompressed) << slice.file;
    }
  }
  // Refused before the work, as for one volume.
  const auto refused = Tool("--rank 4 --backend cpu --no-figure --transfer-syntax jpeg-ls j2k out_jls");
  EXPECT_EQ(refused.exitCode, 2) << refused.err;
  EXPECT_FALSE(fs::exists(Path("out_jls")));
}

TEST_F(DicomGeometry, ToolMarksEveryImageOfALossyJpeg2000LocalizerLossy)
{
  SVDLR_REAL_DATA_OR_SKIP(folder, "pydicom/localizer");
  SVDLR_GDCMCONV_OR_SKIP();
  Folder("lossy");
  for (const auto & entry : fs::directory_iterator(folder))
  {
    ASSERT_TRUE(Jpeg2000Copy(entry.path().string(), Path("lossy/" + entry.path().filename().string()), true));
  }
  const auto input = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ Path("lossy") })));
  ASSERT_EQ(input.layout, DicomLayout::Images);
  ASSERT_EQ(input.parts.size(), 3u);
  for (const auto & part : input.parts)
  {
    EXPECT_EQ(part.slices[0].transferSyntaxUID, UID_JPEG2000TransferSyntax);
    EXPECT_TRUE(part.slices[0].lossyCompressed);
    // GDCM's decoding through ITK's reader gives the same values.
    ExpectSameVolume(ReadFileWithGdcm(part.slices[0].file), part.image, 1e-4, 1e-4, false);
  }
  const auto run = Tool("--rank 2 --backend cpu --no-figure lossy out");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("layout:   3 images, each with its own geometry"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Little Endian Explicit (1.2.840.10008.1.2.1)"), std::string::npos)
    << "keep: a lossy source is not repeated\n" << run.out;
  const auto output = svdlr_io::ReadDicomImages(OnlySeries(svdlr_io::FindDicomSeries({ Path("out") })));
  ASSERT_EQ(output.parts.size(), 3u);
  for (std::size_t p = 0; p < 3; ++p)
  {
    const auto & slice = output.parts[p].slices[0];
    EXPECT_EQ(slice.transferSyntaxUID, UID_LittleEndianExplicitTransferSyntax);
    EXPECT_TRUE(slice.lossyCompressed) << "the source's loss is in the derived image too";
    auto dicom = svdlr_io::LoadDicomFile(slice.file, true);
    EXPECT_EQ(svdlr_io::GetString(dicom->getDataset(), DCM_LossyImageCompression), "01");
    EXPECT_EQ(svdlr_io::GetString(dicom->getDataset(), DCM_LossyImageCompressionMethod), "ISO_15444_1");
    ExpectSameVolume(ReferenceReconstruction(input.parts[p].image, 2),
                     output.parts[p].image,
                     1e-4,
                     slice.rescaleSlope / 2 + 2e-3,
                     false);
  }
}

#ifdef SVDLR_DENOISE_TOOL
/** Volume v of a 4D image as a 3D image with the first three axes' geometry. */
DicomVolumeImage::Pointer
VolumeOf(const itk::Image<float, 4> * series, long v)
{
  using Extract = itk::ExtractImageFilter<itk::Image<float, 4>, DicomVolumeImage>;
  auto region = series->GetLargestPossibleRegion();
  region.SetIndex(3, v);
  region.SetSize(3, 0);
  auto extract = Extract::New();
  extract->SetInput(series);
  extract->SetExtractionRegion(region);
  extract->SetDirectionCollapseToSubmatrix();
  extract->Update();
  return extract->GetOutput();
}

TEST_F(DicomGeometry, DenoiserReadsAnEnhancedMultiEchoFileAsA4DSeries)
{
  SVDLR_COLIN27_OR_SKIP();
  Folder("enhanced");
  WriteEnhanced(Path("enhanced/multi.dcm"), 2);
  const auto series = svdlr_io::ReadDicomSeries4D(OnlySeries(svdlr_io::FindDicomSeries({ Path("enhanced") })));
  ASSERT_EQ(series.image->GetLargestPossibleRegion().GetSize(), (itk::Image<float, 4>::SizeType{ { 48, 40, 6, 2 } }));
  EXPECT_EQ(series.by, "echo");
  for (long v = 0; v < 2; ++v)
  {
    ExpectOnReference(
      VolumeOf(series.image, v), m_Colin, [v](double x) { return EnhancedValue(x, static_cast<int>(v) + 1); }, 1e-9);
  }

  // The tool on the DICOM file gives what it gives on the same series as NIfTI, with the DICOM geometry.
  itk::WriteImage(series.image, Path("series.nii.gz"));
  const auto fromDicom = RunToolIn(m_Directory, SVDLR_DENOISE_TOOL, "--backend cpu enhanced from_dicom.nii.gz");
  ASSERT_EQ(fromDicom.exitCode, 0) << fromDicom.err;
  EXPECT_NE(fromDicom.out.find("volume 1:  echo (TE 16 ms)"), std::string::npos) << fromDicom.out;
  EXPECT_NE(fromDicom.out.find("2 volumes by echo"), std::string::npos) << fromDicom.out;
  const auto fromNifti = RunToolIn(m_Directory, SVDLR_DENOISE_TOOL, "--backend cpu series.nii.gz from_nifti.nii.gz");
  ASSERT_EQ(fromNifti.exitCode, 0) << fromNifti.err;
  using Image4D = itk::Image<float, 4>;
  const auto a = itk::ReadImage<Image4D>(Path("from_dicom.nii.gz"));
  const auto b = itk::ReadImage<Image4D>(Path("from_nifti.nii.gz"));
  ASSERT_EQ(a->GetLargestPossibleRegion().GetSize(), b->GetLargestPossibleRegion().GetSize());
  for (std::size_t i = 0; i < a->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
  {
    ASSERT_EQ(a->GetBufferPointer()[i], b->GetBufferPointer()[i]) << "voxel " << i;
  }
  const double anyValue = std::numeric_limits<double>::infinity();
  ExpectOnReference(
    VolumeOf(a, 1), m_Colin, [](double x) { return x; }, anyValue);

  const auto localizer = RunToolIn(m_Directory, SVDLR_DENOISE_TOOL, "--backend cpu localizer_missing out.nii.gz");
  EXPECT_EQ(localizer.exitCode, 3);
  WriteLocalizer(Folder("localizer"));
  const auto refused = RunToolIn(m_Directory, SVDLR_DENOISE_TOOL, "--backend cpu localizer out.nii.gz");
  EXPECT_EQ(refused.exitCode, 3) << refused.out;
  EXPECT_NE(refused.err.find("not a 4D series"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(Path("out.nii.gz")));
}
#endif

} // namespace
