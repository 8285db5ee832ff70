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
#ifndef itkLocalLowRankDenoisingImageFilter_hxx
#define itkLocalLowRankDenoisingImageFilter_hxx

#include "itkLocalLowRankDenoisingImageFilter.h"

#include "itkImageAlgorithm.h"
#include "itkMultiThreaderBase.h"
#include "itkSVDLowRankEngineBridge.h"
#include "svdlr/Names.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>
#include <vector>

namespace itk
{
namespace LocalLowRankDenoisingDetail
{

/** The spatial grid (x, y, z) of a series: the first three axes of a 4D image, or the whole of a vector image. */
template <typename TSeries, typename TMap>
void
CopySpatialInformation(const TSeries & series, TMap & map)
{
  typename TMap::RegionType    region;
  typename TMap::SpacingType   spacing;
  typename TMap::PointType     origin;
  typename TMap::DirectionType direction;
  const auto &                 largest = series.GetLargestPossibleRegion();
  for (unsigned int i = 0; i < 3; ++i)
  {
    region.SetIndex(i, largest.GetIndex(i));
    region.SetSize(i, largest.GetSize(i));
    spacing[i] = series.GetSpacing()[i];
    origin[i] = series.GetOrigin()[i];
    for (unsigned int j = 0; j < 3; ++j)
    {
      direction[i][j] = series.GetDirection()[i][j];
    }
  }
  map.SetLargestPossibleRegion(region);
  map.SetBufferedRegion(region);
  map.SetRequestedRegion(region);
  map.SetSpacing(spacing);
  map.SetOrigin(origin);
  map.SetDirection(direction);
}

/** The buffer's first element as the series' value type (a VectorImage's buffer holds its components). */
template <typename TSeries>
auto *
SeriesBuffer(TSeries & series)
{
  using Value = typename LocalLowRankSeriesTraits<std::remove_const_t<TSeries>>::ValueType;
  using Pointer = std::conditional_t<std::is_const<TSeries>::value, const Value *, Value *>;
  return reinterpret_cast<Pointer>(series.GetBufferPointer());
}

} // namespace LocalLowRankDenoisingDetail

template <typename TInputImage, typename TOutputImage>
LocalLowRankDenoisingImageFilter<TInputImage, TOutputImage>::LocalLowRankDenoisingImageFilter()
{
  this->AddOptionalInputName("MaskImage");
  this->AddOptionalInputName("NoiseSigmaImage");
  this->AddOptionalInputName("GFactorImage");
  this->SetNumberOfRequiredOutputs(4);
  this->SetNthOutput(1, this->MakeOutput(1));
  this->SetNthOutput(2, this->MakeOutput(2));
  this->SetNthOutput(3, this->MakeOutput(3));
  // The engine spreads patches over ITK's threads itself (ParallelizeArray); ITK's region splitting does not apply.
  this->DynamicMultiThreadingOff();
  this->InPlaceOff(); // opt-in: the caller's series stays as it was unless asked
}

template <typename TInputImage, typename TOutputImage>
DataObject::Pointer
LocalLowRankDenoisingImageFilter<TInputImage, TOutputImage>::MakeOutput(DataObjectPointerArraySizeType index)
{
  switch (index)
  {
    case 1:
    case 3:
      return NoiseSigmaImageType::New().GetPointer();
    case 2:
      return RankImageType::New().GetPointer();
    default:
      return Superclass::MakeOutput(index);
  }
}

template <typename TInputImage, typename TOutputImage>
auto
LocalLowRankDenoisingImageFilter<TInputImage, TOutputImage>::GetNoiseSigmaOutput() -> NoiseSigmaImageType *
{
  return dynamic_cast<NoiseSigmaImageType *>(this->ProcessObject::GetOutput(1));
}

template <typename TInputImage, typename TOutputImage>
auto
LocalLowRankDenoisingImageFilter<TInputImage, TOutputImage>::GetRankOutput() -> RankImageType *
{
  return dynamic_cast<RankImageType *>(this->ProcessObject::GetOutput(2));
}

template <typename TInputImage, typename TOutputImage>
auto
LocalLowRankDenoisingImageFilter<TInputImage, TOutputImage>::GetGFactorOutput() -> NoiseSigmaImageType *
{
  return dynamic_cast<NoiseSigmaImageType *>(this->ProcessObject::GetOutput(3));
}

template <typename TInputImage, typename TOutputImage>
std::array<std::size_t, 3>
LocalLowRankDenoisingImageFilter<TInputImage, TOutputImage>::SpatialSize() const
{
  const auto & size = this->GetInput()->GetLargestPossibleRegion().GetSize();
  return { size[0], size[1], size[2] };
}

template <typename TInputImage, typename TOutputImage>
void
LocalLowRankDenoisingImageFilter<TInputImage, TOutputImage>::VerifyPreconditions() ITKv5_CONST
{
  Superclass::VerifyPreconditions();
  const std::string problem = SVDLowRankEngineBridge::CommonParameterProblem(*this, svdlr::Solver::Exact);
  if (!problem.empty())
  {
    itkExceptionMacro(<< problem);
  }
  if (m_PatchStride > 1 && m_Aggregation == AggregationEnum::CentreVoxel)
  {
    itkExceptionMacro("PatchStride " << m_PatchStride
                                     << " leaves voxels without a patch of their own: it needs Aggregation "
                                        "OverlapAverage (or a weighted overlap)");
  }
  if (m_PatchShape == PatchShapeEnum::Sphere && m_PatchSize != PatchSizeType{ { 0, 0, 0 } })
  {
    itkExceptionMacro("PatchShape Sphere takes PatchRadius, not PatchSize (got " << m_PatchSize << ")");
  }
  if (m_PatchShape == PatchShapeEnum::Cuboid && m_PatchRadius != 0.0)
  {
    itkExceptionMacro("PatchRadius " << m_PatchRadius << " needs PatchShape Sphere");
  }
  if (!(std::isfinite(m_PatchRadius) && m_PatchRadius >= 0.0))
  {
    itkExceptionMacro("PatchRadius must be finite and >= 0, got " << m_PatchRadius);
  }
}

template <typename TInputImage, typename TOutputImage>
void
LocalLowRankDenoisingImageFilter<TInputImage, TOutputImage>::VerifyInputInformation() ITKv5_CONST
{
  // Not Superclass::VerifyInputInformation(): the optional inputs are 3D maps on a 4D series' spatial grid, which
  // ITK's check (same dimension, same geometry) cannot compare. The sizes are checked here instead.
  const InputImageType * input = this->GetInput();
  const auto             spatial = this->SpatialSize();
  const std::size_t      volumes = InputTraits::Volumes(*input);
  if (spatial[0] * spatial[1] * spatial[2] == 0)
  {
    itkExceptionMacro("The input series is empty (size " << input->GetLargestPossibleRegion().GetSize() << ")");
  }
  if (volumes < 2)
  {
    itkExceptionMacro("The input has " << volumes
                                       << " volume(s): a local low-rank denoiser needs a series of at least 2 "
                                          "volumes (a 4D image, or a vector image with one component per volume)");
  }
  const auto checkMap = [&](const ImageBase<3> * map, const char * name) {
    if (map == nullptr)
    {
      return;
    }
    const auto & size = map->GetLargestPossibleRegion().GetSize();
    if (size[0] != spatial[0] || size[1] != spatial[1] || size[2] != spatial[2])
    {
      itkExceptionMacro(<< name << " has size " << size << ", but the series' voxel grid is [" << spatial[0] << ", "
                        << spatial[1] << ", " << spatial[2] << "]");
    }
  };
  checkMap(this->GetMaskImage(), "MaskImage");
  checkMap(this->GetNoiseSigmaImage(), "NoiseSigmaImage");
  checkMap(this->GetGFactorImage(), "GFactorImage");
}

template <typename TInputImage, typename TOutputImage>
void
LocalLowRankDenoisingImageFilter<TInputImage, TOutputImage>::GenerateOutputInformation()
{
  // Not Superclass::GenerateOutputInformation(): it would copy the series' information into the 3D maps too,
  // which a 4D series cannot give.
  const InputImageType * input = this->GetInput();
  if (input == nullptr)
  {
    return;
  }
  this->GetOutput()->CopyInformation(input);
  LocalLowRankDenoisingDetail::CopySpatialInformation(*input, *this->GetNoiseSigmaOutput());
  LocalLowRankDenoisingDetail::CopySpatialInformation(*input, *this->GetRankOutput());
  LocalLowRankDenoisingDetail::CopySpatialInformation(*input, *this->GetGFactorOutput());
}

template <typename TInputImage, typename TOutputImage>
void
LocalLowRankDenoisingImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion()
{
  Superclass::GenerateInputRequestedRegion();
  for (const auto & name : this->GetInputNames())
  {
    if (auto * image = dynamic_cast<ImageBase<InputImageType::ImageDimension> *>(this->ProcessObject::GetInput(name)))
    {
      image->SetRequestedRegionToLargestPossibleRegion();
    }
    else if (auto * map = dynamic_cast<ImageBase<3> *>(this->ProcessObject::GetInput(name)))
    {
      map->SetRequestedRegionToLargestPossibleRegion();
    }
  }
}

template <typename TInputImage, typename TOutputImage>
void
LocalLowRankDenoisingImageFilter<TInputImage, TOutputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  output->SetRequestedRegionToLargestPossibleRegion();
}

