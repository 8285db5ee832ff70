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
// SVDLowRankDenoiseSeries on DICOM magnitude and phase series (issue 21, item 1): a 4D magnitude series and its
// Siemens-scaled phase series (12-bit stored values, RescaleSlope 2, RescaleIntercept -4096), written with DCMTK
// here, in one folder (paired by ImageType M and P) and in two (--phase FOLDER), and as Enhanced MR files (paired by
// ComplexImageComponent); their output against the tool's on the same values as NIfTI files (--phase FILE); and the
// pairs the tool refuses, with exit code 3.
#include "SVDLowRankDicomComplexPairs.h"
#include "svdlrDicomGeometryTestData.h"
#include "svdlrToolRun.h"

#include "itkImageFileWriter.h"

#include <cmath>
#include <functional>
#include <random>

namespace
{
using namespace svdlr_test;
using Image4D = itk::Image<float, 4>;

constexpr unsigned int kColumns = 14, kRows = 12, kSlices = 6, kVolumes = 8;
constexpr double       kPi = 3.14159265358979323846;

/** One series to write: its identity, ImageType, rescale and stored values (x fastest, then y, slice, volume). */
struct Series
{
  std::string           number;
  std::string           description;
  std::string           imageType;
  double                slope{ 1.0 };
  double                intercept{ 0.0 };
  std::vector<Uint16>   stored;
  std::string           studyUID{ "1.2.826.0.1.3680043.9.7261.21.1" };
  std::function<void(DcmDataset *, unsigned int)> extra; // more attributes, given the volume
};

class DicomPhaseTool : public RandomTest
{
protected:
  void
  SetUp() override
  {
    RandomTest::SetUp();
    svdlr_io::SilenceDicomWarnings();
    MakeSignal();
  }

  /** A low-rank magnitude (3 spatial patterns mixed over the volumes, plus noise) and a smooth phase that changes
   * from volume to volume and wraps, stored as Siemens does: 0..4095 for -pi..pi. */
  void
  MakeSignal()
  {
    std::normal_distribution<double>       noise(0.0, 20.0);
    std::uniform_real_distribution<double> offset(-kPi, kPi), weight(0.2, 1.0);
    std::vector<std::array<double, 3>>     weights(kVolumes);
    for (auto & w : weights)
      w = { { weight(m_Random), weight(m_Random), weight(m_Random) } };
    for (unsigned int t = 0; t < kVolumes; ++t)
    {
      const double phase0 = offset(m_Random);
      for (unsigned int z = 0; z < kSlices; ++z)
        for (unsigned int y = 0; y < kRows; ++y)
          for (unsigned int x = 0; x < kColumns; ++x)
          {
            const double patterns[3] = { 1.0, std::sin(0.4 * x + 0.3 * z), std::cos(0.5 * y) };
            double       m = 600.0;
            for (unsigned int k = 0; k < 3; ++k)
              m += 300.0 * weights[t][k] * patterns[k];
            m = std::max(0.0, std::round(m + noise(m_Random)));
            double phase = phase0 + 0.35 * x - 0.2 * y + 0.1 * z; // wraps within most volumes
            phase = std::remainder(phase, 2.0 * kPi);             // [-pi, pi]
            m_Magnitude.push_back(static_cast<Uint16>(m));
            m_PhaseStored.push_back(static_cast<Uint16>(std::lround((phase + kPi) / (2.0 * kPi) * 4096.0) % 4096));
          }
    }
  }

  Series
  Magnitude() const
  {
    return { "5", "ep2d_diff", "ORIGINAL\\PRIMARY\\M\\ND\\NORM", 1.0, 0.0, m_Magnitude };
  }

  Series
  Phase() const
  {
    return { "6", "ep2d_diff_P", "ORIGINAL\\PRIMARY\\P\\ND", 2.0, -4096.0, m_PhaseStored };
  }

