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
#include "SVDLowRankBatchPipeline.h"

#include "SVDLowRankBatchVolume.h"

namespace svdlr_batch
{
namespace
{

std::string
Describe(const BatchInput & input)
{
  if (input.source == VolumeSource::DicomSeries)
  {
    return input.path + " (DICOM series " + (input.seriesNumber.empty() ? input.seriesInstanceUID : input.seriesNumber) +
           ")";
  }
  return input.path;
}

struct StagedReconstruction : StagedItem
{
  explicit StagedReconstruction(StagedVolume staged)
    : volume(std::move(staged))
  {}
  StagedVolume volume;
};

/** A volume read into a leased (pinned) buffer, reconstructed in place on the worker's device, written back. */
class ReconstructJob : public BatchJob
{
public:
  ReconstructJob(const std::vector<BatchInput> & inputs, const std::string & outputRoot, const BatchOptions & options)
    : m_Inputs(inputs)
    , m_OutputRoot(outputRoot)
    , m_Tag(MethodTag(options.policy))
    , m_Options(options)
  {}

  std::size_t
  Count() const override
  {
    return m_Inputs.size();
  }
  std::string
  InputName(std::size_t item) const override
  {
    return Describe(m_Inputs[item]);
  }
  std::string
  OutputPath(std::size_t item) const override
  {
    return OutputPathFor(m_Inputs[item], m_OutputRoot, m_Tag);
  }
  std::vector<std::string>
  OutputSet(std::size_t item) const override
  {
    std::vector<std::string> set{ OutputPath(item) };
    if (m_Options.companions)
    {
      const auto beside = m_Options.companions(set.front());
      set.insert(set.end(), beside.begin(), beside.end());
    }
    return set;
  }
  bool
  LeasesBuffers() const override
  {
    return true; // pinned on the GPU: the engine copies straight from them, at full PCIe speed
  }
  std::unique_ptr<StagedItem>
  Read(std::size_t item, HostBufferPool & pool, VolumeResult &) override
  {
    return std::make_unique<StagedReconstruction>(ReadVolume(m_Inputs[item], item, pool));
  }
  void
  Work(StagedItem & staged, const Worker & worker, VolumeResult & result) override
  {
    svdlr::Options engine;
    engine.policy = m_Options.policy;
    engine.backend = worker.backend;
    engine.solver = m_Options.solver;
    engine.deviceId = worker.device >= 0 ? worker.device : 0;
    engine.threads = m_Options.threads;
    const svdlr::Report report = ReconstructVolume(static_cast<StagedReconstruction &>(staged).volume, engine);
    result.AddSlices(report.ranks, report.noiseSigmas);
  }
  void
  Write(StagedItem & staged, std::size_t item, VolumeResult & result) override
  {
    WriteVolume(static_cast<StagedReconstruction &>(staged).volume, m_Inputs[item], result, m_Options.policy,
                m_Options.overwrite || result.redo, m_Options.compressionLevel);
  }

private:
  const std::vector<BatchInput> & m_Inputs;
  const std::string               m_OutputRoot;
  const std::string               m_Tag;
  const BatchOptions &            m_Options;
};

} // namespace

BatchSummary
RunBatch(const std::vector<BatchInput> & inputs, const std::string & outputRoot, const BatchOptions & options)
{
  ReconstructJob job(inputs, outputRoot, options);
  return RunPipeline(job, options);
}

} // namespace svdlr_batch
