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
// SVDLowRankReconstructImage end to end: PNG folders, NIfTI files and DICOM series in and out, each
// output checked against the filter run directly on the same input; exit codes; outputs that appear
// whole or not at all; and the examples, run so they cannot rot.
#include "SVDLowRankPngStack.h"
#include "svdlrTestScratch.h"
#ifdef SVDLR_HAVE_DCMTK
#  include "SVDLowRankDicomWriter.h"
#  include "svdlrDicomTestData.h"

#  include "dcmtk/dcmdata/dctk.h"
#endif

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkImageRegionIteratorWithIndex.h"
#include "itkSVDLowRankReconstructionImageFilter.h"
#include "svdlr/RankPolicy.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>
#include <sys/wait.h>
#include <utility>

namespace
{
using namespace svdlr_test;

struct ToolRun
{
  int         exitCode{ -1 };
  std::string out;
  std::string err;
};

std::string
ReadText(const std::string & path)
{
  std::ifstream     file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/** Every file under `folder` with its contents: to show that a run left an input untouched. */
std::map<std::string, std::string>
Snapshot(const std::string & folder)
{
  std::map<std::string, std::string> files;
  for (const auto & entry : fs::recursive_directory_iterator(folder))
  {
    if (entry.is_regular_file())
      files[entry.path().string()] = ReadText(entry.path().string());
  }
  return files;
}

/** The filter on the CPU, as the tool runs it with --backend cpu. */
template <typename TImage>
typename TImage::Pointer
Reconstruct(const TImage * input, unsigned int rank, unsigned int axis, double energy = 0.0)
{
  auto filter = itk::SVDLowRankReconstructionImageFilter<TImage, TImage>::New();
  filter->SetInput(input);
  if (energy > 0.0)
    filter->SetEnergyFraction(energy);
  else
    filter->SetRank(rank);
  filter->SetSliceDimension(axis);
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  filter->Update();
  return filter->GetOutput();
}

template <typename TImage>
void
ExpectClose(const TImage * expected, const TImage * actual, double tolerance)
{
  ASSERT_EQ(expected->GetLargestPossibleRegion().GetSize(), actual->GetLargestPossibleRegion().GetSize());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < expected->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
  {
    const double e = expected->GetBufferPointer()[i], a = actual->GetBufferPointer()[i];
    if (std::abs(e - a) > tolerance && ++bad <= 5)
      ADD_FAILURE() << "pixel " << i << ": filter " << e << ", tool " << a;
  }
  EXPECT_EQ(bad, 0u);
}

class Tool : public RandomTest
{
protected:
  ToolRun
  Run(const std::string & arguments, const std::string & program = SVDLR_TOOL)
  {
    const std::string command = "cd '" + m_Directory.string() + "' && '" + program + "' " + arguments + " > '" +
                                Path("stdout.txt") + "' 2> '" + Path("stderr.txt") + "'";
    const int status = std::system(command.c_str());
    ToolRun   run;
    run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.out = ReadText(Path("stdout.txt"));
    run.err = ReadText(Path("stderr.txt"));
    return run;
  }

  /** A low-rank structure plus noise in [low, high]: what MRI slices look like to an SVD, never all zero. */
  template <typename TImage>
  typename TImage::Pointer
  RandomVolume(const typename TImage::SizeType & size, double low, double high)
  {
    auto image = TImage::New();
    image->SetRegions(size);
    image->Allocate();
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::vector<std::array<double, 4>>     factors(size[0] + size[1] + size[2]);
    for (auto & f : factors)
      f = { { uniform(m_Random), uniform(m_Random), uniform(m_Random), uniform(m_Random) } };
    itk::ImageRegionIteratorWithIndex<TImage> it(image, image->GetLargestPossibleRegion());
    for (; !it.IsAtEnd(); ++it)
    {
      const auto & idx = it.GetIndex();
      double       v = 0.1 * uniform(m_Random);
      for (unsigned int j = 0; j < 4; ++j)
        v += factors[idx[0]][j] * factors[size[0] + idx[1]][j] * factors[size[0] + size[1] + idx[2]][j] / 4.0;
      it.Set(static_cast<typename TImage::PixelType>(low + (high - low) * std::min(1.0, v)));
    }
    return image;
  }
};

TEST_F(Tool, HelpShowsAnExampleAndWhetherDicomIsSupported)
{
  const auto run = Run("--help");
  EXPECT_EQ(run.exitCode, 0);
  EXPECT_NE(run.out.find("Example:"), std::string::npos);
  EXPECT_NE(run.out.find("--list-series"), std::string::npos);
#ifdef SVDLR_HAVE_DCMTK
  EXPECT_NE(run.out.find("DICOM support: yes"), std::string::npos) << run.out;
#else
  EXPECT_NE(run.out.find("DICOM support: NOT AVAILABLE"), std::string::npos) << run.out;
#endif
}

TEST_F(Tool, BadCommandLinesExitWithTwo)
{
  EXPECT_EQ(Run("--rank 0").exitCode, 2);
  EXPECT_EQ(Run("--format tiff in.nii out").exitCode, 2);
  EXPECT_EQ(Run("--no-such-option").exitCode, 2);
  EXPECT_EQ(Run("--solver fast in.nii out.nii").exitCode, 2);
  const auto subspaceEnergy = Run("--solver subspace --energy 0.9 in.nii out.nii");
  EXPECT_EQ(subspaceEnergy.exitCode, 2);
  EXPECT_NE(subspaceEnergy.err.find("--solver subspace needs --rank"), std::string::npos) << subspaceEnergy.err;
  // The options both tools share name the option and the values they take (SVDLowRankCommonOptions).
  const auto backend = Run("-b gpu in.nii out.nii");
  EXPECT_EQ(backend.exitCode, 2);
  EXPECT_NE(backend.err.find("--backend: must be auto, cpu or cuda, got 'gpu'"), std::string::npos) << backend.err;
  EXPECT_EQ(Run("--device -1 in.nii out.nii").exitCode, 2);
  EXPECT_EQ(Run("--rank 2.5 in.nii out.nii").exitCode, 2);
  EXPECT_EQ(Run("--slice-axis 3 in.nii out.nii").exitCode, 2);
  EXPECT_EQ(Run("in.nii out.nii third.nii").exitCode, 2);
}

TEST_F(Tool, MissingInputExitsWithThree)
{
  const auto run = Run("nowhere.nii.gz out.nii.gz");
  EXPECT_EQ(run.exitCode, 3);
  EXPECT_NE(run.err.find("no such file or folder"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(Path("out.nii.gz")));
}

TEST_F(Tool, PngFolderInPngFolderOutMatchesTheFilterRunDirectly)
{
  using VolumeType = itk::Image<unsigned char, 3>;
  const auto volume = RandomVolume<VolumeType>({ { 40, 30, 12 } }, 5.0, 250.0);
  svdlr_io::WritePngStack(volume.GetPointer(), Folder("slices"), "img"); // img0000.png ... img0011.png
  fs::rename(Path("slices/img0010.png"), Path("slices/img10.png"));      // natural order, not plain order
  fs::rename(Path("slices/img0002.png"), Path("slices/img2.png"));
  const auto run = Run("--rank 3 --backend cpu slices slices_rank3");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("ranks:    3 (all 12 slices)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("backend:  CPU (solver Exact)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("folder of PNG slices"), std::string::npos) << run.out;
  EXPECT_TRUE(fs::exists(Path("slices_rank3_figure.png")));
  const auto output = svdlr_io::ReadPngStack<unsigned char>(svdlr_io::FindPngSlices(Path("slices_rank3")));
  ExpectClose(Reconstruct(volume.GetPointer(), 3, 2).GetPointer(), output.GetPointer(), 1.0);
}

TEST_F(Tool, NiftiInNiftiOutMatchesTheFilterRunDirectly)
{
  using VolumeType = itk::Image<float, 3>;
  auto volume = RandomVolume<VolumeType>({ { 24, 20, 16 } }, -50.0, 900.0);
  volume->SetSpacing(itk::Vector<double, 3>(std::array<double, 3>{ { 0.9, 1.1, 2.0 } }.data()));
  itk::WriteImage(volume, Path("volume.nii.gz"));
  const auto run = Run("--energy 0.95 --slice-axis 1 --backend cpu --no-figure volume.nii.gz recon.nii.gz");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_FALSE(fs::exists(Path("recon_figure.png")));
  const auto output = itk::ReadImage<VolumeType>(Path("recon.nii.gz"));
  const auto input = itk::ReadImage<VolumeType>(Path("volume.nii.gz"));
  ExpectClose(Reconstruct(input.GetPointer(), 0, 1, 0.95).GetPointer(), output.GetPointer(), 1e-3);
  EXPECT_EQ(output->GetSpacing(), input->GetSpacing());
}

TEST_F(Tool, NoiseRankOptionsAreCheckedWithTheOtherPolicies)
{
  const auto unknown = Run("--noise-rank pca in.nii out.nii");
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("--noise-rank: must be gd, mp, mp-cg or nordic, got 'pca'"), std::string::npos)
    << unknown.err;
  for (const char * arguments : { "--noise-sigma 0 in.nii out.nii",
                                  "--noise-sigma -2 in.nii out.nii",
                                  "--noise-sigma inf in.nii out.nii",
                                  "--noise-sigma 3 --noise-rank mp in.nii out.nii",
                                  "--noise-rank gd --rank 4 in.nii out.nii",
                                  "--energy 0.9 --noise-rank mp-cg in.nii out.nii",
                                  "--noise-sigma 2 --energy 0.9 in.nii out.nii",
                                  "--solver subspace --noise-rank mp in.nii out.nii",
                                  "--noise-rank nordic in.nii out.nii" })
  {
    EXPECT_EQ(Run(arguments).exitCode, 2) << arguments;
  }
  EXPECT_NE(Run("--noise-rank nordic in.nii out.nii").err.find("takes sigma as given"), std::string::npos);
  EXPECT_NE(Run("--help").out.find("--noise-rank NAME"), std::string::npos);
}

TEST_F(Tool, NoiseRankMatchesTheFilterAndPrintsTheSigmaRange)
{
  using VolumeType = itk::Image<float, 3>;
  const auto volume = RandomVolume<VolumeType>({ { 48, 40, 6 } }, 0.0, 500.0);
  itk::WriteImage(volume, Path("volume.nii.gz"));
  const auto input = itk::ReadImage<VolumeType>(Path("volume.nii.gz"));

  using Filter = itk::SVDLowRankReconstructionImageFilter<VolumeType, VolumeType>;
  const auto direct = [&](const std::function<void(Filter *)> & configure) {
    auto filter = Filter::New();
    filter->SetInput(input);
    filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
    configure(filter);
    filter->Update();
    return Filter::Pointer(filter);
  };
  const auto describe = [](const std::vector<double> & sigmas) {
    const auto [low, high] = std::minmax_element(sigmas.begin(), sigmas.end());
    std::ostringstream text;
    text << *low;
    if (*high != *low)
      text << " to " << *high;
    return text.str();
  };

  const auto mp = Run("--noise-rank mp-cg --backend cpu --no-figure volume.nii.gz mp.nii.gz");
  ASSERT_EQ(mp.exitCode, 0) << mp.err;
  const auto mpFilter = direct([](Filter * f) {
    f->SetMarchenkoPasturEstimator(itk::SVDLowRankReconstructionEnums::MarchenkoPasturEstimator::CorderoGrande2019);
  });
  ExpectClose(mpFilter->GetOutput(), itk::ReadImage<VolumeType>(Path("mp.nii.gz")).GetPointer(), 1e-3);
  // The same output means the same ranks; the summary adds the σ range beside them.
  EXPECT_NE(mp.out.find("noise:    sigma " + describe(mpFilter->GetNoiseSigmas()) +
                        " (Marchenko-Pastur (Cordero-Grande 2019), estimated per slice)"),
            std::string::npos)
    << mp.out;

  const auto known = Run("--noise-sigma 12.5 --backend cpu --no-figure volume.nii.gz gd.nii.gz");
  ASSERT_EQ(known.exitCode, 0) << known.err;
  const auto gdFilter = direct([](Filter * f) { f->SetNoiseSigma(12.5); });
  ExpectClose(gdFilter->GetOutput(), itk::ReadImage<VolumeType>(Path("gd.nii.gz")).GetPointer(), 1e-3);
  EXPECT_NE(known.out.find("noise:    sigma 12.5 (Gavish-Donoho, given)"), std::string::npos) << known.out;

  const auto fixed = Run("--rank 2 --backend cpu --no-figure volume.nii.gz fixed.nii.gz");
  ASSERT_EQ(fixed.exitCode, 0) << fixed.err;
  EXPECT_EQ(fixed.out.find("noise:"), std::string::npos) << fixed.out;
}

TEST_F(Tool, ExistingOutputFolderIsReplacedOnlyWithOverwriteAndOnlyWhenItHoldsItsOwnSlices)
{
  using VolumeType = itk::Image<unsigned char, 3>;
  svdlr_io::WritePngStack(RandomVolume<VolumeType>({ { 16, 16, 4 } }, 1.0, 200.0).GetPointer(), Folder("slices"));
  std::ofstream(Folder("taken") + "/keep.txt") << "someone's file";
  for (const char * overwrite : { "", "--overwrite " }) // --overwrite replaces what the tool writes, nothing else
  {
    const auto refused = Run(std::string("--rank 2 ") + overwrite + "slices taken");
    EXPECT_EQ(refused.exitCode, 2);
    EXPECT_NE(refused.err.find("holds files this tool does not write ('keep.txt')"), std::string::npos) << refused.err;
    EXPECT_TRUE(fs::exists(Path("taken/keep.txt")));
  }
  fs::remove(Path("taken/keep.txt"));
  ASSERT_EQ(Run("--rank 2 slices taken").exitCode, 0);
  EXPECT_EQ(Run("--rank 2 slices taken").exitCode, 2);
  const auto replaced = Run("--rank 2 --overwrite slices taken");
  EXPECT_EQ(replaced.exitCode, 0) << replaced.err;
  EXPECT_EQ(svdlr_io::FindPngSlices(Path("taken")).size(), 4u);
}

TEST_F(Tool, OutputInsideTheInputIsRefused)
{
  using VolumeType = itk::Image<unsigned char, 3>;
  svdlr_io::WritePngStack(RandomVolume<VolumeType>({ { 16, 16, 3 } }, 1.0, 200.0).GetPointer(), Folder("slices"));
  const auto before = Snapshot(Path("slices"));
  EXPECT_EQ(Run("--rank 2 slices slices/out").exitCode, 2);
  EXPECT_EQ(Run("--rank 2 --overwrite slices .").exitCode, 2);
  EXPECT_EQ(Snapshot(Path("slices")), before);
}

#ifdef SVDLR_HAVE_DCMTK

TEST_F(Tool, DicomFolderInDicomFolderOutMatchesTheFilterAndKeepsTheGeometry)
{
  SeriesSpec spec;
  MakeOblique(spec);
  spec.rows = 32;
  spec.columns = 28;
  spec.slices = 7;
  spec.bitsStored = 12;
  spec.slope = 0.5;
  spec.intercept = -20.0;
  spec.seriesDescription = "t1 oblique";
  WriteSeries(Folder("dicom"), spec, m_Random);
  const auto before = Snapshot(Path("dicom"));
  const auto run = Run("--rank 4 --backend cpu dicom dicom_rank4");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("DICOM series, 7 files: \"SVD rank 4 of t1 oblique\""), std::string::npos) << run.out;
  EXPECT_EQ(Snapshot(Path("dicom")), before) << "the input is never touched";

  const auto input = svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ Path("dicom") }).at(0));
  const auto output = svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ Path("dicom_rank4") }).at(0));
  const auto expected = Reconstruct(input.image.GetPointer(), 4, 2);
  ExpectSameVolume(expected, output.image, 1e-4, output.slices[0].rescaleSlope / 2 + 1e-3);
  ExpectSameVolume(ReadWithGdcm(Path("dicom_rank4")), output.image);

  // The derived series says in words how its pixels were made, in RankPolicy.h's words (SliceDerivationDescription).
  DcmFileFormat written;
  ASSERT_TRUE(written.loadFile(svdlr_io::FindDicomSeries({ Path("dicom_rank4") }).at(0).files.at(0).c_str()).good());
  OFString derivation;
  written.getDataset()->findAndGetOFString(DCM_DerivationDescription, derivation);
  EXPECT_EQ(std::string(derivation.c_str()),
            "Each slice replaced by its rank-4 truncated SVD reconstruction (SVDLowRankReconstructImage; ranks 4 "
            "(all 7 slices))");
}

