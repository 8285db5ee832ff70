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
#ifndef itkSVDLowRankReconstructionImageFilter_h
#define itkSVDLowRankReconstructionImageFilter_h

#include "itkImageToImageFilter.h"
#include "itkSVDLowRankEngineBridge.h"
#include "itkSVDLowRankReconstructionEnums.h"
#include "svdlr/Engine.h"
#include "svdlr/SliceStack.h"

#include <algorithm>
#include <string>
#include <vector>

namespace itk
{

/** \class SVDLowRankReconstructionImageFilter
 * \brief Replaces a 2D image, or each slice of a 3D volume, by its rank-k truncated SVD reconstruction.
 *
 * Each slice A (a matrix of rows x cols pixels) becomes A_k = U_k S_k V_kᵀ, the best rank-k approximation
 * of A in the Frobenius norm. The rank is either fixed (SetRank), chosen per slice as the fewest singular
 * values that hold a fraction of the slice's energy ||A||_F² (SetEnergyFraction), or chosen per slice from the
 * noise: the singular values above Gavish & Donoho's optimal threshold (SetNoiseSigma, or
 * SetRankSelection(GavishDonoho) to estimate σ) or above the Marchenko-Pastur noise bulk (MP-PCA, as MRtrix3's
 * dwidenoise; SetMarchenkoPasturEstimator). Ranks above min(rows, cols) are clamped; GetEffectiveRanks() reports
 * the rank each slice used and GetNoiseSigmas() the σ each slice's noise policy found.
 *
 * A 3D volume is cut into slices normal to SliceDimension (default: the last axis). The output keeps the
 * input's size, origin, spacing and direction. The filter streams along the slice axis: a downstream request
 * for some slices asks upstream for those whole slices only.
 *
 * The work runs in the ITK-free svdlr engine: on an NVIDIA GPU through CUDA (cuSOLVER and our own kernels)
 * when the module was built with it, else on the CPU through LAPACK, slices spread over ITK's threads.
 * Backend Auto falls back to the CPU, with one warning, when no GPU is usable. On the GPU, Solver chooses
 * between the exact SVD and a faster subspace iteration that computes only the leading singular values.
 *
 * Integer output pixels are rounded and clamped to the pixel type's range. NaN or Inf in the input is an
 * exception that names the slice.
 *
 * \ingroup SVDLowRankReconstruction
 */
template <typename TInputImage, typename TOutputImage = Image<float, TInputImage::ImageDimension>>
class ITK_TEMPLATE_EXPORT SVDLowRankReconstructionImageFilter : public ImageToImageFilter<TInputImage, TOutputImage>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(SVDLowRankReconstructionImageFilter);

  using Self = SVDLowRankReconstructionImageFilter;
  using Superclass = ImageToImageFilter<TInputImage, TOutputImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  svdlrNameOfClassMacro(SVDLowRankReconstructionImageFilter, ImageToImageFilter);

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;
  static_assert(ImageDimension == 2 || ImageDimension == 3,
                "SVDLowRankReconstructionImageFilter works on 2D images and 3D volumes of 2D slices");
  static_assert(TOutputImage::ImageDimension == ImageDimension, "input and output must have the same dimension");

  using InputImageType = TInputImage;
  using OutputImageType = TOutputImage;
  using InputPixelType = typename InputImageType::PixelType;
  using OutputPixelType = typename OutputImageType::PixelType;
  using OutputImageRegionType = typename OutputImageType::RegionType;

  /** The precision the engine computes in: double when either pixel type is double, else float. */
  using RealType = std::conditional_t<svdlr::WorksInDouble(std::is_same<InputPixelType, double>::value,
                                                           std::is_same<OutputPixelType, double>::value),
                                      double,
                                      float>;

  using BackendEnum = SVDLowRankReconstructionEnums::Backend;
  using SolverEnum = SVDLowRankReconstructionEnums::Solver;
  using RankSelectionEnum = SVDLowRankReconstructionEnums::RankSelection;
  using MarchenkoPasturEstimatorEnum = SVDLowRankReconstructionEnums::MarchenkoPasturEstimator;
  using SingularValuesType = std::vector<double>;

