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
#include "svdlrCudaLocalDenoiser.h"

#include "svdlrCudaCheck.h"

namespace svdlr
{
namespace detail
{
namespace
{

constexpr std::size_t kAlignment = 256;

std::size_t
Aligned(std::size_t bytes)
{
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

/** The pieces in the order they are laid out: the four double tables, the bucket starts, the σ map. */
struct Pieces
{
  std::size_t stabilised, signal, mean, expected, starts, sigma;

  Pieces(const MagnitudeTransform & host, std::size_t voxels)
    : stabilised(host.tables.stabilisedCount * sizeof(double))
    , signal(host.tables.count * sizeof(double))
    , mean(signal)
    , expected(signal)
    , starts(host.tables.bucketCount * sizeof(std::size_t))
    , sigma(voxels * sizeof(float))
  {}

  std::size_t
  Total() const
  {
    return Aligned(stabilised) + Aligned(signal) + Aligned(mean) + Aligned(expected) + Aligned(starts) + Aligned(sigma);
  }
};

} // namespace

DeviceMagnitudeTransform::DeviceMagnitudeTransform(const MagnitudeTransform * host, std::size_t voxels)
  : m_Host(host)
  , m_Voxels(voxels)
  , m_Bytes(host != nullptr ? Pieces(*host, voxels).Total() : 0)
{}

void
DeviceMagnitudeTransform::Upload(cudaStream_t stream)
{
  if (m_Host == nullptr)
  {
    return;
  }
  m_Buffer.Allocate(m_Bytes);
  const Pieces    pieces(*m_Host, m_Voxels);
  unsigned char * next = m_Buffer.Data();
  const auto      copy = [&](const void * from, std::size_t bytes) {
    SVDLR_CUDA_CHECK(cudaMemcpyAsync(next, from, bytes, cudaMemcpyHostToDevice, stream));
    void * at = next;
    next += Aligned(bytes);
    return at;
  };
  const NoncentralChiTables & tables = m_Host->tables;
  m_View = *m_Host;
  m_View.tables.stabilised = static_cast<const double *>(copy(tables.stabilised, pieces.stabilised));
  m_View.tables.signal = static_cast<const double *>(copy(tables.signal, pieces.signal));
  m_View.tables.mean = static_cast<const double *>(copy(tables.mean, pieces.mean));
  m_View.tables.expected = static_cast<const double *>(copy(tables.expected, pieces.expected));
  m_View.tables.expectedStart = static_cast<const std::size_t *>(copy(tables.expectedStart, pieces.starts));
  m_View.sigma = static_cast<const float *>(copy(m_Host->sigma, pieces.sigma));
  SVDLR_CUDA_CHECK(cudaStreamSynchronize(stream));
}

} // namespace detail
} // namespace svdlr
