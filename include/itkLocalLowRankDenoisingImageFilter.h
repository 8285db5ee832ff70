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
#ifndef itkLocalLowRankDenoisingImageFilter_h
#define itkLocalLowRankDenoisingImageFilter_h

#include "itkInPlaceImageFilter.h"
#include "itkLocalLowRankDenoisingEnums.h"
#include "itkSVDLowRankEngineBridge.h"
#include "itkSVDLowRankReconstructionEnums.h"
#include "itkVectorImage.h"
#include "svdlr/LocalDenoise.h"

#include <array>
#include <string>
#include <cstdint>
#include <vector>

namespace itk
{

/** The filter's enums in the engine's terms and back, so that the filter's defaults are the engine's
 * (svdlr/Defaults.h) and the tools can convert what they parse. */
namespace LocalLowRankDenoisingBridge
{
// The enums list their values in the engine's order, checked here value by value, so that the conversions are casts.
#define svdlrSameValue(module, engine, value)                                                                  \
  (static_cast<int>(LocalLowRankDenoisingEnums::module::value) == static_cast<int>(svdlr::engine::value))
static_assert(svdlrSameValue(Aggregation, PatchAggregation, CentreVoxel) &&
                svdlrSameValue(Aggregation, PatchAggregation, OverlapAverage) &&
                svdlrSameValue(Aggregation, PatchAggregation, OverlapRankWeighted) &&
                svdlrSameValue(Aggregation, PatchAggregation, OverlapGaussianWeighted) &&
                svdlrSameValue(PatchShape, PatchShape, Cuboid) && svdlrSameValue(PatchShape, PatchShape, Sphere) &&
                svdlrSameValue(Shrinkage, Shrinkage, Hard) && svdlrSameValue(Shrinkage, Shrinkage, OptimalFrobenius) &&
                svdlrSameValue(Shrinkage, Shrinkage, Auto) &&
                svdlrSameValue(NoiseEstimator, NoiseEstimator, MarchenkoPasturMean) &&
                svdlrSameValue(NoiseEstimator, NoiseEstimator, ResidualRefit),
              "LocalLowRankDenoisingEnums list their values in the engine's order");
#undef svdlrSameValue

constexpr svdlr::PatchAggregation
ToEngine(LocalLowRankDenoisingEnums::Aggregation aggregation)
{
  return static_cast<svdlr::PatchAggregation>(aggregation);
}

constexpr LocalLowRankDenoisingEnums::Aggregation
FromEngine(svdlr::PatchAggregation aggregation)
{
  return static_cast<LocalLowRankDenoisingEnums::Aggregation>(aggregation);
}

constexpr svdlr::PatchShape
ToEngine(LocalLowRankDenoisingEnums::PatchShape shape)
{
  return static_cast<svdlr::PatchShape>(shape);
}

constexpr LocalLowRankDenoisingEnums::PatchShape
FromEngine(svdlr::PatchShape shape)
{
  return static_cast<LocalLowRankDenoisingEnums::PatchShape>(shape);
}

constexpr svdlr::Shrinkage
ToEngine(LocalLowRankDenoisingEnums::Shrinkage shrinkage)
{
  return static_cast<svdlr::Shrinkage>(shrinkage);
}

constexpr LocalLowRankDenoisingEnums::Shrinkage
FromEngine(svdlr::Shrinkage shrinkage)
{
  return static_cast<LocalLowRankDenoisingEnums::Shrinkage>(shrinkage);
}

constexpr svdlr::NoiseEstimator
ToEngine(LocalLowRankDenoisingEnums::NoiseEstimator estimator)
{
  return static_cast<svdlr::NoiseEstimator>(estimator);
}

constexpr LocalLowRankDenoisingEnums::NoiseEstimator
FromEngine(svdlr::NoiseEstimator estimator)
{
  return static_cast<LocalLowRankDenoisingEnums::NoiseEstimator>(estimator);
}
} // namespace LocalLowRankDenoisingBridge

/** How LocalLowRankDenoisingImageFilter sees a series type: a 4D itk::Image (x, y, z, volume), or a 3D
 * itk::VectorImage with one component per volume, the two forms ITK's readers give diffusion MRI in. */
template <typename TImage>
struct LocalLowRankSeriesTraits
{
  static_assert(sizeof(TImage) == 0,
                "LocalLowRankDenoisingImageFilter takes a 4D itk::Image (x, y, z, volume) or a 3D itk::VectorImage "
                "(one component per volume); for a single 3D volume use SVDLowRankReconstructionImageFilter");
};

template <typename TPixel>
struct LocalLowRankSeriesTraits<Image<TPixel, 4>>
{
  using ValueType = TPixel;
  static constexpr unsigned int SeriesDimension = 4;
  static std::size_t
  Volumes(const Image<TPixel, 4> & image)
  {
    return image.GetLargestPossibleRegion().GetSize(3);
  }
  /** Element strides of (x, y, z, volume) in the buffer. */
  static std::array<std::ptrdiff_t, 4>
  Strides(const Image<TPixel, 4> & image)
  {
    const auto & offsets = image.GetOffsetTable();
    return { 1, static_cast<std::ptrdiff_t>(offsets[1]), static_cast<std::ptrdiff_t>(offsets[2]),
             static_cast<std::ptrdiff_t>(offsets[3]) };
  }
};

template <typename TPixel>
struct LocalLowRankSeriesTraits<VectorImage<TPixel, 3>>
{
  using ValueType = TPixel;
  static constexpr unsigned int SeriesDimension = 3;
  static std::size_t
  Volumes(const VectorImage<TPixel, 3> & image)
  {
    return image.GetNumberOfComponentsPerPixel();
  }
  static std::array<std::ptrdiff_t, 4>
  Strides(const VectorImage<TPixel, 3> & image)
  {
    const auto         volumes = static_cast<std::ptrdiff_t>(image.GetNumberOfComponentsPerPixel());
    const auto &       offsets = image.GetOffsetTable();
    return { volumes, volumes * static_cast<std::ptrdiff_t>(offsets[1]),
             volumes * static_cast<std::ptrdiff_t>(offsets[2]), 1 };
  }
};

/** \class LocalLowRankDenoisingImageFilter
 * \brief Denoises a 4D series (diffusion, fMRI, multi-echo MRI) by local low-rank approximation: MP-PCA.
 *
 * Around every voxel, a patch of neighbouring voxels (a box, by default the smallest cube holding at least as
 * many voxels as there are volumes, shifted inward at the image's borders) gives a Casorati matrix of patch
 * voxels x volumes. Its singular values above the noise are kept and the rest dropped: by default the noise
 * level σ and the rank are estimated together from the Marchenko-Pastur distribution of the noise's singular
 * values (Veraart et al. 2016, as MRtrix3's dwidenoise and DIPY's mppca do); Gavish & Donoho's optimal hard
 * threshold and a fixed rank are the alternatives (SetRankSelection), and a known noise map (SetNoiseSigmaImage)
 * replaces the estimate. The voxel takes the row of its own patch (CentreVoxel) or the mean over every patch
 * that holds it (OverlapAverage). The defaults (svdlr/Defaults.h) are OverlapAverage with Gavish & Donoho's optimal
 * shrinkage of the kept singular values where σ is known, and the Cordero-Grande (2019) σ estimator; they beat
 * dwidenoise's default by 0.9-1.9 dB of PSNR on the phantoms of docs/denoising.md. CentreVoxel, Hard and
 * CorderoGrande2019 give dwidenoise 3.0's default output.
 *
 * Inputs: the series (a 4D itk::Image or a 3D itk::VectorImage), an optional mask (voxels where it is 0 are
 * copied unchanged), an optional noise map σ(x) and an optional g-factor map (SetGFactorImage). Outputs: the denoised series (output 0), the noise map σ(x)
 * the patches used (GetNoiseSigmaOutput, output 1) and the rank each voxel's patch kept (GetRankOutput, output 2), and the g-factor map used (GetGFactorOutput, output 3: given, estimated
 * with EstimateGFactor, or 1).
 * The maps have the series' spatial geometry.
 *
 * InPlaceOn() (off by default, unlike most of ITK's in-place filters: a denoised series is usually compared with its
 * input) denoises in the input's buffer when input and output types are the same: the series is then held in memory
 * once instead of twice (3 GB less host memory for a 176x176x120x200 float series), and the input's data is
 * released when the filter has run.
 *
 * The work runs in the ITK-free svdlr engine (svdlr/LocalDenoise.h): on an NVIDIA GPU through CUDA when the
 * module was built with it, else on the CPU over ITK's threads, with the same results.
 *
 * \ingroup SVDLowRankReconstruction
 */
template <typename TInputImage, typename TOutputImage = TInputImage>
class ITK_TEMPLATE_EXPORT LocalLowRankDenoisingImageFilter : public InPlaceImageFilter<TInputImage, TOutputImage>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(LocalLowRankDenoisingImageFilter);

