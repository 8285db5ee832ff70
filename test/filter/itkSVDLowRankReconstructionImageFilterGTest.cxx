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
// SVDLowRankReconstructionImageFilter: behaviour inside ITK pipelines, on synthetic and real MRI.
#include "itkSVDLowRankReconstructionImageFilter.h"

#include "itkCommand.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkImageRegionConstIteratorWithIndex.h"
#include "itkImageRegionIterator.h"
#include "itkImageRegionIteratorWithIndex.h"
#include "itkMetaImageIOFactory.h"
#include "itkNiftiImageIOFactory.h"
#include "itkPNGImageIOFactory.h"
#include "itkStreamingImageFilter.h"
#include "svdlrTestData.h"
#include "svdlrTestMatrices.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <limits>

namespace
{
using namespace svdlr::test;

// The image IO the tests read and write. Registered explicitly because a test driver built as an ITK
// module test (ITK source tree or build tree) does not get UseITK.cmake's automatic registration.
class RegisterImageIO : public ::testing::Environment
{
public:
  void
  SetUp() override
  {
    itk::MetaImageIOFactory::RegisterOneFactory();
    itk::NiftiImageIOFactory::RegisterOneFactory();
    itk::PNGImageIOFactory::RegisterOneFactory();
  }
};
const ::testing::Environment * const registerImageIO = ::testing::AddGlobalTestEnvironment(new RegisterImageIO);

using FloatVolume = itk::Image<float, 3>;
using FloatImage2D = itk::Image<float, 2>;

template <typename TImage>
typename TImage::Pointer
ReadImage(const std::string & path)
{
  return itk::ReadImage<TImage>(path);
}

// An MRI-like synthetic volume: smooth structure (a few separable bumps) plus noise, scaled into
// [low, high], with non-trivial origin, spacing and direction.
template <typename TImage>
typename TImage::Pointer
MakeImage(const typename TImage::SizeType & size, Random & random, double low = 10.0, double high = 200.0)
{
  constexpr unsigned int D = TImage::ImageDimension;
  auto                   image = TImage::New();
  image->SetRegions(typename TImage::RegionType(size));
  typename TImage::SpacingType   spacing;
  typename TImage::PointType     origin;
  typename TImage::DirectionType direction;
  direction.SetIdentity();
  for (unsigned int d = 0; d < D; ++d)
  {
    spacing[d] = 0.5 + 0.25 * d;
    origin[d] = -10.0 * (d + 1);
  }
  // A rotation about the last axis, so direction is not the identity.
  direction(0, 0) = direction(1, 1) = std::cos(0.3);
  direction(0, 1) = -std::sin(0.3);
  direction(1, 0) = std::sin(0.3);
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
  image->Allocate();

  double phase[3][3];
  for (auto & bump : phase)
  {
    for (double & p : bump)
    {
      p = random.Uniform(0.5, 3.0);
    }
  }
  itk::ImageRegionIteratorWithIndex<TImage> it(image, image->GetLargestPossibleRegion());
  for (; !it.IsAtEnd(); ++it)
  {
    double value = 0.0;
    for (auto & bump : phase)
    {
      double product = 1.0;
      for (unsigned int d = 0; d < D; ++d)
      {
        product *= std::sin(bump[d] * (it.GetIndex()[d] + 1.0) / size[d] * 3.14159);
      }
      value += product;
    }
    const double t = std::min(1.0, std::max(0.0, 0.5 + 0.35 * value + 0.02 * random.Normal()));
    it.Set(static_cast<typename TImage::PixelType>(low + (high - low) * t));
  }
  return image;
}

// The slice of `image` normal to `axis` at `position`, as a row-major matrix (rows along the higher
// in-plane axis, columns along the lower one), the layout the filter documents.
template <typename TImage>
Matrix
SliceOf(const TImage * image, unsigned int axis, itk::IndexValueType position)
{
  const auto   region = image->GetLargestPossibleRegion();
  unsigned int colAxis = 0, rowAxis = 1;
  if (TImage::ImageDimension == 3)
  {
    colAxis = axis == 0 ? 1 : 0;
    rowAxis = axis == 2 ? 1 : 2;
  }
  Matrix                    m(region.GetSize(rowAxis), region.GetSize(colAxis));
  typename TImage::IndexType index = region.GetIndex();
  if (TImage::ImageDimension == 3)
  {
    index[axis] = position;
  }
  for (std::size_t r = 0; r < m.rows; ++r)
  {
    for (std::size_t c = 0; c < m.cols; ++c)
    {
      index[rowAxis] = region.GetIndex(rowAxis) + r;
      index[colAxis] = region.GetIndex(colAxis) + c;
      m(r, c) = static_cast<double>(image->GetPixel(index));
    }
  }
  return m;
}

// Checks every slice of `output` against the float64 truncated SVD of the same slice of `input`.
template <typename TIn, typename TOut>
void
ExpectSlicesOptimal(const TIn * input, const TOut * output, unsigned int axis, std::size_t rank, double bound)
{
  const std::size_t slices = TIn::ImageDimension == 2 ? 1 : input->GetLargestPossibleRegion().GetSize(axis);
  for (std::size_t s = 0; s < slices; ++s)
  {
    const Matrix       a = SliceOf(input, axis, static_cast<itk::IndexValueType>(s));
    const Matrix       r = SliceOf(output, axis, static_cast<itk::IndexValueType>(s));
    const ReferenceSvd reference(a);
    const double       tail = reference.TailNorm(rank);
    const double       error = DifferenceNorm(a.values, r.values);
    if (tail <= 1e-6 * (Norm(a.values) + 1.0))
    {
      // Rank-deficient or empty slice: the reconstruction must be the slice itself.
      EXPECT_LE(error, 1e-5 * (Norm(a.values) + 1.0)) << "slice " << s << " along axis " << axis;
      continue;
    }
    EXPECT_LE(error / tail, bound) << "slice " << s << " along axis " << axis;
  }
}

TEST(SVDLowRankReconstructionImageFilter, RealBrainSliceIsOptimalAtRank20)
{
  SVDLR_TEST_FILE_OR_SKIP(path, svdlr_test::ItkExampleDataPath("BrainProtonDensitySlice.png"));
  using InputImage = itk::Image<unsigned char, 2>;
  auto input = ReadImage<InputImage>(path);
  auto filter = itk::SVDLowRankReconstructionImageFilter<InputImage>::New();
  filter->SetInput(input);
  filter->SetRank(20);
  filter->Update();
  ExpectSlicesOptimal(input.GetPointer(), filter->GetOutput(), 0, 20, 1.0 + 1e-4);
  EXPECT_EQ(filter->GetEffectiveRanks(), std::vector<itk::SizeValueType>{ 20 });
}

TEST(SVDLowRankReconstructionImageFilter, Colin27SlicesAlongEveryAxisAreOptimal)
{
  SVDLR_TEST_FILE_OR_SKIP(path, svdlr_test::Colin27Path());
  auto input = ReadImage<FloatVolume>(path);
  for (unsigned int axis = 0; axis < 3; ++axis)
  {
    auto filter = itk::SVDLowRankReconstructionImageFilter<FloatVolume>::New();
    filter->SetInput(input);
    filter->SetRank(20);
    filter->SetSliceDimension(axis);
    filter->Update();
    ExpectSlicesOptimal(input.GetPointer(), filter->GetOutput(), axis, 20, 1.0 + 1e-4);
  }
}

TEST(SVDLowRankReconstructionImageFilter, OutputKeepsGeometry)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  auto input = MakeImage<FloatVolume>({ { 20, 24, 6 } }, random);
  auto filter = itk::SVDLowRankReconstructionImageFilter<FloatVolume>::New();
  filter->SetInput(input);
  filter->SetRank(3);
  filter->Update();
  const FloatVolume * output = filter->GetOutput();
  EXPECT_EQ(output->GetLargestPossibleRegion(), input->GetLargestPossibleRegion());
  EXPECT_EQ(output->GetOrigin(), input->GetOrigin());
  EXPECT_EQ(output->GetSpacing(), input->GetSpacing());
  EXPECT_EQ(output->GetDirection(), input->GetDirection());
}