/** The first file of the DICOM series under `folder` (searched recursively) whose folder name ends with `suffix`. */
std::string
FirstDicomFileUnder(const fs::path & folder, const std::string & suffix)
{
  for (const auto & entry : fs::recursive_directory_iterator(folder))
  {
    const std::string name = entry.path().parent_path().filename().string();
    if (entry.is_regular_file() && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    {
      return entry.path().string();
    }
  }
  return {};
}

TEST_F(Tool, BatchAndSinglePathsLabelADicomOutputAlikeForEveryPolicy)
{
  SeriesSpec spec;
  spec.rows = 32;
  spec.columns = 28;
  spec.slices = 4;
  spec.seriesDescription = "t1 axial";
  WriteSeries(Folder("study/t1"), spec, m_Random);
  const std::pair<const char *, svdlr::RankPolicy> runs[] = {
    { "--rank 4", svdlr::RankPolicy::Fixed(4) },
    { "--energy 0.9", svdlr::RankPolicy::Energy(0.9) },
    { "--noise-rank gd", svdlr::RankPolicy::GavishDonoho() },
    { "--noise-sigma 12.5", svdlr::RankPolicy::GavishDonoho(12.5) },
    { "--noise-rank mp", svdlr::RankPolicy::MarchenkoPastur(svdlr::MarchenkoPasturEstimator::Veraart2016) },
    { "--noise-rank mp-cg", svdlr::RankPolicy::MarchenkoPastur(svdlr::MarchenkoPasturEstimator::CorderoGrande2019) },
    { "--noise-rank nordic --noise-sigma 12.5", svdlr::RankPolicy::Nordic(12.5) },
  };
  for (std::size_t i = 0; i < std::size(runs); ++i)
  {
    const std::string options = runs[i].first;
    const std::string tag = svdlr::OutputTag(runs[i].second);
    SCOPED_TRACE(options);
    const std::string single = "single" + std::to_string(i) + "_" + tag;
    ASSERT_EQ(Run(options + " --backend cpu --no-figure study/t1 " + single).exitCode, 0);
    const std::string batch = "batch" + std::to_string(i);
    const auto        batchRun = Run(options + " --dicom-series --backend cpu -o " + batch + " study");
    ASSERT_EQ(batchRun.exitCode, 0) << batchRun.out << batchRun.err;

    const std::string singleFile = FirstDicomFileUnder(Path(single), "_" + tag);
    const std::string batchFile = FirstDicomFileUnder(Path(batch), "_" + tag); // the batch path names it by the tag
    ASSERT_FALSE(singleFile.empty());
    ASSERT_FALSE(batchFile.empty()) << "no output named for " << tag << " under " << batch;
    const auto read = [](const std::string & file, const DcmTagKey & key) {
      DcmFileFormat dicom;
      EXPECT_TRUE(dicom.loadFile(file.c_str()).good()) << file;
      return svdlr_io::GetString(dicom.getDataset(), key);
    };
    const std::string description = read(singleFile, DCM_SeriesDescription);
    EXPECT_EQ(description, svdlr::PolicyDescription(runs[i].second) + " of t1 axial");
    EXPECT_EQ(read(batchFile, DCM_SeriesDescription), description);
    // The derivation: the policy's sentence, then the tool (and the ranks) in parentheses.
    const std::string derivation = svdlr::SliceDerivationDescription(runs[i].second) + " (";
    EXPECT_EQ(read(singleFile, DCM_DerivationDescription).substr(0, derivation.size()), derivation);
    EXPECT_EQ(read(batchFile, DCM_DerivationDescription).substr(0, derivation.size()), derivation);
    // The same whole sentence on both paths, the ranks included (issue 19: the batch path wrote its own).
    EXPECT_EQ(read(batchFile, DCM_DerivationDescription), read(singleFile, DCM_DerivationDescription));
  }
}

TEST_F(Tool, Jpeg2000DicomInDicomOutMatchesTheFilterAndKeepsTheGeometry)
{
  // A real JPEG 2000 file (lossless, decoded through GDCM); its derived series is written as RLE.
  SVDLR_REAL_DATA_OR_SKIP(path, "pydicom/MR_small_jp2klossless.dcm");
  fs::copy_file(path, Folder("j2k") + "/slice.dcm");
  const auto run = Run("--rank 6 --backend cpu --transfer-syntax rle j2k j2k_rank6");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("1 file: \"SVD rank 6\", RLE Lossless (1.2.840.10008.1.2.5)"), std::string::npos) << run.out;

  const auto input = svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ Path("j2k") }).at(0));
  const auto output = svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ Path("j2k_rank6") }).at(0));
  EXPECT_EQ(output.slices.at(0).transferSyntaxUID, UID_RLELosslessTransferSyntax);
  // Stored as whole numbers (the source's 16-bit signed format): within half a step of the filter's output.
  ExpectClose(Reconstruct(input.image.GetPointer(), 6, 2).GetPointer(), output.image.GetPointer(), 0.5 + 1e-3);
  ExpectSameVolume(input.image, output.image, 1e-4, HUGE_VAL);
  ExpectSameVolume(ReadWithGdcm(Path("j2k_rank6")), output.image, 1e-4, 0.0, false);
}