  using Self = LocalLowRankDenoisingImageFilter;
  using Superclass = InPlaceImageFilter<TInputImage, TOutputImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  svdlrNameOfClassMacro(LocalLowRankDenoisingImageFilter, InPlaceImageFilter);

  using InputImageType = TInputImage;
  using OutputImageType = TOutputImage;
  using InputTraits = LocalLowRankSeriesTraits<TInputImage>;
  using OutputTraits = LocalLowRankSeriesTraits<TOutputImage>;
  static_assert(InputTraits::SeriesDimension == OutputTraits::SeriesDimension,
                "the input and output series must have the same form (both 4D images or both vector images)");
  using InputValueType = typename InputTraits::ValueType;
  using OutputValueType = typename OutputTraits::ValueType;

  /** The maps and the optional inputs are 3D images on the series' spatial grid. */
  using MaskImageType = Image<unsigned char, 3>;
  using NoiseSigmaImageType = Image<float, 3>;
  using RankImageType = Image<unsigned short, 3>;
  using PatchSizeType = Size<3>;

  using BackendEnum = SVDLowRankReconstructionEnums::Backend;
  using RankSelectionEnum = SVDLowRankReconstructionEnums::RankSelection;
  using MarchenkoPasturEstimatorEnum = SVDLowRankReconstructionEnums::MarchenkoPasturEstimator;
  using AggregationEnum = LocalLowRankDenoisingEnums::Aggregation;
  using PatchShapeEnum = LocalLowRankDenoisingEnums::PatchShape;
  using ShrinkageEnum = LocalLowRankDenoisingEnums::Shrinkage;
  using NoiseEstimatorEnum = LocalLowRankDenoisingEnums::NoiseEstimator;

