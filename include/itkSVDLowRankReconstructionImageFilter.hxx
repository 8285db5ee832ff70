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
#ifndef itkSVDLowRankReconstructionImageFilter_hxx
#define itkSVDLowRankReconstructionImageFilter_hxx

#include "itkSVDLowRankReconstructionImageFilter.h"

#include "itkMultiThreaderBase.h"
#include "itkNumericTraits.h"
#include "itkSVDLowRankEngineBridge.h"
#include "svdlr/Engine.h"
#include "svdlr/Names.h"
#include "svdlr/SliceStack.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace itk
{

namespace SVDLowRankReconstructionDetail
{
// Rounds and clamps to integer pixel types; a plain conversion for real ones.
template <typename TPixel, typename TReal>
inline TPixel
ToPixel(TReal value)
{
  if constexpr (NumericTraits<TPixel>::is_integer)
  {
    const TReal lowest = static_cast<TReal>(NumericTraits<TPixel>::NonpositiveMin());
    const TReal highest = static_cast<TReal>(NumericTraits<TPixel>::max());
    return static_cast<TPixel>(std::min(highest, std::max(lowest, std::round(value))));
  }
  else
  {
    return static_cast<TPixel>(value);
  }
}

} // namespace SVDLowRankReconstructionDetail

template <typename TInputImage, typename TOutputImage>
SVDLowRankReconstructionImageFilter<TInputImage, TOutputImage>::SVDLowRankReconstructionImageFilter()
{
  // Each slice is computed whole, by the engine's own threads or by ITK's thread pool through
  // ParallelizeArray, not by ITK's region splitting.
  this->DynamicMultiThreadingOff();
}

template <typename TInputImage, typename TOutputImage>
bool
SVDLowRankReconstructionImageFilter<TInputImage, TOutputImage>::IsCUDABackendBuilt()
{
  return svdlr::CudaBackendBuilt();
}

template <typename TInputImage, typename TOutputImage>
void
SVDLowRankReconstructionImageFilter<TInputImage, TOutputImage>::VerifyPreconditions() ITKv5_CONST
{
  Superclass::VerifyPreconditions();

  const std::string problem =
    SVDLowRankEngineBridge::CommonParameterProblem(*this, SVDLowRankEngineBridge::ToEngine(m_Solver));
  if (!problem.empty())
  {
    itkExceptionMacro(<< problem);
  }
  const std::string sliceProblem = svdlr::SliceDimensionProblem("SliceDimension", ImageDimension, m_SliceDimension);
  if (!sliceProblem.empty())
  {
    itkExceptionMacro(<< sliceProblem);
  }
  if (m_Backend == BackendEnum::CUDA && !IsCUDABackendBuilt())
  {
    itkExceptionMacro("Backend CUDA was requested, but this build of SVDLowRankReconstruction has no CUDA backend "
                      "(configure it with -DSVDLR_USE_CUDA=ON on a machine with the CUDA toolkit)");
  }
}

template <typename TInputImage, typename TOutputImage>
void
SVDLowRankReconstructionImageFilter<TInputImage, TOutputImage>::VerifyInputInformation() ITKv5_CONST
{
  Superclass::VerifyInputInformation();
  if (this->GetInput()->GetLargestPossibleRegion().GetNumberOfPixels() == 0)
  {
    itkExceptionMacro("The input image is empty (size " << this->GetInput()->GetLargestPossibleRegion().GetSize()
                                                        << ")");
  }
}

template <typename TInputImage, typename TOutputImage>
auto
SVDLowRankReconstructionImageFilter<TInputImage, TOutputImage>::GetSliceAxes() const -> SliceAxes
{
  return svdlr::SliceAxesOf(ImageDimension, m_SliceDimension);
}

template <typename TInputImage, typename TOutputImage>
template <typename TRegion>
void
SVDLowRankReconstructionImageFilter<TInputImage, TOutputImage>::EnlargeToWholeSlices(TRegion & region) const
{
  const auto &    largest = this->GetInput()->GetLargestPossibleRegion();
  const SliceAxes axes = this->GetSliceAxes();
  for (const unsigned int axis : { axes.columnAxis, axes.rowAxis })
  {
    region.SetIndex(axis, largest.GetIndex(axis));
    region.SetSize(axis, largest.GetSize(axis));
  }
}

template <typename TInputImage, typename TOutputImage>
svdlr::Options
SVDLowRankReconstructionImageFilter<TInputImage, TOutputImage>::MakeEngineOptions() const
{
  svdlr::Options options;
  SVDLowRankEngineBridge::SetCommonOptions(options, *this);
  options.solver = SVDLowRankEngineBridge::ToEngine(m_Solver);
  options.maxMatricesPerBatch = m_MaximumSlicesPerBatch;
  return options;
}

template <typename TInputImage, typename TOutputImage>
void
SVDLowRankReconstructionImageFilter<TInputImage, TOutputImage>::GenerateOutputInformation()
{
  Superclass::GenerateOutputInformation();
  const InputImageType * input = this->GetInput();
  if (input == nullptr || m_Backend == BackendEnum::CPU || !IsCUDABackendBuilt())
  {
    return;
  }
  const auto &    largest = input->GetLargestPossibleRegion();
  const SliceAxes axes = this->GetSliceAxes();
  const auto      count = ImageDimension == 2 ? SizeValueType{ 1 } : largest.GetSize(axes.stackAxis);
  svdlr::StartCudaWarmUp(count,
                         largest.GetSize(axes.rowAxis),
                         largest.GetSize(axes.columnAxis),
                         this->MakeEngineOptions(),
                         std::is_same<RealType, double>::value);
}

template <typename TInputImage, typename TOutputImage>
void
SVDLowRankReconstructionImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion()
{
  Superclass::GenerateInputRequestedRegion();
  auto * input = const_cast<InputImageType *>(this->GetInput());
  if (input == nullptr)
  {
    return;
  }
  typename InputImageType::RegionType requested = this->GetOutput()->GetRequestedRegion();
  this->EnlargeToWholeSlices(requested);
  input->SetRequestedRegion(requested);
}

template <typename TInputImage, typename TOutputImage>
void
SVDLowRankReconstructionImageFilter<TInputImage, TOutputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  auto * image = dynamic_cast<OutputImageType *>(output);
  if (image != nullptr && this->GetInput() != nullptr)
  {
    OutputImageRegionType requested = image->GetRequestedRegion();
    this->EnlargeToWholeSlices(requested);
    image->SetRequestedRegion(requested);
  }
}