TEST(SVDLowRankReconstructionImageFilter, StreamingAlongSlicesEqualsOnePiece)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  auto input = MakeImage<FloatVolume>({ { 30, 26, 11 } }, random);

  auto whole = itk::SVDLowRankReconstructionImageFilter<FloatVolume>::New();
  whole->SetInput(input);
  whole->SetRank(4);
  whole->Update();

  auto pieces = itk::SVDLowRankReconstructionImageFilter<FloatVolume>::New();
  pieces->SetInput(input);
  pieces->SetRank(4);
  auto streamer = itk::StreamingImageFilter<FloatVolume, FloatVolume>::New();
  streamer->SetInput(pieces->GetOutput());
  streamer->SetNumberOfStreamDivisions(4);
  streamer->Update();

  // The last piece asked upstream for whole slices, but only its own range of them.
  const auto lastRequest = input->GetRequestedRegion();
  EXPECT_EQ(lastRequest.GetSize(0), 30u);
  EXPECT_EQ(lastRequest.GetSize(1), 26u);
  EXPECT_LT(lastRequest.GetSize(2), 11u);

  itk::ImageRegionConstIterator<FloatVolume> a(whole->GetOutput(), whole->GetOutput()->GetLargestPossibleRegion());
  itk::ImageRegionConstIterator<FloatVolume> b(streamer->GetOutput(), streamer->GetOutput()->GetLargestPossibleRegion());
  for (; !a.IsAtEnd(); ++a, ++b)
  {
    ASSERT_EQ(a.Get(), b.Get()) << "at " << a.GetIndex();
  }
  EXPECT_EQ(pieces->GetEffectiveRanks(), whole->GetEffectiveRanks());
}