  /** Keep this many singular values per slice (at least 1; clamped to min(rows, cols)). Selects FixedRank. */
  svdlrSetRankParameterMacro(Rank, unsigned int, FixedRank);
  itkGetConstMacro(Rank, unsigned int);

  /** Keep, per slice, the fewest singular values whose squares hold at least this fraction, in (0, 1], of
   * the slice's squared Frobenius norm. Selects EnergyFraction. */
  svdlrSetRankParameterMacro(EnergyFraction, double, EnergyFraction);
  itkGetConstMacro(EnergyFraction, double);

  /** The standard deviation σ of each pixel's noise, in pixel units, for Gavish & Donoho's threshold
   * λ*(β)·sqrt(max(rows, cols))·σ; 0 (the default): estimate σ per slice from its median singular value. Finite and
   * >= 0. Selects GavishDonoho. */
  svdlrSetRankParameterMacro(NoiseSigma, double, GavishDonoho);
  itkGetConstMacro(NoiseSigma, double);

  /** How MarchenkoPastur estimates σ (default Veraart2016, dwidenoise's `-estimator Exp1`; dwidenoise 3.0 defaults to
   * Exp2, CorderoGrande2019). Selects MarchenkoPastur. */
  svdlrSetRankParameterMacro(MarchenkoPasturEstimator, MarchenkoPasturEstimatorEnum, MarchenkoPastur);
  itkGetEnumMacro(MarchenkoPasturEstimator, MarchenkoPasturEstimatorEnum);

  /** Which policy is in force: the one the last of SetRank, SetEnergyFraction, SetNoiseSigma,
   * SetMarchenkoPasturEstimator selected, or the one set here, which keeps the parameters set before (so that
   * SetRankSelection(GavishDonoho) with the default NoiseSigma estimates σ). */
  itkSetEnumMacro(RankSelection, RankSelectionEnum);
  itkGetEnumMacro(RankSelection, RankSelectionEnum);

  /** The axis normal to the slices of a 3D volume (default ImageDimension - 1). Ignored for 2D images. */
  itkSetMacro(SliceDimension, unsigned int);
  itkGetConstMacro(SliceDimension, unsigned int);

  itkSetEnumMacro(Backend, BackendEnum);
  itkGetEnumMacro(Backend, BackendEnum);

  /** How the CUDA backend finds each slice's leading singular subspace (default Auto; see
   * SVDLowRankReconstructionEnums::Solver). Subspace needs a fixed rank (SetRank). The CPU backend always
   * computes the exact SVD. */
  itkSetEnumMacro(Solver, SolverEnum);
  itkGetEnumMacro(Solver, SolverEnum);

  /** The CUDA device to run on (default 0). */
  itkSetMacro(DeviceId, int);
  itkGetConstMacro(DeviceId, int);

  /** Upper bound on the slices the engine processes at once (0: the engine chooses from free memory).
   * Progress is reported, and abort checked, after each batch. */
  itkSetMacro(MaximumSlicesPerBatch, SizeValueType);
  itkGetConstMacro(MaximumSlicesPerBatch, SizeValueType);

  /** After Update(): the singular values of each slice, descending, indexed by the slice's position along
   * SliceDimension counted from the start of the largest possible region. A slice holds all min(rows, cols)
   * values when the Exact solver computed it, but only the leading ones (a block a little wider than the
   * slice's rank) when the Subspace solver did (see GetSolverUsed()). Slices not yet computed (under
   * streaming) have none. */
  const std::vector<SingularValuesType> &
  GetSingularValues() const
  {
    return m_SingularValues;
  }

  /** After Update(): the rank each slice was reconstructed with, indexed like GetSingularValues(). */
  const std::vector<SizeValueType> &
  GetEffectiveRanks() const
  {
    return m_EffectiveRanks;
  }

