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
// Writing a derived DICOM series through DCMTK (SVDLowRankDicomWriter): what the files say, and that
// DCMTK, ITK's GDCM reader and dcm2niix read them back with the source's geometry and the values written.
#include "SVDLowRankDicomWriter.h"
#include "svdlrDicomTestData.h"

#include "itkImageFileReader.h"
#include "itkImageRegionConstIteratorWithIndex.h"

#include <set>

namespace
{
using namespace svdlr_test;
using svdlr_io::DicomRescale;

class DicomWriting : public RandomTest
{
protected:
  /** A source series on disk, read back as the writer's source. */
  svdlr_io::DicomVolume
  MakeSource(SeriesSpec spec)
  {
    WriteSeries(Folder("source"), spec, m_Random);
    return svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ Path("source") }).at(0));
  }

  /** A stand-in for a reconstruction: the source's values plus random noise of `amplitude`. */
  DicomVolumeImage::Pointer
  Perturbed(const DicomVolumeImage * source, double amplitude)
  {
    auto image = DicomVolumeImage::New();
    image->CopyInformation(source);
    image->SetRegions(source->GetLargestPossibleRegion());
    image->Allocate();
    std::uniform_real_distribution<double> noise(-amplitude, amplitude);
    for (std::size_t i = 0; i < image->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    {
      image->GetBufferPointer()[i] = static_cast<float>(source->GetBufferPointer()[i] + noise(m_Random));
    }
    return image;
  }

  std::vector<std::string>
  Write(const DicomVolumeImage * image, const svdlr_io::DicomVolume * source)
  {
    svdlr_io::DicomWriteOptions options;
    options.source = source;
    options.seriesDescription = "SVD rank 7 of synthetic t1";
    options.derivationDescription = "Each slice replaced by its rank-7 truncated SVD reconstruction";
    return svdlr_io::WriteDicomSeries(image, Folder("derived"), options);
  }

  static std::unique_ptr<DcmFileFormat>
  Load(const std::string & file)
  {
    auto dicom = std::make_unique<DcmFileFormat>();
    EXPECT_TRUE(dicom->loadFile(file.c_str()).good()) << file;
    return dicom;
  }

  static std::string
  Get(const std::string & file, const DcmTagKey & tag)
  {
    return svdlr_io::GetString(Load(file)->getDataset(), tag);
  }
};

TEST_F(DicomWriting, DerivedSeriesHasNewUIDsAndImageTypeDerivedSecondary)
{
  SeriesSpec spec;
  const auto source = MakeSource(spec);
  const auto files = Write(Perturbed(source.image, 3.0), &source);
  ASSERT_EQ(files.size(), spec.slices);
  std::set<std::string> instances, series;
  for (std::size_t k = 0; k < files.size(); ++k)
  {
    instances.insert(Get(files[k], DCM_SOPInstanceUID));
    series.insert(Get(files[k], DCM_SeriesInstanceUID));
    EXPECT_NE(Get(files[k], DCM_SOPInstanceUID), Get(source.slices[k].file, DCM_SOPInstanceUID));
    EXPECT_EQ(Get(files[k], DCM_ImageType), "DERIVED\\SECONDARY\\M\\ND");
    EXPECT_EQ(Get(files[k], DCM_InstanceNumber), std::to_string(k + 1));
    EXPECT_EQ(Get(files[k], DCM_SeriesNumber), "1003");
    // The derived image points at the slice it came from.
    DcmItem * reference = nullptr;
    auto      dicom = Load(files[k]);
    ASSERT_TRUE(dicom->getDataset()->findAndGetSequenceItem(DCM_SourceImageSequence, reference).good());
    EXPECT_EQ(svdlr_io::GetString(reference, DCM_ReferencedSOPInstanceUID),
              Get(source.slices[k].file, DCM_SOPInstanceUID));
  }
  EXPECT_EQ(instances.size(), files.size());
  ASSERT_EQ(series.size(), 1u);
  EXPECT_NE(*series.begin(), source.seriesInstanceUID);
}

TEST_F(DicomWriting, SeriesDescriptionAndDerivationDescriptionSayHowThePixelsWereMade)
{
  const auto source = MakeSource(SeriesSpec{});
  const auto files = Write(Perturbed(source.image, 1.0), &source);
  EXPECT_EQ(Get(files[0], DCM_SeriesDescription), "SVD rank 7 of synthetic t1");
  EXPECT_EQ(Get(files[0], DCM_DerivationDescription), "Each slice replaced by its rank-7 truncated SVD reconstruction");
}