TEST_F(Tool, TransferSyntaxIsCheckedBeforeTheWork)
{
  SeriesSpec spec;
  spec.slices = 3;
  WriteSeries(Folder("dicom"), spec, m_Random);
  const auto refused = Run("--rank 2 --backend cpu --transfer-syntax jpeg-ls dicom out_jls");
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("JPEG-LS output is disabled"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(Path("out_jls")));
  const auto unknown = Run("--rank 2 --backend cpu --transfer-syntax j2k dicom out_j2k");
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("explicit-le, implicit-le, rle, jpeg-lossless"), std::string::npos) << unknown.err;
  EXPECT_FALSE(fs::exists(Path("out_j2k")));
  const auto notDicom = Run("--rank 2 --backend cpu --transfer-syntax rle dicom out.nii.gz");
  EXPECT_EQ(notDicom.exitCode, 2);
  EXPECT_FALSE(fs::exists(Path("out.nii.gz")));
  const auto implicit = Run("--rank 2 --backend cpu --transfer-syntax implicit-le dicom out_implicit");
  ASSERT_EQ(implicit.exitCode, 0) << implicit.err;
  const auto output = svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ Path("out_implicit") }).at(0));
  ASSERT_EQ(output.slices.size(), 3u);
  for (const auto & slice : output.slices)
  {
    EXPECT_EQ(slice.transferSyntaxUID, UID_LittleEndianImplicitTransferSyntax);
  }
}