  /** After Update(): the σ of each slice's noise, indexed like GetSingularValues(): estimated, or NoiseSigma when
   * given; NaN for FixedRank and EnergyFraction, which do not model noise, and for slices not yet computed. */
  const std::vector<double> &
  GetNoiseSigmas() const
  {
    return m_NoiseSigmas;
  }

  /** After Update(): which slices, indexed like GetSingularValues(), the Subspace solver's a-posteriori
   * optimality check sent to the Exact solver (redone on the GPU in the same update; see docs/cuda.md): 1 for a
   * redone slice, else 0. Their singular values hold all min(rows, cols) values. */
  const std::vector<unsigned char> &
  GetRedoneSlices() const
  {
    return m_RedoneSlices;
  }

  /** After Update(): how many slices GetRedoneSlices() marks; 0 unless the Subspace solver ran. */
  SizeValueType
  GetNumberOfSlicesRedone() const
  {
    return static_cast<SizeValueType>(std::count(m_RedoneSlices.begin(), m_RedoneSlices.end(), 1));
  }

  /** After Update(): the backend that did the work (CPU or CUDA). */
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

  /** After Update(): the solver that did the work (Exact or Subspace; always Exact on the CPU). Under
   * streaming, the solver of the last piece. */
  itkGetEnumMacro(SolverUsed, SolverEnum);

  /** Whether this build of the module has the CUDA backend. */
  static bool
  IsCUDABackendBuilt();

protected:
  SVDLowRankReconstructionImageFilter();
  ~SVDLowRankReconstructionImageFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override;

  void
  VerifyPreconditions() ITKv5_CONST override;

  void
  VerifyInputInformation() ITKv5_CONST override;

  /** Also starts the CUDA backend's set-up on a background thread as soon as the slice shape is known (before
   * an upstream reader decodes the pixels), so that a fresh process does not pay it after the reading. */
  void
  GenerateOutputInformation() override;

  /** Asks for whole slices: the requested range along SliceDimension, and everything in-plane. */
  void
  GenerateInputRequestedRegion() override;

  /** Enlarges the output request to whole slices, since each slice is computed as a whole. */
  void
  EnlargeOutputRequestedRegion(DataObject * output) override;

  void
  GenerateData() override;

private:
  /** The engine options the parameters give (without the progress and thread relays of an update). */
  svdlr::Options
  MakeEngineOptions() const;

  /** The two in-plane axes of a slice (columns first) and the axis along which slices are stacked (svdlr/SliceStack.h,
   * the rule Python follows too). */
  using SliceAxes = svdlr::SliceAxes;
  SliceAxes
  GetSliceAxes() const;

  template <typename TRegion>
  void
  EnlargeToWholeSlices(TRegion & region) const;

  unsigned int      m_Rank{ svdlr::kDefaultRank };
  double            m_EnergyFraction{ 0.9 };
  double                       m_NoiseSigma{ 0.0 };
  MarchenkoPasturEstimatorEnum m_MarchenkoPasturEstimator{ MarchenkoPasturEstimatorEnum::Veraart2016 };
  RankSelectionEnum            m_RankSelection{ RankSelectionEnum::FixedRank };
  unsigned int                 m_SliceDimension{ svdlr::DefaultSliceDimension(ImageDimension) };
  BackendEnum                  m_Backend{ BackendEnum::Auto };
  SolverEnum                   m_Solver{ SolverEnum::Auto };
  int                          m_DeviceId{ svdlr::kDefaultDeviceId };
  SizeValueType                m_MaximumSlicesPerBatch{ 0 };

  std::vector<SingularValuesType> m_SingularValues;
  std::vector<SizeValueType>      m_EffectiveRanks;
  std::vector<double>             m_NoiseSigmas;
  std::vector<unsigned char>      m_RedoneSlices;
  BackendEnum                     m_BackendUsed{ BackendEnum::CPU };
  SolverEnum                      m_SolverUsed{ SolverEnum::Exact };
  bool                            m_FallbackWarned{ false };
  bool          m_WarnOnBackendFallback{ true };
  std::string   m_BackendNotes;
};
} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkSVDLowRankReconstructionImageFilter.hxx"
#endif

#endif