  /** Optional: voxels where the mask is 0 are copied unchanged and get σ = 0 and rank 0 in the maps. */
  itkSetInputMacro(MaskImage, MaskImageType);
  itkGetInputMacro(MaskImage, MaskImageType);

  /** Optional: a known noise level σ per voxel (for example from noise scans), in place of the estimate. */
  itkSetInputMacro(NoiseSigmaImage, NoiseSigmaImageType);
  itkGetInputMacro(NoiseSigmaImage, NoiseSigmaImageType);

  /** Optional: a g-factor map (parallel imaging's noise amplification), finite and > 0 at every voxel
   * (svdlr::GFactorMapProblem). The series is divided by g before the low-rank step and multiplied back after, as
   * NORDIC does; the noise map output is σ g, in the input's units. A NoiseSigmaImage or noise-sigma given with it is
   * the σ of the divided series: the σ where g = 1 (svdlr::EstimateNoiseFromScan with the same map measures it).
   * Not with StabiliseMagnitude, RemoveNoiseFloor or SigmaFloorCorrection (Update() fails). */
  itkSetInputMacro(GFactorImage, NoiseSigmaImageType);
  itkGetInputMacro(GFactorImage, NoiseSigmaImageType);

  /** Estimate the g-factor map from the series (svdlr::LocalDenoiseOptions::estimateGFactor, NORDIC's estimate when
   * it is given none): a first MP-PCA pass gives σ(x); smoothed and divided by the thermal σ (the NoiseSigma or
   * NoiseSigmaImage given, the σ where g = 1; without one, the map's low percentile in the mask) it is g, and the
   * run goes on as with a GFactorImage. Off by default (svdlr::kDefaultEstimateGFactor). Not with a GFactorImage,
   * StabiliseMagnitude, RemoveNoiseFloor or SigmaFloorCorrection (Update() fails: svdlr::GFactorEstimateProblem). */
  itkSetMacro(EstimateGFactor, bool);
  itkGetConstMacro(EstimateGFactor, bool);
  itkBooleanMacro(EstimateGFactor);