  /** `series` as classic MR files in `folder`, one per slice and volume (TemporalPositionIdentifier 1..V), under
   * names that interleave with any other series written there. */
  void
  Write(const std::string & folder, const Series & series, const std::string & uid = {})
  {
    char              buffer[100];
    const std::string seriesUID = uid.empty() ? dcmGenerateUniqueIdentifier(buffer, SITE_SERIES_UID_ROOT) : uid;
    for (unsigned int t = 0; t < kVolumes; ++t)
    {
      for (unsigned int z = 0; z < kSlices; ++z)
      {
        DcmFileFormat file;
        DcmDataset *  d = file.getDataset();
        Put(d, DCM_SOPClassUID, UID_MRImageStorage);
        Put(d, DCM_SOPInstanceUID, dcmGenerateUniqueIdentifier(buffer, SITE_INSTANCE_UID_ROOT));
        Put(d, DCM_PatientName, "Phase^Test");
        Put(d, DCM_PatientID, "SVDLR-PHASE");
        Put(d, DCM_StudyInstanceUID, series.studyUID);
        Put(d, DCM_FrameOfReferenceUID, "1.2.826.0.1.3680043.9.7261.21.2");
        Put(d, DCM_Modality, "MR");
        Put(d, DCM_Manufacturer, "SIEMENS");
        Put(d, DCM_SeriesInstanceUID, seriesUID);
        Put(d, DCM_SeriesNumber, series.number);
        Put(d, DCM_SeriesDescription, series.description);
        Put(d, DCM_ImageType, series.imageType);
        Put(d, DCM_InstanceNumber, std::to_string(t * kSlices + z + 1));
        Put(d, DCM_TemporalPositionIdentifier, std::to_string(t + 1));
        Put(d, DCM_ImagePositionPatient, JoinDS({ -10.0, 20.0, 2.5 * z }));
        Put(d, DCM_ImageOrientationPatient, "1\\0\\0\\0\\1\\0");
        Put(d, DCM_PixelSpacing, "1.5\\1.5");
        Put(d, DCM_SliceThickness, "2.5");
        Put(d, DCM_RescaleSlope, svdlr_io::FormatDecimalString(series.slope));
        Put(d, DCM_RescaleIntercept, svdlr_io::FormatDecimalString(series.intercept));
        Put(d, DCM_SamplesPerPixel, "1");
        Put(d, DCM_PhotometricInterpretation, "MONOCHROME2");
        d->putAndInsertUint16(DCM_Rows, kRows);
        d->putAndInsertUint16(DCM_Columns, kColumns);
        d->putAndInsertUint16(DCM_BitsAllocated, 16);
        d->putAndInsertUint16(DCM_BitsStored, 12);
        d->putAndInsertUint16(DCM_HighBit, 11);
        d->putAndInsertUint16(DCM_PixelRepresentation, 0);
        if (series.extra)
          series.extra(d, t);
        const std::size_t slice = (static_cast<std::size_t>(t) * kSlices + z) * kRows * kColumns;
        ASSERT_TRUE(
          d->putAndInsertUint16Array(DCM_PixelData, series.stored.data() + slice, kRows * kColumns).good());
        const std::string name = folder + "/IM_" + std::to_string(t) + "_" + std::to_string(z) + "_" + series.number;
        ASSERT_TRUE(file.saveFile(name.c_str(), EXS_LittleEndianExplicit).good()) << name;
      }
    }
  }

  /** `series` as one Enhanced MR file whose volumes are echoes (EffectiveEchoTime 8, 16, ... ms), and its
   * ComplexImageComponent (0008,9208) `component` (the Enhanced equivalent of ImageType M or P). */
  void
  WriteEnhanced(const std::string & path, const Series & series, const std::string & component)
  {
    std::vector<EnhancedFrame> frames;
    for (unsigned int t = 0; t < kVolumes; ++t)
    {
      for (unsigned int z = 0; z < kSlices; ++z)
      {
        EnhancedFrame frame;
        frame.slope = series.slope;
        frame.intercept = series.intercept;
        frame.echoTime = 8.0 * (t + 1);
        frame.echoIndex = static_cast<int>(t + 1);
        frame.inStack = static_cast<int>(z + 1);
        PlaneImage & plane = frame.plane;
        plane.position = { { -10.0, 20.0, 2.5 * z } };
        plane.rowDirection = { { 1.0, 0.0, 0.0 } };
        plane.columnDirection = { { 0.0, 1.0, 0.0 } };
        plane.rows = kRows;
        plane.columns = kColumns;
        const std::size_t slice = (static_cast<std::size_t>(t) * kSlices + z) * kRows * kColumns;
        for (std::size_t i = 0; i < kRows * kColumns; ++i)
          plane.values.push_back(series.stored[slice + i] * series.slope + series.intercept);
        frames.push_back(frame);
      }
    }
    char buffer[100];
    WriteEnhancedMr(path, frames, dcmGenerateUniqueIdentifier(buffer, SITE_SERIES_UID_ROOT), series.description);
    DcmFileFormat file;
    ASSERT_TRUE(file.loadFile(path.c_str()).good());
    ASSERT_TRUE(file.loadAllDataIntoMemory().good()); // it is written back to the same path
    Put(file.getDataset(), DCM_SeriesNumber, series.number);
    Put(file.getDataset(), DCM_Manufacturer, "Siemens Healthineers");
    Put(file.getDataset(), DCM_ComplexImageComponent, component); // ImageType stays ...\M\...: the component wins
    ASSERT_TRUE(file.saveFile(path.c_str(), EXS_LittleEndianExplicit).good());
  }