TEST_F(Tool, DicomFolderInNiftiOutMatchesTheFilterRunDirectly)
{
  SeriesSpec spec;
  spec.isSigned = true;
  spec.slices = 5;
  WriteSeries(Folder("dicom"), spec, m_Random);
  const auto run = Run("--rank 2 --backend cpu dicom out.nii.gz");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const auto input = svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ Path("dicom") }).at(0));
  const auto output = itk::ReadImage<DicomVolumeImage>(Path("out.nii.gz"));
  ExpectSameVolume(Reconstruct(input.image.GetPointer(), 2, 2), output, 1e-4, 1e-2);
}

TEST_F(Tool, NiftiInDicomOutReadsBackWithTheSameGeometry)
{
  using VolumeType = itk::Image<float, 3>;
  auto volume = RandomVolume<VolumeType>({ { 20, 18, 6 } }, 0.0, 3000.0);
  volume->SetOrigin(itk::Point<double, 3>(std::array<double, 3>{ { -90.0, 12.5, 33.0 } }.data()));
  volume->SetSpacing(itk::Vector<double, 3>(std::array<double, 3>{ { 0.9, 1.1, 3.0 } }.data()));
  itk::WriteImage(volume, Path("volume.nii.gz"));
  const auto run = Run("--rank 3 --backend cpu --format dicom volume.nii.gz as_dicom");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const auto input = itk::ReadImage<VolumeType>(Path("volume.nii.gz"));
  const auto output = svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ Path("as_dicom") }).at(0));
  ExpectSameVolume(Reconstruct(input.GetPointer(), 3, 2), output.image, 1e-4, output.slices[0].rescaleSlope / 2 + 1e-3);
}