  /** Patch extent in voxels along x, y, z, each odd; all 0 (the default): the smallest cube holding at least as
   * many voxels as there are volumes (5 x 5 x 5 for 65 volumes). */
  itkSetMacro(PatchSize, PatchSizeType);
  itkGetConstMacro(PatchSize, PatchSizeType);

  /** Patches are centred on every PatchStride-th voxel. 0 (the default, svdlr::kAutoPatchStride): the stride grows
   * with the patch (svdlr::PatchStrideUsed; GetPatchStrideUsed() after Update()); 1: every voxel (dense). Above 1
   * it needs an overlap aggregation and a cuboid. */
  itkSetMacro(PatchStride, unsigned int);
  itkGetConstMacro(PatchStride, unsigned int);

  /** Cuboid (the default; PatchSize) or Sphere (PatchRadius; PatchSize must stay 0): svdlr::SpherePatchUsed. */
  itkSetEnumMacro(PatchShape, PatchShapeEnum);
  itkGetEnumMacro(PatchShape, PatchShapeEnum);
  /** A sphere's radius in voxels; 0 (the default): the smallest shell holding 20/17 voxels per volume. */
  itkSetMacro(PatchRadius, double);
  itkGetConstMacro(PatchRadius, double);

  /** How each patch's rank is chosen (default MarchenkoPastur, with the CorderoGrande2019 estimator: dwidenoise
   * 3.0's default, `-estimator Exp2`; Veraart2016 is its Exp1; svdlr/Defaults.h holds both defaults).
   * EnergyFraction is accepted but rarely what a denoiser wants. As on SVDLowRankReconstructionImageFilter, the
   * policy in force is the one the last of SetRank, SetEnergyFraction, SetNoiseSigma, SetMarchenkoPasturEstimator
   * selected, or the one set here, which keeps the parameters set before. */
  itkSetEnumMacro(RankSelection, RankSelectionEnum);
  itkGetEnumMacro(RankSelection, RankSelectionEnum);
  /** How MarchenkoPastur estimates σ. Selects MarchenkoPastur. */
  svdlrSetRankParameterMacro(MarchenkoPasturEstimator, MarchenkoPasturEstimatorEnum, MarchenkoPastur);
  itkGetEnumMacro(MarchenkoPasturEstimator, MarchenkoPasturEstimatorEnum);
  /** The rank every patch keeps (at least 1). Selects FixedRank. */
  svdlrSetRankParameterMacro(Rank, unsigned int, FixedRank);
  itkGetConstMacro(Rank, unsigned int);
  /** The fraction of each patch's energy kept, in (0, 1]. Selects EnergyFraction. */
  svdlrSetRankParameterMacro(EnergyFraction, double, EnergyFraction);
  itkGetConstMacro(EnergyFraction, double);
  /** A known σ for the whole series (0: estimated per patch). Selects GavishDonoho. */
  svdlrSetRankParameterMacro(NoiseSigma, double, GavishDonoho);
  itkGetConstMacro(NoiseSigma, double);

