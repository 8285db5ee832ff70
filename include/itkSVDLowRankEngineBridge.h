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
#ifndef itkSVDLowRankEngineBridge_h
#define itkSVDLowRankEngineBridge_h

// What every filter of this module needs to hand work to the ITK-free svdlr engine: its enums in the engine's
// terms, ITK's thread pool as the engine's ParallelFor, the filter's progress and abort as the engine's progress
// callback, and the engine's errors as ITK exceptions. One place, so that the filters cannot drift apart.

#include "itkMacro.h"
#include "itkMultiThreaderBase.h"
#include "itkProcessObject.h"
#include "itkSVDLowRankReconstructionEnums.h"
#include "svdlr/Engine.h"
#include "svdlr/Names.h"

#include <string>

/** Defines Set<name>(value) for a rank parameter of a filter with members m_<name> and m_RankSelection, as
 * itkSetMacro does, and selects the policy the parameter belongs to: on both filters SetRank selects FixedRank,
 * SetEnergyFraction EnergyFraction, SetNoiseSigma GavishDonoho and SetMarchenkoPasturEstimator MarchenkoPastur.
 * Compared with ==, so that a NaN set twice still marks the filter modified (and is rejected later). */
#define svdlrSetRankParameterMacro(name, type, selection)                                                      \
  virtual void Set##name(type _arg)                                                                            \
  {                                                                                                             \
    itkDebugMacro("setting " #name " to " << _arg << ", rank selection " #selection);                          \
    if (!(this->m_##name == _arg) || this->m_RankSelection != RankSelectionEnum::selection)                    \
    {                                                                                                           \
      this->m_##name = _arg;                                                                                    \
      this->m_RankSelection = RankSelectionEnum::selection;                                                     \
      this->Modified();                                                                                         \
    }                                                                                                           \
  }

/** ITK's run-time type name of a filter of this module: itkOverrideGetNameOfClassMacro from ITK 5.4 on, which
 * deprecates itkTypeMacro, and itkTypeMacro on the older ITK (Debian's 5.2) the module also builds against. */
#if ITK_VERSION_MAJOR > 5 || (ITK_VERSION_MAJOR == 5 && ITK_VERSION_MINOR >= 4)
#  define svdlrNameOfClassMacro(name, superclass) itkOverrideGetNameOfClassMacro(name)
#else
#  define svdlrNameOfClassMacro(name, superclass) itkTypeMacro(name, superclass)
#endif

namespace itk
{
namespace SVDLowRankEngineBridge
{

// The module's enums list their values in the engine's order, checked here value by value, so that the conversions
// are casts.
#define svdlrSameValue(module, engine, value)                                                                  \
  (static_cast<int>(SVDLowRankReconstructionEnums::module::value) == static_cast<int>(svdlr::engine::value))
static_assert(svdlrSameValue(Backend, Backend, Auto) && svdlrSameValue(Backend, Backend, CPU) &&
                svdlrSameValue(Backend, Backend, CUDA) && svdlrSameValue(Solver, Solver, Auto) &&
                svdlrSameValue(Solver, Solver, Exact) && svdlrSameValue(Solver, Solver, Subspace),
              "Backend and Solver list their values in the engine's order");
static_assert(svdlrSameValue(RankSelection, RankPolicy::Kind, FixedRank) &&
                svdlrSameValue(RankSelection, RankPolicy::Kind, EnergyFraction) &&
                svdlrSameValue(RankSelection, RankPolicy::Kind, GavishDonoho) &&
                svdlrSameValue(RankSelection, RankPolicy::Kind, MarchenkoPastur) &&
                svdlrSameValue(RankSelection, RankPolicy::Kind, Nordic) &&
                svdlrSameValue(MarchenkoPasturEstimator, MarchenkoPasturEstimator, Veraart2016) &&
                svdlrSameValue(MarchenkoPasturEstimator, MarchenkoPasturEstimator, CorderoGrande2019),
              "RankSelection and MarchenkoPasturEstimator list their values in the engine's order");
#undef svdlrSameValue

inline svdlr::Backend
ToEngine(SVDLowRankReconstructionEnums::Backend backend)
{
  return static_cast<svdlr::Backend>(backend);
}

inline svdlr::Solver
ToEngine(SVDLowRankReconstructionEnums::Solver solver)
{
  return static_cast<svdlr::Solver>(solver);
}

inline SVDLowRankReconstructionEnums::Backend
FromEngine(svdlr::Backend backend)
{
  return backend == svdlr::Backend::CUDA ? SVDLowRankReconstructionEnums::Backend::CUDA
                                         : SVDLowRankReconstructionEnums::Backend::CPU;
}

/** The engine's rank policy for a filter's rank parameters. */
inline svdlr::RankPolicy
ToEngine(SVDLowRankReconstructionEnums::RankSelection selection, unsigned int rank, double energyFraction,
         double noiseSigma, SVDLowRankReconstructionEnums::MarchenkoPasturEstimator estimator)
{
  switch (selection)
  {
    case SVDLowRankReconstructionEnums::RankSelection::EnergyFraction:
      return svdlr::RankPolicy::Energy(energyFraction);
    case SVDLowRankReconstructionEnums::RankSelection::GavishDonoho:
      return svdlr::RankPolicy::GavishDonoho(noiseSigma);
    case SVDLowRankReconstructionEnums::RankSelection::Nordic:
      return svdlr::RankPolicy::Nordic(noiseSigma);
    case SVDLowRankReconstructionEnums::RankSelection::MarchenkoPastur:
      return svdlr::RankPolicy::MarchenkoPastur(static_cast<svdlr::MarchenkoPasturEstimator>(estimator));
    default:
      return svdlr::RankPolicy::Fixed(rank);
  }
}

constexpr SVDLowRankReconstructionEnums::RankSelection
FromEngine(svdlr::RankPolicy::Kind kind)
{
  return static_cast<SVDLowRankReconstructionEnums::RankSelection>(kind);
}

constexpr SVDLowRankReconstructionEnums::MarchenkoPasturEstimator
FromEngine(svdlr::MarchenkoPasturEstimator estimator)
{
  return static_cast<SVDLowRankReconstructionEnums::MarchenkoPasturEstimator>(estimator);
}

/** Sets `filter`'s rank parameters (either filter of this module) to the engine's `policy`, which the tools and
 * Python build from their options: its parameters first, then the selection, since each parameter's setter
 * selects its own policy. */
template <typename TFilter>
void
SetRankPolicy(TFilter * filter, const svdlr::RankPolicy & policy)
{
  filter->SetRank(static_cast<unsigned int>(policy.rank));
  filter->SetEnergyFraction(policy.energyFraction);
  filter->SetNoiseSigma(policy.noiseSigma);
  filter->SetMarchenkoPasturEstimator(FromEngine(policy.estimator));
  filter->SetRankSelection(FromEngine(policy.kind));
}

/** ITK's thread pool as the engine's ParallelFor, so that ITK's global thread settings apply to the engine. */
inline svdlr::ParallelFor
MakeParallelFor(MultiThreaderBase * threader)
{
  return [threader](std::size_t n, const std::function<void(std::size_t)> & body) {
    threader->ParallelizeArray(0, n, [&body](SizeValueType i) { body(i); }, nullptr);
  };
}

/** The filter's progress, updated between the engine's batches, and its abort flag, read there. */
inline svdlr::ProgressCallback
MakeProgress(ProcessObject * filter)
{
  return [filter](std::size_t done, std::size_t total) {
    filter->UpdateProgress(static_cast<float>(done) / static_cast<float>(total));
    return !filter->GetAbortGenerateData();
  };
}

/** The engine's rank policy for a filter's rank parameters (either filter of this module). */
template <typename TFilter>
svdlr::RankPolicy
RankPolicyOf(const TFilter & filter)
{
  return ToEngine(filter.GetRankSelection(),
                  filter.GetRank(),
                  filter.GetEnergyFraction(),
                  filter.GetNoiseSigma(),
                  filter.GetMarchenkoPasturEstimator());
}

/** What a filter's parameters may get wrong the same way on every filter, or "": its rank policy for `solver`, and
 * its DeviceId. */
template <typename TFilter>
std::string
CommonParameterProblem(const TFilter & filter, svdlr::Solver solver)
{
  const std::string policyProblem = svdlr::PolicyProblem(RankPolicyOf(filter), solver);
  if (!policyProblem.empty())
  {
    return "Rank selection: " + policyProblem;
  }
  if (filter.GetDeviceId() < 0)
  {
    return "DeviceId must be >= 0, got " + std::to_string(filter.GetDeviceId());
  }
  return {};
}

/** Fills what every engine request (svdlr::Options, svdlr::LocalDenoiseOptions) takes from its filter alike: the
 * rank policy, the backend, the device and ITK's thread count. */
template <typename TOptions, typename TFilter>
void
SetCommonOptions(TOptions & options, const TFilter & filter)
{
  options.policy = RankPolicyOf(filter);
  options.backend = ToEngine(filter.GetBackend());
  options.deviceId = filter.GetDeviceId();
  options.threads = filter.GetMultiThreader()->GetMaximumNumberOfThreads();
}

/** Connects a request made in GenerateData to the filter's update: ITK's thread pool runs the engine's parallel
 * loops, and the filter's progress and abort flag are updated and read between the engine's batches. Not for a
 * request that may outlive the update (the CUDA warm-up). */
template <typename TOptions>
void
ConnectToUpdate(TOptions & options, ProcessObject * filter)
{
  options.parallelFor = MakeParallelFor(filter->GetMultiThreader());
  options.progress = MakeProgress(filter);
}

/** Keeps the engine's notes on why the backend used is not the one asked for, and says whether the filter should
 * show them as a warning now: once per filter, and only while its WarnOnBackendFallback is on. */
inline bool
KeepBackendNotes(const std::string & notes, std::string & kept, bool & warned, bool warnOnFallback)
{
  kept = notes;
  if (notes.empty() || warned || !warnOnFallback)
  {
    return false;
  }
  warned = true;
  return true;
}

/** Rethrows an engine error as ITK does: ProcessAborted for an abort, ExceptionObject with the engine's message
 * otherwise. `between` names what the engine works through in batches ("slice batches"). */
[[noreturn]] inline void
Rethrow(const svdlr::Error & error, const char * filterName, const char * between)
{
  if (error.Code() == svdlr::ErrorCode::Aborted)
  {
    ProcessAborted aborted(__FILE__, __LINE__);
    aborted.SetDescription(std::string(filterName) + ": aborted between " + between);
    throw aborted;
  }
  throw ExceptionObject(__FILE__, __LINE__, std::string(filterName) + ": " + error.what(), ITK_LOCATION);
}

} // namespace SVDLowRankEngineBridge
} // namespace itk

#endif