TEST(SVDLowRankReconstructionImageFilter, SliceDimensionChoosesTheAxis)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  auto input = MakeImage<FloatVolume>({ { 14, 17, 9 } }, random);
  for (unsigned int axis = 0; axis < 3; ++axis)
  {
    auto filter = itk::SVDLowRankReconstructionImageFilter<FloatVolume>::New();
    filter->SetInput(input);
    filter->SetRank(3);
    filter->SetSliceDimension(axis);
    filter->Update();
    EXPECT_EQ(filter->GetEffectiveRanks().size(), input->GetLargestPossibleRegion().GetSize(axis));
    ExpectSlicesOptimal(input.GetPointer(), filter->GetOutput(), axis, 3, 1.0 + 1e-4);
  }
}

TEST(SVDLowRankReconstructionImageFilter, NonSquareSlicesAndRowVectors)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  auto volume = MakeImage<FloatVolume>({ { 181, 217, 3 } }, random);
  auto filter = itk::SVDLowRankReconstructionImageFilter<FloatVolume>::New();
  filter->SetInput(volume);
  filter->SetRank(20);
  filter->Update();
  ExpectSlicesOptimal(volume.GetPointer(), filter->GetOutput(), 2, 20, 1.0 + 1e-4);
  EXPECT_EQ(filter->GetSingularValues()[0].size(), 181u);

  auto row = MakeImage<FloatImage2D>({ { 64, 1 } }, random);
  auto rowFilter = itk::SVDLowRankReconstructionImageFilter<FloatImage2D>::New();
  rowFilter->SetInput(row);
  rowFilter->SetRank(5);
  rowFilter->Update();
  EXPECT_EQ(rowFilter->GetEffectiveRanks()[0], 1u);
  ExpectSlicesOptimal(row.GetPointer(), rowFilter->GetOutput(), 0, 1, 1.0 + 1e-4);
}

TEST(SVDLowRankReconstructionImageFilter, EnergyFractionSelectsRanksPerSlice)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  auto input = MakeImage<FloatVolume>({ { 40, 32, 5 } }, random);
  auto filter = itk::SVDLowRankReconstructionImageFilter<FloatVolume>::New();
  filter->SetInput(input);
  filter->SetEnergyFraction(0.999);
  filter->Update();
  ASSERT_EQ(filter->GetRankSelection(), itk::SVDLowRankReconstructionEnums::RankSelection::EnergyFraction);
  for (std::size_t s = 0; s < 5; ++s)
  {
    const std::vector<double> & values = filter->GetSingularValues()[s];
    const std::size_t           k = filter->GetEffectiveRanks()[s];
    double                      total = 0.0, kept = 0.0, keptOneLess = 0.0;
    for (std::size_t i = 0; i < values.size(); ++i)
    {
      total += values[i] * values[i];
      kept += i < k ? values[i] * values[i] : 0.0;
      keptOneLess += i + 1 < k ? values[i] * values[i] : 0.0;
    }
    EXPECT_GE(kept, 0.999 * total * (1 - 1e-12)) << "slice " << s;
    EXPECT_LT(keptOneLess, 0.999 * total) << "slice " << s;
  }
}