  /** How a voxel's signal is formed: OverlapAverage (the default), CentreVoxel (dwidenoise's), or a weighted overlap
   * (OverlapRankWeighted, OverlapGaussianWeighted: LocalLowRankDenoisingEnums). */
  itkSetEnumMacro(Aggregation, AggregationEnum);
  itkGetEnumMacro(Aggregation, AggregationEnum);
  /** Auto (the default): OptimalFrobenius where the patches have σ (a noise policy or a NoiseSigmaImage), Hard
   * otherwise (a fixed rank, an energy fraction); an explicit OptimalFrobenius without σ fails in Update(). */
  itkSetEnumMacro(Shrinkage, ShrinkageEnum);
  itkGetEnumMacro(Shrinkage, ShrinkageEnum);
  /** How each patch's σ is measured once its rank is chosen, where the rank selection estimates it (default
   * svdlr::kDefaultNoiseEstimator; MarchenkoPasturMean is dwidenoise's). A NoiseSigmaImage is never refit. */
  itkSetEnumMacro(NoiseEstimator, NoiseEstimatorEnum);
  itkGetEnumMacro(NoiseEstimator, NoiseEstimatorEnum);

  itkSetEnumMacro(Backend, BackendEnum);
  itkGetEnumMacro(Backend, BackendEnum);
  itkSetMacro(DeviceId, int);
  itkGetConstMacro(DeviceId, int);
  /** Upper bound on the patches the engine decomposes at once (0: the engine chooses from free memory). */
  itkSetMacro(MaximumPatchesPerBatch, SizeValueType);
  itkGetConstMacro(MaximumPatchesPerBatch, SizeValueType);
  /** The most GPU memory, in bytes, the CUDA backend's buffers may take, or less when less is free (svdlr::
   * LocalDenoiseOptions::deviceMemoryLimit; default svdlr::kDefaultDeviceMemoryLimit, 8 GiB; 0: whatever is free).
   * A limit below what one plane and one patch need fails the update. */
  itkSetMacro(DeviceMemoryLimit, SizeValueType);
  itkGetConstMacro(DeviceMemoryLimit, SizeValueType);

  /** A magnitude input's noise model (svdlr::MagnitudeNoiseOptions, svdlr/MagnitudeNoise.h), all off by default.
   * StabiliseMagnitude: variance-stabilise for the non-central chi model of Coils coils before the low-rank step
   * and invert exactly after (Foi 2011). RemoveNoiseFloor: output the signal without the noise floor. Both take σ
   * from the NoiseSigmaImage, or from a first MP-PCA pass over the magnitude without one (the rank selection must
   * then estimate σ, else Update() fails). SigmaFloorCorrection: correct the σ estimated on the magnitude (the
   * NoiseSigmaOutput, and the σ that places the floor) for the floor's smaller spread
   * (svdlr::CorrectSigmaForNoiseFloor); Update() fails with a NoiseSigmaImage or with StabiliseMagnitude. */
  itkSetMacro(StabiliseMagnitude, bool);
  itkGetConstMacro(StabiliseMagnitude, bool);
  itkBooleanMacro(StabiliseMagnitude);
  itkSetMacro(RemoveNoiseFloor, bool);
  itkGetConstMacro(RemoveNoiseFloor, bool);
  itkBooleanMacro(RemoveNoiseFloor);
  itkSetMacro(SigmaFloorCorrection, bool);
  itkGetConstMacro(SigmaFloorCorrection, bool);
  itkBooleanMacro(SigmaFloorCorrection);
  itkSetClampMacro(Coils, unsigned int, 1, NumericTraits<unsigned int>::max());
  itkGetConstMacro(Coils, unsigned int);
  /** The input is a magnitude series: with none of the three above on, apply the automatic magnitude model
   * (svdlr::MagnitudeNoiseUsed: variance stabilisation and the floor removed where σ is estimated per patch, none
   * with a NoiseSigmaImage, a known σ, a g-factor map or a fixed rank). Default
   * svdlr::kDefaultAutomaticMagnitudeModel (on); turn it off for a real-valued series that is not a magnitude (a
   * real part, a phase-corrected series) or for the Gaussian model. GetMagnitudeNoiseUsed() says what ran. */
  itkSetMacro(AutomaticMagnitudeModel, bool);
  itkGetConstMacro(AutomaticMagnitudeModel, bool);
  itkBooleanMacro(AutomaticMagnitudeModel);