TEST_F(Tool, ListSeriesShowsEverySeries)
{
  SeriesSpec a, b;
  a.seriesDescription = "localizer";
  b.seriesDescription = "t2 axial";
  b.seriesNumber = "8";
  WriteSeries(Folder("dicom"), a, m_Random);
  const auto written = WriteSeries(Path("dicom"), b, m_Random);
  const auto run = Run("--list-series dicom");
  EXPECT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("2 DICOM series in dicom"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("t2 axial"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(written.spec.seriesUID), std::string::npos) << run.out;
}

TEST_F(Tool, SeveralSeriesNeedAChoiceByUIDOrNumber)
{
  SeriesSpec a, b;
  a.seriesNumber = "1";
  b.seriesNumber = "2";
  b.rows = 20;
  WriteSeries(Folder("dicom"), a, m_Random);
  const auto second = WriteSeries(Path("dicom"), b, m_Random);
  const auto unchosen = Run("--rank 2 dicom out.nii.gz");
  EXPECT_EQ(unchosen.exitCode, 3);
  EXPECT_NE(unchosen.err.find("pick one with --series"), std::string::npos) << unchosen.err;
  EXPECT_FALSE(fs::exists(Path("out.nii.gz")));

  const auto byUID = Run("--rank 2 --series " + second.spec.seriesUID + " dicom by_uid.nii.gz");
  ASSERT_EQ(byUID.exitCode, 0) << byUID.err;
  EXPECT_EQ(itk::ReadImage<DicomVolumeImage>(Path("by_uid.nii.gz"))->GetLargestPossibleRegion().GetSize()[1], 20u);
  const auto byNumber = Run("--rank 2 --series 1 dicom by_number.nii.gz");
  ASSERT_EQ(byNumber.exitCode, 0) << byNumber.err;
  EXPECT_EQ(itk::ReadImage<DicomVolumeImage>(Path("by_number.nii.gz"))->GetLargestPossibleRegion().GetSize()[1], 24u);
}

TEST_F(Tool, UnreadableInputLeavesNoOutputAndTheInputUntouched)
{
  SeriesSpec spec;
  spec.rows = spec.columns = 64;
  const auto written = WriteSeries(Folder("dicom"), spec, m_Random);
  fs::resize_file(written.files[3], fs::file_size(written.files[3]) - 2000);
  const auto before = Snapshot(Path("dicom"));
  const auto run = Run("--rank 2 dicom dicom_out");
  EXPECT_EQ(run.exitCode, 3);
  EXPECT_NE(run.err.find("dicom/" + fs::path(written.files[3]).filename().string() + ": cannot be read as DICOM"),
            std::string::npos)
    << "the message names the file: " << run.err;
  EXPECT_EQ(Snapshot(Path("dicom")), before);
  for (const auto & entry : fs::directory_iterator(m_Directory))
  {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == "dicom" || name == "stdout.txt" || name == "stderr.txt") << "left behind: " << name;
  }
}

