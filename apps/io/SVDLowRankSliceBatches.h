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
#ifndef SVDLowRankSliceBatches_h
#define SVDLowRankSliceBatches_h

// Several volumes of 2D slices (the volumes of a 4D series, or the one-slice images of a series that forms no
// volume) stacked into one batch per slice size, so that a slice-by-slice filter runs once per size rather than
// once per image, and its output split back into volumes with each one's own geometry. The stack's geometry
// means nothing: a slice filter treats every slice on its own, so stacking changes no value.

#include "itkImage.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace svdlr_io
{

template <typename TImage>
struct SliceBatch
{
  /** (volume, slice) of each slice of the stack, in stack order. */
  std::vector<std::pair<std::size_t, std::size_t>> members;
  typename TImage::Pointer                         stack;
};

/** The slices of `volumes` stacked along the third axis, one batch per slice size (columns x rows), in the
 * order of the volumes (and their slices). */
template <typename TImage>
std::vector<SliceBatch<TImage>>
StackSlicesBySize(const std::vector<const TImage *> & volumes)
{
  static_assert(TImage::ImageDimension == 3, "volumes of 2D slices");
  std::vector<SliceBatch<TImage>>                  batches;
  std::vector<std::pair<std::size_t, std::size_t>> sizes; // of each batch
  for (std::size_t v = 0; v < volumes.size(); ++v)
  {
    const auto size = volumes[v]->GetLargestPossibleRegion().GetSize();
    const auto key = std::make_pair(static_cast<std::size_t>(size[0]), static_cast<std::size_t>(size[1]));
    auto       found = std::find(sizes.begin(), sizes.end(), key);
    if (found == sizes.end())
    {
      sizes.push_back(key);
      batches.emplace_back();
      found = sizes.end() - 1;
    }
    auto & members = batches[static_cast<std::size_t>(found - sizes.begin())].members;
    for (std::size_t k = 0; k < size[2]; ++k)
    {
      members.emplace_back(v, k);
    }
  }
  for (std::size_t b = 0; b < batches.size(); ++b)
  {
    const std::size_t slicePixels = sizes[b].first * sizes[b].second;
    auto &            batch = batches[b];
    batch.stack = TImage::New();
    typename TImage::SizeType size{ { sizes[b].first, sizes[b].second, batch.members.size() } };
    batch.stack->SetRegions(typename TImage::RegionType(size));
    batch.stack->Allocate();
    for (std::size_t s = 0; s < batch.members.size(); ++s)
    {
      const auto & [v, k] = batch.members[s];
      std::copy_n(volumes[v]->GetBufferPointer() + k * slicePixels,
                  slicePixels,
                  batch.stack->GetBufferPointer() + s * slicePixels);
    }
  }
  return batches;
}

/** Copies the slices of `result` (a filtered batch.stack) into `outputs[volume]` at their slice. */
template <typename TImage>
void
UnstackSlices(const SliceBatch<TImage> & batch, const TImage * result, std::vector<typename TImage::Pointer> & outputs)
{
  const auto        size = result->GetLargestPossibleRegion().GetSize();
  const std::size_t slicePixels = size[0] * size[1];
  for (std::size_t s = 0; s < batch.members.size(); ++s)
  {
    const auto & [v, k] = batch.members[s];
    std::copy_n(
      result->GetBufferPointer() + s * slicePixels, slicePixels, outputs[v]->GetBufferPointer() + k * slicePixels);
  }
}

/** A volume with the geometry of `like` and its own buffer (the filtered copy of a part). */
template <typename TImage>
typename TImage::Pointer
LikeVolume(const TImage * like)
{
  auto image = TImage::New();
  image->CopyInformation(like);
  image->SetRegions(like->GetLargestPossibleRegion());
  image->Allocate();
  return image;
}

} // namespace svdlr_io

#endif