  /** Demeaning before the low-rank step (svdlr::LocalDenoiseOptions::volumeGroups): the group of each volume,
   * 0 .. groups - 1 (svdlr::DemeanGroups builds them from a Demean choice, b-values or an echo count); each voxel's
   * mean over each group is subtracted first and added back after, and the noise fit counts one degree of freedom
   * fewer per group. Empty (the default): none. Its length must be the series' volume count, checked by Update(). */
  void
  SetVolumeGroups(const std::vector<std::uint32_t> & groups)
  {
    if (groups != m_VolumeGroups)
    {
      m_VolumeGroups = groups;
      this->Modified();
    }
  }
  const std::vector<std::uint32_t> &
  GetVolumeGroups() const
  {
    return m_VolumeGroups;
  }

  /** Output 1: σ of the patch centred on each voxel (estimated or given); 0 outside the mask. */
  NoiseSigmaImageType *
  GetNoiseSigmaOutput();
  /** Output 2: the rank the patch centred on each voxel kept; 0 outside the mask. */
  RankImageType *
  GetRankOutput();
  /** Output 3: the g-factor map used: the GFactorImage, the estimate (EstimateGFactor), or 1 at every voxel. */
  NoiseSigmaImageType *
  GetGFactorOutput();

  /** After Update(): the backend that did the work, and the patch extent used. */
  itkGetEnumMacro(BackendUsed, BackendEnum);

  /** After Update(): why the backend used is not the one asked for (e.g. the CUDA backend is unavailable), or "".
   * Also shown as an ITK warning unless WarnOnBackendFallback is off: the command-line tools turn it off and print
   * this as a `note:` line of their own, without the warning's source path and object address. */
  const std::string &
  GetBackendNotes() const
  {
    return m_BackendNotes;
  }
  itkSetMacro(WarnOnBackendFallback, bool);
  itkGetConstMacro(WarnOnBackendFallback, bool);
  itkBooleanMacro(WarnOnBackendFallback);
  itkGetConstMacro(PatchSizeUsed, PatchSizeType);
  /** After Update(): the patch stride used (PatchStride 0 resolved). */
  itkGetConstMacro(PatchStrideUsed, unsigned int);
  /** After Update(): a sphere's radius used (0 for a cuboid) and the voxels of each patch. */
  itkGetConstMacro(PatchRadiusUsed, double);
  itkGetConstMacro(PatchVoxelsUsed, SizeValueType);
  /** After Update(): the shrinkage used, Hard or OptimalFrobenius (what Auto resolved to). */
  itkGetEnumMacro(ShrinkageUsed, ShrinkageEnum);
  /** After Update(): the bytes of device memory the CUDA backend's buffers took; 0 when the CPU did the work. */
  itkGetConstMacro(PeakDeviceBytesUsed, SizeValueType);
  /** After Update(): the magnitude model applied (svdlr::MagnitudeNoiseName: "vst+noise-floor", "none", ...). */
  itkGetStringMacro(MagnitudeNoiseUsed);

protected:
  LocalLowRankDenoisingImageFilter();
  ~LocalLowRankDenoisingImageFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override;