TEST(SVDLowRankReconstructionImageFilter, CpuBackendAlwaysUsesTheExactSolver)
{
  using SolverEnum = itk::SVDLowRankReconstructionEnums::Solver;
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  auto input = MakeImage<FloatVolume>({ { 40, 32, 16 } }, random);
  for (const SolverEnum solver : { SolverEnum::Auto, SolverEnum::Exact, SolverEnum::Subspace })
  {
    auto filter = itk::SVDLowRankReconstructionImageFilter<FloatVolume>::New();
    filter->SetInput(input);
    filter->SetRank(8);
    filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
    filter->SetSolver(solver);
    filter->Update();
    EXPECT_EQ(filter->GetSolverUsed(), SolverEnum::Exact) << "solver " << solver;
    EXPECT_EQ(filter->GetNumberOfSlicesRedone(), 0u) << "solver " << solver; // only the subspace check redoes
    EXPECT_EQ(filter->GetRedoneSlices(), std::vector<unsigned char>(16, 0)) << "solver " << solver;
    for (const auto & values : filter->GetSingularValues())
    {
      EXPECT_EQ(values.size(), 32u) << "solver " << solver; // all min(rows, cols) values
    }
  }
}

// On the GPU, Auto takes the subspace solver for a float batch of >= 16 slices at a small fixed rank: only
// the leading singular values come back, and the reconstruction stays optimal.
TEST(SVDLowRankReconstructionImageFilter, AutoSolverOnTheGpuTakesTheSubspaceSolverForFloatBatches)
{
  using FilterType = itk::SVDLowRankReconstructionImageFilter<FloatVolume>;
  if (!FilterType::IsCUDABackendBuilt() || !svdlr::CudaDeviceUsable(0))
  {
    GTEST_SKIP() << "needs the CUDA backend and a usable CUDA device";
  }
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  auto input = MakeImage<FloatVolume>({ { 48, 40, 16 } }, random);
  auto filter = FilterType::New();
  filter->SetInput(input);
  filter->SetRank(8);
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CUDA);
  filter->Update();
  EXPECT_EQ(filter->GetSolverUsed(), itk::SVDLowRankReconstructionEnums::Solver::Subspace);
  ASSERT_EQ(filter->GetRedoneSlices().size(), 16u);
  for (std::size_t s = 0; s < 16; ++s)
  {
    const std::size_t values = filter->GetSingularValues()[s].size();
    if (filter->GetRedoneSlices()[s] != 0) // failed the subspace check: the exact solver's values, all of them
    {
      EXPECT_EQ(values, 40u) << "slice " << s;
    }
    else
    {
      EXPECT_GT(values, 8u) << "slice " << s;
      EXPECT_LT(values, 40u) << "slice " << s;
    }
  }
  std::printf("[ check    ] filter, 16 slices of 48 x 40 at rank 8: %zu redone by the exact solver\n",
              static_cast<std::size_t>(filter->GetNumberOfSlicesRedone()));
  ExpectSlicesOptimal(input.GetPointer(), filter->GetOutput(), 2, 8, 1.0 + 1e-4);
}

// Every supported input pixel type gives, after rounding and clamping, what the float pipeline gives.
template <typename TPixel>
class SVDLowRankReconstructionPixelTypes : public ::testing::Test
{};
using PixelTypes = ::testing::Types<unsigned char, short, unsigned short, float, double>;
TYPED_TEST_SUITE(SVDLowRankReconstructionPixelTypes, PixelTypes);