  /** The physical values of `series` (stored x slope + intercept) as a 4D NIfTI file: what dcm2niix would give. */
  void
  WriteNifti(const std::string & path, const Series & series)
  {
    auto                image = Image4D::New();
    Image4D::SizeType   size{ { kColumns, kRows, kSlices, kVolumes } };
    image->SetRegions(Image4D::RegionType(size));
    image->Allocate();
    for (std::size_t i = 0; i < series.stored.size(); ++i)
      image->GetBufferPointer()[i] = static_cast<float>(series.stored[i] * series.slope + series.intercept);
    itk::WriteImage(image, path);
  }

  ToolRun
  Denoise(const std::string & arguments)
  {
    return RunToolIn(m_Directory, SVDLR_DENOISE_TOOL, "--backend cpu --nthreads 1 " + arguments);
  }

  /** The tool's stdout on the DICOM input `folder` (exit 0), whose output must be, voxel for voxel, its output on
   * the same values as NIfTI files with --phase. */
  std::string
  DenoiseAsTheNiftiPathDoes(const std::string & folder)
  {
    WriteNifti(Path("magnitude.nii"), Magnitude());
    WriteNifti(Path("phase.nii"), Phase());
    const auto fromDicom = Denoise(folder + " from_dicom.nii.gz");
    EXPECT_EQ(fromDicom.exitCode, 0) << fromDicom.err;
    const auto fromNifti = Denoise("magnitude.nii from_nifti.nii.gz --phase phase.nii");
    EXPECT_EQ(fromNifti.exitCode, 0) << fromNifti.err;
    ExpectSameOutput("from_dicom.nii.gz", "from_nifti.nii.gz");
    return fromDicom.out;
  }

  /** Every voxel of two outputs equal (the same floats went in, the same arithmetic ran). */
  void
  ExpectSameOutput(const std::string & a, const std::string & b)
  {
    const auto first = itk::ReadImage<Image4D>(Path(a));
    const auto second = itk::ReadImage<Image4D>(Path(b));
    ASSERT_EQ(first->GetLargestPossibleRegion().GetSize(), second->GetLargestPossibleRegion().GetSize());
    const std::size_t count = first->GetLargestPossibleRegion().GetNumberOfPixels();
    for (std::size_t i = 0; i < count; ++i)
    {
      ASSERT_EQ(first->GetBufferPointer()[i], second->GetBufferPointer()[i]) << a << " and " << b << ", voxel " << i;
    }
  }