TEST_F(Tool, SeveralDicomFilesGivenWithDashIAreOneSeries)
{
  SeriesSpec spec;
  spec.slices = 4;
  const auto  written = WriteSeries(Folder("dicom"), spec, m_Random);
  std::string arguments = "--rank 2 --backend cpu";
  for (auto it = written.files.rbegin(); it != written.files.rend(); ++it)
    arguments += " -i " + *it;
  const auto run = Run(arguments + " -o list.nii.gz");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("4 files in the input files"), std::string::npos) << run.out;
}

#ifdef SVDLR_DICOM_EXAMPLE
TEST_F(Tool, DicomSeriesExampleWritesADerivedSeries)
{
  SeriesSpec spec;
  WriteSeries(Folder("dicom"), spec, m_Random);
  const auto run = Run("dicom derived 3", SVDLR_DICOM_EXAMPLE);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const auto output = svdlr_io::FindDicomSeries({ Path("derived") });
  ASSERT_EQ(output.size(), 1u);
  EXPECT_EQ(output[0].seriesDescription, "SVD rank 3 of synthetic t1");
  EXPECT_EQ(output[0].files.size(), spec.slices);
}
#endif

#endif

#ifdef SVDLR_READER_FILTER_WRITER_EXAMPLE
TEST_F(Tool, ReaderFilterWriterExampleMatchesTheFilter)
{
  using VolumeType = itk::Image<float, 3>;
  const auto volume = RandomVolume<VolumeType>({ { 18, 14, 5 } }, 1.0, 100.0);
  itk::WriteImage(volume, Path("in.mha"));
  const auto run = Run("in.mha out.mha 2", SVDLR_READER_FILTER_WRITER_EXAMPLE);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("5 slices at rank 2"), std::string::npos) << run.out;
  ExpectClose(Reconstruct(volume.GetPointer(), 2, 2).GetPointer(),
              itk::ReadImage<VolumeType>(Path("out.mha")).GetPointer(),
              1e-3);
}

#endif

} // namespace