TYPED_TEST(SVDLowRankReconstructionPixelTypes, MatchesTheFloatPipelineRoundedAndClamped)
{
  using Image = itk::Image<TypeParam, 3>;
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  // Values reach the top of an unsigned char so a low-rank overshoot has to be clamped.
  auto input = MakeImage<Image>({ { 24, 20, 4 } }, random, 0.0, 255.0);

  auto typed = itk::SVDLowRankReconstructionImageFilter<Image, Image>::New();
  typed->SetInput(input);
  typed->SetRank(2);
  typed->Update();

  auto asFloat = itk::SVDLowRankReconstructionImageFilter<Image, itk::Image<double, 3>>::New();
  asFloat->SetInput(input);
  asFloat->SetRank(2);
  asFloat->Update();

  itk::ImageRegionConstIterator<Image>                  t(typed->GetOutput(), input->GetLargestPossibleRegion());
  itk::ImageRegionConstIterator<itk::Image<double, 3>> f(asFloat->GetOutput(), input->GetLargestPossibleRegion());
  const double lowest = static_cast<double>(itk::NumericTraits<TypeParam>::NonpositiveMin());
  const double highest = static_cast<double>(itk::NumericTraits<TypeParam>::max());
  const double tolerance = itk::NumericTraits<TypeParam>::is_integer ? 1.0 : 1e-3;
  for (; !t.IsAtEnd(); ++t, ++f)
  {
    const double expected = std::min(highest, std::max(lowest, f.Get()));
    ASSERT_NEAR(static_cast<double>(t.Get()), expected, tolerance) << "at " << t.GetIndex();
  }
}

// Errors: each is an itk::ExceptionObject with a message that says what is wrong.
template <typename TFilter>
std::string
UpdateError(TFilter * filter)
{
  try
  {
    filter->Update();
  }
  catch (const itk::ExceptionObject & error)
  {
    return error.GetDescription();
  }
  return "no exception";
}

class SVDLowRankReconstructionImageFilterErrors : public ::testing::Test
{
protected:
  using FilterType = itk::SVDLowRankReconstructionImageFilter<FloatVolume>;
  void
  SetUp() override
  {
    m_Input = MakeImage<FloatVolume>({ { 12, 10, 5 } }, m_Random);
    m_Filter = FilterType::New();
    m_Filter->SetInput(m_Input);
  }
  Random                 m_Random;
  ::testing::ScopedTrace m_SeedTrace{ __FILE__, __LINE__, m_Random.SeedTrace() };
  FloatVolume::Pointer   m_Input;
  FilterType::Pointer    m_Filter;
};

TEST_F(SVDLowRankReconstructionImageFilterErrors, RankZero)
{
  m_Filter->SetRank(0);
  EXPECT_NE(UpdateError(m_Filter.GetPointer()).find("rank must be at least 1, got 0"), std::string::npos);
}

TEST_F(SVDLowRankReconstructionImageFilterErrors, EnergyFractionOutsideUnitInterval)
{
  for (const double fraction : { 0.0, 1.5, -1.0 })
  {
    m_Filter->SetEnergyFraction(fraction);
    EXPECT_NE(UpdateError(m_Filter.GetPointer()).find("energy fraction must be in (0, 1]"), std::string::npos);
  }
}

TEST_F(SVDLowRankReconstructionImageFilterErrors, SubspaceSolverWithEnergyFraction)
{
  m_Filter->SetEnergyFraction(0.9);
  m_Filter->SetSolver(itk::SVDLowRankReconstructionEnums::Solver::Subspace);
  EXPECT_NE(UpdateError(m_Filter.GetPointer()).find("subspace solver needs a fixed rank"), std::string::npos);
}

TEST_F(SVDLowRankReconstructionImageFilterErrors, SliceDimensionOutOfRange)
{
  m_Filter->SetSliceDimension(3);
  EXPECT_NE(UpdateError(m_Filter.GetPointer()).find("SliceDimension must be 0, 1 or 2 for a 3D image, got 3"), std::string::npos);
}

TEST_F(SVDLowRankReconstructionImageFilterErrors, EmptyImage)
{
  auto empty = FloatVolume::New();
  empty->SetRegions(FloatVolume::RegionType(FloatVolume::SizeType{ { 0, 0, 0 } }));
  empty->Allocate();
  m_Filter->SetInput(empty);
  EXPECT_NE(UpdateError(m_Filter.GetPointer()).find("input image is empty"), std::string::npos);
}