template <typename TInputImage, typename TOutputImage>
void
SVDLowRankReconstructionImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  namespace detail = SVDLowRankReconstructionDetail;
  this->AllocateOutputs();

  const InputImageType *      input = this->GetInput();
  OutputImageType *           output = this->GetOutput();
  const OutputImageRegionType region = output->GetRequestedRegion();
  const SliceAxes             axes = this->GetSliceAxes();
  const SizeValueType         cols = region.GetSize(axes.columnAxis);
  const SizeValueType         rows = region.GetSize(axes.rowAxis);
  const SizeValueType         sliceCount = ImageDimension == 2 ? 1 : region.GetSize(axes.stackAxis);
  const SizeValueType         sliceSize = rows * cols;
  const auto &                largest = input->GetLargestPossibleRegion();
  const IndexValueType        firstSlice =
    ImageDimension == 2 ? 0 : region.GetIndex(axes.stackAxis) - largest.GetIndex(axes.stackAxis);

  // Strides (in pixels) of the slice layout in each image's buffer.
  const auto & inStrides = input->GetOffsetTable();
  const auto & outStrides = output->GetOffsetTable();
  const auto   inFirst = input->ComputeOffset(region.GetIndex());
  const auto   outFirst = output->ComputeOffset(region.GetIndex());
  auto         isDense = [&](const auto & strides) {
    return strides[axes.columnAxis] == 1 && static_cast<SizeValueType>(strides[axes.rowAxis]) == cols &&
           (sliceCount == 1 || static_cast<SizeValueType>(strides[axes.stackAxis]) == sliceSize);
  };

  // Zero copy when both buffers already hold the slices as dense row-major RealType matrices; otherwise
  // gather the slices into a dense working buffer and scatter the result back.
  constexpr bool inputIsReal = std::is_same<InputPixelType, RealType>::value;
  constexpr bool outputIsReal = std::is_same<OutputPixelType, RealType>::value;
  const bool     zeroCopy = inputIsReal && outputIsReal && isDense(inStrides) && isDense(outStrides);

  MultiThreaderBase *   threader = this->GetMultiThreader();
  std::vector<RealType> work;
  const RealType *      engineIn = nullptr;
  RealType *            engineOut = nullptr;
  auto forEachSlice = [&](auto && body) { threader->ParallelizeArray(0, sliceCount, body, nullptr); };
  if (zeroCopy)
  {
    engineIn = reinterpret_cast<const RealType *>(input->GetBufferPointer() + inFirst);
    engineOut = reinterpret_cast<RealType *>(output->GetBufferPointer() + outFirst);
  }
  else
  {
    work.resize(sliceCount * sliceSize);
    const InputPixelType * source = input->GetBufferPointer() + inFirst;
    forEachSlice([&](SizeValueType s) {
      const InputPixelType * slice = source + (ImageDimension == 2 ? 0 : s * inStrides[axes.stackAxis]);
      RealType *             target = work.data() + s * sliceSize;
      for (SizeValueType r = 0; r < rows; ++r)
      {
        const InputPixelType * row = slice + r * inStrides[axes.rowAxis];
        for (SizeValueType c = 0; c < cols; ++c)
        {
          *target++ = static_cast<RealType>(row[c * inStrides[axes.columnAxis]]);
        }
      }
    });
    engineIn = work.data();
    engineOut = work.data();
  }

  svdlr::Options options = this->MakeEngineOptions();
  SVDLowRankEngineBridge::ConnectToUpdate(options, this);

  const svdlr::MatrixBatch<const RealType> inBatch{ engineIn, sliceCount, rows, cols, sliceSize };
  const svdlr::MatrixBatch<RealType>       outBatch{ engineOut, sliceCount, rows, cols, sliceSize };
  svdlr::Report                            report;
  try
  {
    report = svdlr::Reconstruct(inBatch, outBatch, options);
  }
  catch (const svdlr::Error & error)
  {
    switch (error.Code())
    {
      case svdlr::ErrorCode::NonFiniteInput:
        itkExceptionMacro(<< svdlr::NonFiniteSliceMessage(
                            ImageDimension, static_cast<long long>(firstSlice + error.Matrix()), axes));
      default:
        SVDLowRankEngineBridge::Rethrow(error, this->GetNameOfClass(), "slice batches");
    }
  }

  if (!zeroCopy)
  {
    OutputPixelType * target = output->GetBufferPointer() + outFirst;
    forEachSlice([&](SizeValueType s) {
      OutputPixelType * slice = target + (ImageDimension == 2 ? 0 : s * outStrides[axes.stackAxis]);
      const RealType *  source = work.data() + s * sliceSize;
      for (SizeValueType r = 0; r < rows; ++r)
      {
        OutputPixelType * row = slice + r * outStrides[axes.rowAxis];
        for (SizeValueType c = 0; c < cols; ++c)
        {
          row[c * outStrides[axes.columnAxis]] = detail::ToPixel<OutputPixelType>(*source++);
        }
      }
    });
  }

  // Results per slice, kept across the pieces of a streamed update.
  const SizeValueType totalSlices = ImageDimension == 2 ? 1 : largest.GetSize(axes.stackAxis);
  if (m_SingularValues.size() != totalSlices)
  {
    m_SingularValues.assign(totalSlices, {});
    m_EffectiveRanks.assign(totalSlices, 0);
    m_NoiseSigmas.assign(totalSlices, std::numeric_limits<double>::quiet_NaN());
    m_RedoneSlices.assign(totalSlices, 0);
  }
  for (SizeValueType s = 0; s < sliceCount; ++s)
  {
    m_SingularValues[firstSlice + s] = std::move(report.singularValues[s]);
    m_EffectiveRanks[firstSlice + s] = report.ranks[s];
    m_NoiseSigmas[firstSlice + s] = report.noiseSigmas[s];
    m_RedoneSlices[firstSlice + s] = 0;
  }
  for (const std::size_t s : report.redoneMatrices)
  {
    m_RedoneSlices[firstSlice + s] = 1;
  }
  m_BackendUsed = SVDLowRankEngineBridge::FromEngine(report.backend);
  m_SolverUsed = report.solver == svdlr::Solver::Subspace ? SolverEnum::Subspace : SolverEnum::Exact;
  if (SVDLowRankEngineBridge::KeepBackendNotes(report.notes, m_BackendNotes, m_FallbackWarned, m_WarnOnBackendFallback))
  {
    itkWarningMacro(<< report.notes);
  }
}