template <typename TInputImage, typename TOutputImage>
void
LocalLowRankDenoisingImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  namespace detail = LocalLowRankDenoisingDetail;
  this->AllocateOutputs();
  const InputImageType * input = this->GetInput();
  OutputImageType *      output = this->GetOutput();
  NoiseSigmaImageType *  sigmaMap = this->GetNoiseSigmaOutput();
  RankImageType *        rankMap = this->GetRankOutput();
  NoiseSigmaImageType *  gfactorMap = this->GetGFactorOutput();
  sigmaMap->Allocate();
  rankMap->Allocate();
  gfactorMap->Allocate();

  // The engine reads and writes float series through strided views: ITK's buffers are used in place when they
  // hold floats, and converted through a float copy with the same layout otherwise.
  const std::size_t                   volumes = InputTraits::Volumes(*input);
  const std::size_t                   elements = input->GetLargestPossibleRegion().GetNumberOfPixels() *
                                   (InputTraits::SeriesDimension == 3 ? volumes : 1);
  std::vector<float>                  inputCopy;
  std::vector<float>                  outputCopy;
  svdlr::SeriesView<const float>      in{ nullptr, this->SpatialSize(), volumes, InputTraits::Strides(*input) };
  svdlr::SeriesView<float>            out{ nullptr, this->SpatialSize(), volumes, OutputTraits::Strides(*output) };
  const auto *                        inBuffer = detail::SeriesBuffer(*input);
  auto *                              outBuffer = detail::SeriesBuffer(*output);
  if constexpr (std::is_same<InputValueType, float>::value)
  {
    in.data = inBuffer;
  }
  else
  {
    inputCopy.assign(inBuffer, inBuffer + elements);
    in.data = inputCopy.data();
  }
  if constexpr (std::is_same<OutputValueType, float>::value)
  {
    out.data = outBuffer;
  }
  else
  {
    outputCopy.resize(elements);
    out.data = outputCopy.data();
  }

  std::vector<std::uint8_t> mask;
  if (const MaskImageType * maskImage = this->GetMaskImage())
  {
    const auto * begin = maskImage->GetBufferPointer();
    mask.resize(maskImage->GetBufferedRegion().GetNumberOfPixels());
    std::transform(begin, begin + mask.size(), mask.begin(), [](unsigned char v) { return v != 0 ? 1 : 0; });
  }

  svdlr::LocalDenoiseOptions options;
  SVDLowRankEngineBridge::SetCommonOptions(options, *this);
  SVDLowRankEngineBridge::ConnectToUpdate(options, this);
  for (unsigned int i = 0; i < 3; ++i)
  {
    options.patchSize[i] = m_PatchSize[i];
  }
  options.patchStride = m_PatchStride;
  options.patchShape = LocalLowRankDenoisingBridge::ToEngine(m_PatchShape);
  options.patchRadius = m_PatchRadius;
  options.aggregation = LocalLowRankDenoisingBridge::ToEngine(m_Aggregation);
  options.shrinkage = LocalLowRankDenoisingBridge::ToEngine(m_Shrinkage);
  options.noiseEstimator = LocalLowRankDenoisingBridge::ToEngine(m_NoiseEstimator);
  options.mask = mask.empty() ? nullptr : mask.data();
  options.noiseSigma = this->GetNoiseSigmaImage() ? this->GetNoiseSigmaImage()->GetBufferPointer() : nullptr;
  options.gfactor = this->GetGFactorImage() ? this->GetGFactorImage()->GetBufferPointer() : nullptr;
  options.magnitudeNoise.stabilise = m_StabiliseMagnitude;
  options.magnitudeNoise.noiseFloor = m_RemoveNoiseFloor;
  options.magnitudeNoise.sigmaFloorCorrection = m_SigmaFloorCorrection;
  options.magnitudeNoise.coils = m_Coils;
  options.magnitudeNoise.automatic = m_AutomaticMagnitudeModel;
  options.estimateGFactor = m_EstimateGFactor;
  if (!m_VolumeGroups.empty())
  {
    if (m_VolumeGroups.size() != in.volumes)
    {
      itkExceptionMacro("VolumeGroups holds " << m_VolumeGroups.size() << " groups for a series of " << in.volumes
                                              << " volumes: one per volume");
    }
    options.volumeGroups = m_VolumeGroups.data();
  }
  options.maxPatchesPerBatch = m_MaximumPatchesPerBatch;
  options.deviceMemoryLimit = static_cast<std::size_t>(m_DeviceMemoryLimit);

  svdlr::LocalDenoiseMaps maps;
  maps.noiseSigma = sigmaMap->GetBufferPointer();
  static_assert(sizeof(typename RankImageType::PixelType) == sizeof(std::uint16_t), "rank map pixels are 16-bit");
  maps.rank = reinterpret_cast<std::uint16_t *>(rankMap->GetBufferPointer());
  // The engine writes the map it uses; without one the map out is 1 (no amplification).
  gfactorMap->FillBuffer(1.0f);
  maps.gfactor = gfactorMap->GetBufferPointer();

  svdlr::LocalDenoiseReport report;
  try
  {
    report = svdlr::DenoiseLocalLowRank(in, out, maps, options);
  }
  catch (const svdlr::Error & error)
  {
    if (error.Code() == svdlr::ErrorCode::NonFiniteInput && error.Matrix() >= 0)
    {
      const auto   spatial = this->SpatialSize();
      const auto   voxel = static_cast<std::size_t>(error.Matrix());
      itkExceptionMacro("The input series holds NaN or Inf at voxel [" << voxel % spatial[0] << ", "
                                                                       << (voxel / spatial[0]) % spatial[1] << ", "
                                                                       << voxel / (spatial[0] * spatial[1]) << "]");
    }
    SVDLowRankEngineBridge::Rethrow(error, this->GetNameOfClass(), "patch batches");
  }

  if constexpr (!std::is_same<OutputValueType, float>::value)
  {
    std::transform(outputCopy.begin(), outputCopy.end(), outBuffer, [](float v) {
      return static_cast<OutputValueType>(v);
    });
  }
  m_BackendUsed = SVDLowRankEngineBridge::FromEngine(report.backend);
  m_PeakDeviceBytesUsed = static_cast<SizeValueType>(report.peakDeviceBytes);
  for (unsigned int i = 0; i < 3; ++i)
  {
    m_PatchSizeUsed[i] = report.patchSize[i];
  }
  m_PatchStrideUsed = static_cast<unsigned int>(report.patchStride);
  m_PatchRadiusUsed = report.patchRadius;
  m_PatchVoxelsUsed = static_cast<SizeValueType>(report.patchVoxels);
  m_ShrinkageUsed = LocalLowRankDenoisingBridge::FromEngine(report.shrinkage);
  m_MagnitudeNoiseUsed = svdlr::MagnitudeNoiseName(report.magnitudeNoise);
  if (SVDLowRankEngineBridge::KeepBackendNotes(report.notes, m_BackendNotes, m_FallbackWarned, m_WarnOnBackendFallback))
  {
    itkWarningMacro(<< report.notes);
  }
}