TEST_F(SVDLowRankReconstructionImageFilterErrors, NonFiniteInputNamesTheSlice)
{
  m_Input->SetPixel({ { 3, 4, 2 } }, std::numeric_limits<float>::quiet_NaN());
  const std::string message = UpdateError(m_Filter.GetPointer());
  EXPECT_NE(message.find("Input slice 2 along axis 2 (z) contains NaN or Inf"), std::string::npos) << message;
}

TEST_F(SVDLowRankReconstructionImageFilterErrors, CudaRequestedWithoutCudaBuildOrDevice)
{
  m_Filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CUDA);
  if (FilterType::IsCUDABackendBuilt() && svdlr::CudaDeviceUsable(0))
  {
    GTEST_SKIP() << "this machine has a usable CUDA device";
  }
  const std::string message = UpdateError(m_Filter.GetPointer());
  EXPECT_NE(message.find(FilterType::IsCUDABackendBuilt() ? "CUDA backend requested but unavailable"
                                                          : "has no CUDA backend"),
            std::string::npos)
    << message;
}

TEST_F(SVDLowRankReconstructionImageFilterErrors, NothingIsWrittenAfterAnError)
{
  m_Input->SetPixel({ { 0, 0, 4 } }, std::numeric_limits<float>::infinity());
  const std::string path = ::testing::TempDir() + "svdlr_not_written.nii.gz";
  std::remove(path.c_str());
  auto writer = itk::ImageFileWriter<FloatVolume>::New();
  writer->SetInput(m_Filter->GetOutput());
  writer->SetFileName(path);
  EXPECT_THROW(writer->Update(), itk::ExceptionObject);
  EXPECT_FALSE(std::ifstream(path).good()) << path << " was written";
}

TEST(SVDLowRankReconstructionImageFilter, ProgressIsReportedPerBatchAndAbortStops)
{
  Random random;
  SCOPED_TRACE(random.SeedTrace());
  auto input = MakeImage<FloatVolume>({ { 16, 16, 8 } }, random);
  using FilterType = itk::SVDLowRankReconstructionImageFilter<FloatVolume>;
  auto filter = FilterType::New();
  filter->SetInput(input);
  filter->SetRank(2);
  filter->SetBackend(itk::SVDLowRankReconstructionEnums::Backend::CPU);
  filter->SetMaximumSlicesPerBatch(2);

  std::vector<float> progress;
  auto               recorder = [&](const itk::EventObject &) { progress.push_back(filter->GetProgress()); };
  auto               command = itk::FunctionCommand::New();
  command->SetCallback(recorder);
  filter->AddObserver(itk::ProgressEvent(), command);
  filter->Update();
  // 4 batches of 2 slices, each reported, plus ITK's own start and end events.
  EXPECT_GE(progress.size(), 4u);
  EXPECT_FLOAT_EQ(progress.back(), 1.0f);

  auto abortAtFirstBatch = itk::FunctionCommand::New();
  abortAtFirstBatch->SetCallback([&](const itk::EventObject &) {
    if (filter->GetProgress() > 0.0f && filter->GetProgress() < 1.0f)
    {
      filter->AbortGenerateDataOn();
    }
  });
  filter->AddObserver(itk::ProgressEvent(), abortAtFirstBatch);
  filter->Modified();
  EXPECT_THROW(filter->Update(), itk::ProcessAborted);
}

TEST(SVDLowRankReconstructionImageFilter, PrintSelfListsTheParameters)
{
  auto filter = itk::SVDLowRankReconstructionImageFilter<FloatVolume>::New();
  filter->SetRank(7);
  std::ostringstream text;
  filter->Print(text);
  for (const char * field : { "Rank: 7", "EnergyFraction:", "RankSelection: FixedRank", "SliceDimension: 2",
                              "Backend: Auto", "Solver: Auto", "DeviceId: 0", "MaximumSlicesPerBatch: 0",
                              "SolverUsed: Exact", "NumberOfSlicesRedone: 0" })
  {
    EXPECT_NE(text.str().find(field), std::string::npos) << field;
  }
}

} // namespace