template <typename TInputImage, typename TOutputImage>
void
SVDLowRankReconstructionImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Rank: " << m_Rank << std::endl;
  os << indent << "EnergyFraction: " << m_EnergyFraction << std::endl;
  os << indent << "NoiseSigma: " << m_NoiseSigma << std::endl;
  os << indent << "MarchenkoPasturEstimator: " << m_MarchenkoPasturEstimator << std::endl;
  os << indent << "RankSelection: " << m_RankSelection << std::endl;
  os << indent << "SliceDimension: " << m_SliceDimension << std::endl;
  os << indent << "Backend: " << m_Backend << std::endl;
  os << indent << "Solver: " << m_Solver << std::endl;
  os << indent << "DeviceId: " << m_DeviceId << std::endl;
  os << indent << "MaximumSlicesPerBatch: " << m_MaximumSlicesPerBatch << std::endl;
  os << indent << "BackendUsed: " << m_BackendUsed << std::endl;
  os << indent << "SolverUsed: " << m_SolverUsed << std::endl;
  os << indent << "SingularValues: " << m_SingularValues.size() << " slices" << std::endl;
  os << indent << "EffectiveRanks: " << m_EffectiveRanks.size() << " slices" << std::endl;
  os << indent << "NoiseSigmas: " << m_NoiseSigmas.size() << " slices" << std::endl;
  os << indent << "NumberOfSlicesRedone: " << this->GetNumberOfSlicesRedone() << std::endl;
  os << indent << "FallbackWarned: " << (m_FallbackWarned ? "true" : "false") << std::endl;
}

} // namespace itk

#endif