TEST_F(DicomWriting, PatientStudyAndFrameOfReferenceAreCarriedOver)
{
  const auto source = MakeSource(SeriesSpec{});
  const auto files = Write(Perturbed(source.image, 1.0), &source);
  for (const DcmTagKey & tag : { DCM_PatientName,
                                 DCM_PatientID,
                                 DCM_PatientBirthDate,
                                 DCM_PatientSex,
                                 DCM_StudyInstanceUID,
                                 DCM_StudyDescription,
                                 DCM_StudyDate,
                                 DCM_AccessionNumber,
                                 DCM_FrameOfReferenceUID,
                                 DCM_Modality,
                                 DCM_SOPClassUID })
  {
    EXPECT_EQ(Get(files.back(), tag), Get(source.slices.back().file, tag)) << DcmTag(tag).getTagName();
    EXPECT_FALSE(Get(files.back(), tag).empty()) << DcmTag(tag).getTagName();
  }
}

TEST_F(DicomWriting, ReadsBackWithTheSourceGeometryThroughDcmtkAndGdcm)
{
  SeriesSpec spec;
  MakeOblique(spec);
  spec.isSigned = true;
  spec.bitsStored = 12;
  spec.slope = 0.5;
  spec.intercept = 10.0;
  const auto source = MakeSource(spec);
  const auto derived = Perturbed(source.image, 20.0);
  Write(derived, &source);
  const auto back = svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ Path("derived") }).at(0));
  EXPECT_GT(back.slices[0].rescaleSlope, spec.slope) << "the values span more than the source's 12 bits hold";
  ExpectSameVolume(derived, back.image, 1e-4, back.slices[0].rescaleSlope / 2 + 1e-3);
  ExpectSameVolume(ReadWithGdcm(Path("derived")), back.image);
}

TEST_F(DicomWriting, PixelsKeepTheSourceRepresentation)
{
  SeriesSpec spec;
  spec.bitsAllocated = 8;
  spec.bitsStored = 8;
  spec.isSigned = true;
  const auto source = MakeSource(spec);
  auto       derived = DicomVolumeImage::New();
  derived->Graft(source.image); // values the source format holds exactly
  const auto files = Write(derived, &source);
  EXPECT_EQ(Get(files[0], DCM_BitsAllocated), "8");
  EXPECT_EQ(Get(files[0], DCM_PixelRepresentation), "1");
  EXPECT_TRUE(Get(files[0], DCM_RescaleSlope).empty()) << "no rescale needed";
  const auto back = svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ Path("derived") }).at(0));
  ExpectSameVolume(source.image, back.image);
}

TEST_F(DicomWriting, ValuesOutsideTheSourceRangeGetARescaleThatHoldsThem)
{
  SeriesSpec spec;
  spec.bitsStored = 12; // unsigned: 0..4095
  const auto source = MakeSource(spec);
  auto       derived = Perturbed(source.image, 40.0); // below 0 and above 4095 near the ends of the range
  derived->GetBufferPointer()[0] = -300.0f;
  derived->GetBufferPointer()[1] = 4400.0f;
  const auto files = Write(derived, &source);
  EXPECT_EQ(Get(files[0], DCM_BitsStored), "12");
  EXPECT_EQ(Get(files[0], DCM_PixelRepresentation), "0");
  EXPECT_FALSE(Get(files[0], DCM_RescaleIntercept).empty());
  const auto back = svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ Path("derived") }).at(0));
  // Without a RescaleSlope element the stored values are the values (slope 1); DCMTK zeroes the output
  // of a failed findAndGet, so the default has to be restored explicitly.
  Float64 slope = 1.0;
  if (Load(files[0])->getDataset()->findAndGetFloat64(DCM_RescaleSlope, slope).bad())
  {
    slope = 1.0;
  }
  ExpectSameVolume(derived, back.image, 1e-4, slope / 2 + 1e-3);
}

TEST(DicomRescale, KeepsTheSourceRescaleWhenTheValuesFit)
{
  const auto r = svdlr_io::ChooseDicomRescale(-1000.0, 1000.0, { 16, 12, true }, { 1.0, -1024.0 });
  EXPECT_EQ(r.slope, 1.0);
  EXPECT_EQ(r.intercept, -1024.0);
}

TEST(DicomRescale, ShiftsTheInterceptByWholeStepsWhenTheValuesDoNotFit)
{
  const auto r = svdlr_io::ChooseDicomRescale(-12.3, 2000.0, { 16, 12, false }, { 0.5, 0.0 });
  EXPECT_EQ(r.slope, 0.5);
  EXPECT_EQ(std::fmod(r.intercept, 0.5), 0.0) << "the source's quantisation grid is kept";
  EXPECT_LE(r.intercept, -12.3);
  EXPECT_LE((2000.0 - r.intercept) / r.slope, 4095.0);
}

TEST(DicomRescale, WidensTheSlopeWhenTheRangeIsTooWide)
{
  const auto r = svdlr_io::ChooseDicomRescale(-100.0, 1000.0, { 8, 8, false }, { 1.0, 0.0 });
  EXPECT_NEAR(r.slope, 1100.0 / 255.0, 1e-12);
  EXPECT_NEAR(r.intercept, -100.0, 1e-12);
}