  std::vector<Uint16> m_Magnitude, m_PhaseStored;
};

TEST_F(DicomPhaseTool, ComplexPartIsReadFromEveryVendorsAttribute)
{
  using svdlr_io::DicomComplexPart;
  using svdlr_io::DicomComplexPartOf;
  EXPECT_EQ(DicomComplexPartOf("ORIGINAL\\PRIMARY\\M\\ND\\NORM", "", -1), DicomComplexPart::Magnitude); // Siemens
  EXPECT_EQ(DicomComplexPartOf("ORIGINAL\\PRIMARY\\P\\ND", "", -1), DicomComplexPart::Phase);
  EXPECT_EQ(DicomComplexPartOf("ORIGINAL\\PRIMARY\\M_FFE\\M\\FFE", "", -1), DicomComplexPart::Magnitude); // Philips
  EXPECT_EQ(DicomComplexPartOf("ORIGINAL\\PRIMARY\\PHASE MAP\\P\\FFE", "", -1), DicomComplexPart::Phase);
  EXPECT_EQ(DicomComplexPartOf("ORIGINAL\\PRIMARY\\OTHER", "", 1), DicomComplexPart::Phase); // GE (0043,102F)
  EXPECT_EQ(DicomComplexPartOf("ORIGINAL\\PRIMARY\\OTHER", "", 0), DicomComplexPart::Magnitude);
  EXPECT_EQ(DicomComplexPartOf("ORIGINAL\\PRIMARY\\OTHER", "", -1), DicomComplexPart::Unknown);
  EXPECT_EQ(DicomComplexPartOf("ORIGINAL\\PRIMARY\\M\\NONE", "PHASE", -1), DicomComplexPart::Phase); // Enhanced
  EXPECT_EQ(DicomComplexPartOf("ORIGINAL\\PRIMARY\\M\\P", "", -1), DicomComplexPart::Unknown);
  EXPECT_EQ(DicomComplexPartOf("ORIGINAL\\PRIMARY\\R\\ND", "", -1), DicomComplexPart::Real);
}

TEST_F(DicomPhaseTool, OneFolderOfMagnitudeAndPhaseGivesTheNiftiPathsOutput)
{
  Write(Folder("both"), Magnitude());
  Write(Folder("both"), Phase());
  const std::string out = DenoiseAsTheNiftiPathDoes("both");
  EXPECT_NE(out.find("paired:   magnitude series 5 \"ep2d_diff\""), std::string::npos) << out;
  EXPECT_NE(out.find("magnitude and phase (siemens)"), std::string::npos) << out;

  // The magnitude alone would give another output: the phase was used.
  const auto magnitudeOnly = Denoise("magnitude.nii magnitude_only.nii.gz");
  ASSERT_EQ(magnitudeOnly.exitCode, 0) << magnitudeOnly.err;
  const auto a = itk::ReadImage<Image4D>(Path("from_dicom.nii.gz"));
  const auto b = itk::ReadImage<Image4D>(Path("magnitude_only.nii.gz"));
  EXPECT_FALSE(std::equal(a->GetBufferPointer(),
                          a->GetBufferPointer() + a->GetLargestPossibleRegion().GetNumberOfPixels(),
                          b->GetBufferPointer()));
}

TEST_F(DicomPhaseTool, PhaseFolderOrFileGivesTheNiftiPathsOutputWithEitherInput)
{
  Write(Folder("magnitude"), Magnitude());
  Write(Folder("phase"), Phase());
  WriteNifti(Path("magnitude.nii"), Magnitude());
  WriteNifti(Path("phase.nii"), Phase());
  const auto fromNifti = Denoise("magnitude.nii from_nifti.nii.gz --phase phase.nii --complex-output real");
  ASSERT_EQ(fromNifti.exitCode, 0) << fromNifti.err;
  for (const std::string & arguments : { std::string("magnitude a.nii.gz --phase phase"),
                                         std::string("magnitude.nii b.nii.gz --phase phase"),
                                         std::string("magnitude c.nii.gz --phase phase.nii") })
  {
    const auto run = Denoise(arguments + " --complex-output real");
    ASSERT_EQ(run.exitCode, 0) << arguments << ": " << run.err;
    ExpectSameOutput(arguments.substr(arguments.find(' ') + 1, 8), "from_nifti.nii.gz");
  }
}

TEST_F(DicomPhaseTool, EnhancedMagnitudeAndPhaseFilesArePairedByComplexImageComponent)
{
  Folder("enhanced");
  WriteEnhanced(Path("enhanced/magnitude.dcm"), Magnitude(), "MAGNITUDE");
  WriteEnhanced(Path("enhanced/phase.dcm"), Phase(), "PHASE");
  const std::string out = DenoiseAsTheNiftiPathDoes("enhanced");
  EXPECT_NE(out.find("volumes by echo"), std::string::npos) << out;
  EXPECT_NE(out.find("paired:   magnitude series 5"), std::string::npos) << out;

  // One Enhanced file whose frames are of both parts (ComplexImageComponent MIXED) is refused, not read as one.
  Folder("mixed");
  WriteEnhanced(Path("mixed/both.dcm"), Magnitude(), "MIXED");
  const auto mixed = Denoise("mixed out.nii.gz");
  EXPECT_EQ(mixed.exitCode, 3) << mixed.err;
  EXPECT_NE(mixed.err.find("holds images of several parts"), std::string::npos) << mixed.err;
}

TEST_F(DicomPhaseTool, MissingAmbiguousAndMismatchedPartnersAreRefusedWithExitCodeThree)
{
  const auto refused = [this](const std::string & arguments, const std::string & message) {
    const auto run = Denoise(arguments + " out.nii.gz");
    EXPECT_EQ(run.exitCode, 3) << arguments << ": " << run.err;
    EXPECT_NE(run.err.find(message), std::string::npos) << arguments << ": " << run.err;
    EXPECT_FALSE(fs::exists(Path("out.nii.gz"))) << arguments;
  };
  // A phase series without its magnitude.
  Write(Folder("phase_only"), Phase());
  refused("phase_only", "is a phase series, and its magnitude series is missing");
  // Two phase series beside one magnitude: which belongs to it is ambiguous; the message names all three.
  Write(Folder("ambiguous"), Magnitude());
  Write(Folder("ambiguous"), Phase());
  Series second = Phase();
  second.number = "8";
  Write(Folder("ambiguous"), second);
  refused("ambiguous", "1 magnitude and 2 phase series: which belong together is ambiguous");
  const auto run = Denoise("ambiguous out.nii.gz");
  EXPECT_NE(run.err.find("series 6 \"ep2d_diff_P\""), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("series 8 \"ep2d_diff_P\""), std::string::npos) << run.err;
  // A phase of another study.
  Write(Folder("other_study"), Magnitude());
  Series foreign = Phase();
  foreign.studyUID = "1.2.826.0.1.3680043.9.7261.21.99";
  Write(Folder("other_study"), foreign);
  refused("other_study", "are no pair: they belong to different studies");
  // A phase whose volumes are other echoes: the same count and grid, but not the same volumes.
  Write(Folder("other_volumes"), Magnitude());
  Series echoes = Phase();
  echoes.extra = [](DcmDataset * d, unsigned int t) { Put(d, DCM_EchoNumbers, std::to_string(t + 1)); };
  Write(Folder("other_volumes"), echoes);
  refused("other_volumes", "are no pair: their volumes differ");
  // Another vendor's phase: --phase-units auto does not guess its unit; named, it is read.
  Write(Folder("philips"), Magnitude());
  Series philips = Phase();
  philips.extra = [](DcmDataset * d, unsigned int) { Put(d, DCM_Manufacturer, "Philips Medical Systems"); };
  Write(Folder("philips"), philips);
  refused("philips", "was written by 'Philips Medical Systems': --phase-units auto reads only Siemens'");
  const auto named = Denoise("philips named.nii.gz --phase-units siemens");
  EXPECT_EQ(named.exitCode, 0) << named.err;
  // --phase naming a magnitude series, and a phase series as INPUT.
  Write(Folder("magnitude"), Magnitude());
  refused("magnitude --phase magnitude", "is a magnitude series");
  refused("phase_only --phase phase_only", "is a phase series (series 6");
  // A series holding magnitude and phase images together.
  Series mixed = Phase();
  mixed.extra = [](DcmDataset * d, unsigned int t) {
    Put(d, DCM_ImageType, t % 2 == 0 ? "ORIGINAL\\PRIMARY\\M\\ND" : "ORIGINAL\\PRIMARY\\P\\ND");
  };
  Write(Folder("mixed"), mixed);
  refused("mixed", "holds images of several parts of the complex signal in one series");
}

TEST_F(DicomPhaseTool, APhaseOfAnotherGridIsRefusedNamingBothSeries)
{
  Write(Folder("magnitude"), Magnitude());
  Series shifted = Phase();
  shifted.extra = [](DcmDataset * d, unsigned int) {
    Float64 z = 0.0;
    d->findAndGetFloat64(DCM_ImagePositionPatient, z, 2);
    Put(d, DCM_ImagePositionPatient, JoinDS({ -10.0, 20.0, z + 5.0 }));
  };
  Write(Folder("phase"), shifted);
  const auto run = Denoise("magnitude out.nii.gz --phase phase");
  EXPECT_EQ(run.exitCode, 3) << run.err;
  EXPECT_NE(run.err.find("the magnitude series 5 \"ep2d_diff\""), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("lie on different grids"), std::string::npos) << run.err;
}

} // namespace