  using DataObjectPointerArraySizeType = ProcessObject::DataObjectPointerArraySizeType;
  using Superclass::MakeOutput;
  DataObject::Pointer
  MakeOutput(DataObjectPointerArraySizeType index) override;

  void
  VerifyPreconditions() ITKv5_CONST override;
  void
  VerifyInputInformation() ITKv5_CONST override;
  void
  GenerateOutputInformation() override;
  /** Patches reach across the whole image: every input and output is processed whole. */
  void
  GenerateInputRequestedRegion() override;
  void
  EnlargeOutputRequestedRegion(DataObject * output) override;
  void
  GenerateData() override;

private:
  std::array<std::size_t, 3>
  SpatialSize() const;

  PatchSizeType                m_PatchSize{ { 0, 0, 0 } };
  unsigned int                 m_PatchStride{ svdlr::kAutoPatchStride };
  PatchShapeEnum               m_PatchShape{ LocalLowRankDenoisingBridge::FromEngine(svdlr::kDefaultPatchShape) };
  double                       m_PatchRadius{ 0.0 };
  // The defaults are the engine's (svdlr/Defaults.h), as for every interface.
  RankSelectionEnum m_RankSelection{ SVDLowRankEngineBridge::FromEngine(svdlr::DefaultDenoisePolicy().kind) };
  MarchenkoPasturEstimatorEnum m_MarchenkoPasturEstimator{ SVDLowRankEngineBridge::FromEngine(
    svdlr::kDefaultMarchenkoPasturEstimator) };
  unsigned int                 m_Rank{ svdlr::kDefaultRank };
  double                       m_EnergyFraction{ 0.9 };
  double                       m_NoiseSigma{ 0.0 };
  AggregationEnum m_Aggregation{ LocalLowRankDenoisingBridge::FromEngine(svdlr::kDefaultPatchAggregation) };
  ShrinkageEnum                m_Shrinkage{ LocalLowRankDenoisingBridge::FromEngine(svdlr::kDefaultShrinkage) };
  NoiseEstimatorEnum m_NoiseEstimator{ LocalLowRankDenoisingBridge::FromEngine(svdlr::kDefaultNoiseEstimator) };
  BackendEnum                  m_Backend{ BackendEnum::Auto };
  int                          m_DeviceId{ svdlr::kDefaultDeviceId };
  SizeValueType                m_MaximumPatchesPerBatch{ 0 };
  SizeValueType                m_DeviceMemoryLimit{ svdlr::kDefaultDeviceMemoryLimit };
  bool                         m_StabiliseMagnitude{ false };
  bool                         m_RemoveNoiseFloor{ false };
  bool                         m_SigmaFloorCorrection{ false };
  unsigned int                 m_Coils{ svdlr::kDefaultCoils };
  bool                         m_AutomaticMagnitudeModel{ svdlr::kDefaultAutomaticMagnitudeModel };
  bool                         m_EstimateGFactor{ svdlr::kDefaultEstimateGFactor };
  std::vector<std::uint32_t>   m_VolumeGroups;

  BackendEnum   m_BackendUsed{ BackendEnum::CPU };
  PatchSizeType m_PatchSizeUsed{ { 0, 0, 0 } };
  unsigned int  m_PatchStrideUsed{ 0 };
  double        m_PatchRadiusUsed{ 0.0 };
  SizeValueType m_PatchVoxelsUsed{ 0 };
  ShrinkageEnum m_ShrinkageUsed{ ShrinkageEnum::Hard };
  SizeValueType m_PeakDeviceBytesUsed{ 0 };
  std::string   m_MagnitudeNoiseUsed{ "none" };
  bool          m_FallbackWarned{ false };
  bool          m_WarnOnBackendFallback{ true };
  std::string   m_BackendNotes;
};
} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkLocalLowRankDenoisingImageFilter.hxx"
#endif

#endif