TEST_F(DicomWriting, Dcm2niixSeesTheSameGeometryAndValues)
{
  if (std::string(SVDLR_DCM2NIIX).empty())
  {
    if (svdlr_test::TestDataRequired())
      FAIL() << "dcm2niix is required (apt-get install dcm2niix)";
    GTEST_SKIP() << "dcm2niix not installed";
  }
  SeriesSpec spec;
  MakeOblique(spec);
  spec.slices = 7;
  spec.bitsStored = 12;
  const auto source = MakeSource(spec);
  const auto derived = Perturbed(source.image, 15.0);
  const auto files = Write(derived, &source);
  // Without a RescaleSlope element the stored values are the values (slope 1); DCMTK zeroes the output
  // of a failed findAndGet, so the default has to be restored explicitly.
  Float64 slope = 1.0;
  if (Load(files[0])->getDataset()->findAndGetFloat64(DCM_RescaleSlope, slope).bad())
  {
    slope = 1.0;
  }
  const std::string command = std::string(SVDLR_DCM2NIIX) + " -z n -b n -f converted -o '" + Folder("nifti") + "' '" +
                              Path("derived") + "' > '" + Path("dcm2niix.log") + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const auto nifti = itk::ReadImage<DicomVolumeImage>(Path("nifti/converted.nii"));
  ASSERT_EQ(nifti->GetLargestPossibleRegion().GetNumberOfPixels(),
            derived->GetLargestPossibleRegion().GetNumberOfPixels());

  // dcm2niix may flip and reorder axes: every voxel must still land on the voxel of the same value.
  std::size_t                                              checked = 0;
  itk::ImageRegionConstIteratorWithIndex<DicomVolumeImage> it(nifti, nifti->GetLargestPossibleRegion());
  for (; !it.IsAtEnd(); ++it)
  {
    DicomVolumeImage::PointType point;
    nifti->TransformIndexToPhysicalPoint(it.GetIndex(), point);
    itk::ContinuousIndex<double, 3> index;
    ASSERT_TRUE(derived->TransformPhysicalPointToContinuousIndex(point, index)) << point;
    DicomVolumeImage::IndexType nearest;
    for (unsigned int i = 0; i < 3; ++i)
    {
      ASSERT_NEAR(index[i], std::round(index[i]), 1e-3)
        << "voxel " << it.GetIndex() << " at " << point << ": " << index;
      nearest[i] = static_cast<itk::IndexValueType>(std::round(index[i]));
    }
    ASSERT_NEAR(it.Get(), derived->GetPixel(nearest), slope / 2 + 1e-3) << "voxel " << it.GetIndex();
    ++checked;
  }
  EXPECT_EQ(checked, derived->GetLargestPossibleRegion().GetNumberOfPixels());
}

TEST_F(DicomWriting, AVolumeWithoutDicomSourceStartsANewMrStudy)
{
  SeriesSpec spec;
  MakeOblique(spec);
  const auto source = MakeSource(spec); // only for its geometry and values
  const auto derived = Perturbed(source.image, 0.25);
  const auto files = Write(derived, nullptr);
  EXPECT_EQ(Get(files[0], DCM_SOPClassUID), UID_MRImageStorage);
  EXPECT_EQ(Get(files[0], DCM_PatientName), "Anonymous^SVDLR");
  EXPECT_NE(Get(files[0], DCM_StudyInstanceUID), Get(source.slices[0].file, DCM_StudyInstanceUID));
  EXPECT_EQ(Get(files[0], DCM_StudyInstanceUID), Get(files.back(), DCM_StudyInstanceUID));
  const auto back = svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ Path("derived") }).at(0));
  // Without a RescaleSlope element the stored values are the values (slope 1); DCMTK zeroes the output
  // of a failed findAndGet, so the default has to be restored explicitly.
  Float64 slope = 1.0;
  if (Load(files[0])->getDataset()->findAndGetFloat64(DCM_RescaleSlope, slope).bad())
  {
    slope = 1.0;
  }
  ExpectSameVolume(derived, back.image, 1e-4, slope / 2 + 1e-6);
  ExpectSameVolume(ReadWithGdcm(Path("derived")), back.image);
}

TEST_F(DicomWriting, WholeNumbersWithoutDicomSourceAreStoredAsTheyAre)
{
  SeriesSpec spec;
  spec.isSigned = true;
  const auto source = MakeSource(spec); // random whole numbers in [-32768, 32767]
  const auto files = Write(source.image, nullptr);
  EXPECT_EQ(Get(files[0], DCM_PixelRepresentation), "1");
  EXPECT_TRUE(Get(files[0], DCM_RescaleSlope).empty());
  const auto back = svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ Path("derived") }).at(0));
  ExpectSameVolume(source.image, back.image);
}

} // namespace