template <typename TInputImage, typename TOutputImage>
void
LocalLowRankDenoisingImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "PatchSize: " << m_PatchSize << std::endl;
  os << indent << "PatchStride: " << m_PatchStride << std::endl;
  os << indent << "PatchShape: " << m_PatchShape << std::endl;
  os << indent << "PatchRadius: " << m_PatchRadius << std::endl;
  os << indent << "RankSelection: " << m_RankSelection << std::endl;
  os << indent << "MarchenkoPasturEstimator: " << m_MarchenkoPasturEstimator << std::endl;
  os << indent << "Rank: " << m_Rank << std::endl;
  os << indent << "EnergyFraction: " << m_EnergyFraction << std::endl;
  os << indent << "NoiseSigma: " << m_NoiseSigma << std::endl;
  os << indent << "Aggregation: " << m_Aggregation << std::endl;
  os << indent << "Shrinkage: " << m_Shrinkage << std::endl;
  os << indent << "NoiseEstimator: " << m_NoiseEstimator << std::endl;
  os << indent << "StabiliseMagnitude: " << m_StabiliseMagnitude << std::endl;
  os << indent << "RemoveNoiseFloor: " << m_RemoveNoiseFloor << std::endl;
  os << indent << "AutomaticMagnitudeModel: " << m_AutomaticMagnitudeModel << std::endl;
  os << indent << "SigmaFloorCorrection: " << m_SigmaFloorCorrection << std::endl;
  os << indent << "Coils: " << m_Coils << std::endl;
  os << indent << "EstimateGFactor: " << m_EstimateGFactor << std::endl;
  os << indent << "VolumeGroups: " << m_VolumeGroups.size() << " volumes" << std::endl;
  os << indent << "Backend: " << m_Backend << std::endl;
  os << indent << "DeviceId: " << m_DeviceId << std::endl;
  os << indent << "MaximumPatchesPerBatch: " << m_MaximumPatchesPerBatch << std::endl;
  os << indent << "DeviceMemoryLimit: " << m_DeviceMemoryLimit << std::endl;
  os << indent << "BackendUsed: " << m_BackendUsed << std::endl;
  os << indent << "PatchSizeUsed: " << m_PatchSizeUsed << std::endl;
  os << indent << "PatchStrideUsed: " << m_PatchStrideUsed << std::endl;
  os << indent << "ShrinkageUsed: " << m_ShrinkageUsed << std::endl;
  os << indent << "MagnitudeNoiseUsed: " << m_MagnitudeNoiseUsed << std::endl;
  os << indent << "PeakDeviceBytesUsed: " << m_PeakDeviceBytesUsed << std::endl;
}

} // namespace itk

#endif
