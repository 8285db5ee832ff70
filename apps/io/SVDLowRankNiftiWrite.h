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
#ifndef SVDLowRankNiftiWrite_h
#define SVDLowRankNiftiWrite_h

// How the tools write an image file: ITK's writer, except that a .nii.gz is compressed here in gzip members on every
// core (ITK 5.2 compresses on one thread at zlib's level 6, which took most of a GPU run). A scalar image is
// compressed straight from its buffer into the file, behind the header ITK's NIfTI writer gives it (taken from a copy
// of at most 2 voxels along each axis that ITK writes, its sizes set back): no uncompressed copy of the image is
// written. Other images (vectors, a part of a buffer) are written by ITK uncompressed beside the output first. The
// header fields ITK drops (NiftiHeaderFields) are set on the way, and what reached the disk is recorded (its size and
// CRC-32), so that VerifyWrittenFile checks the file against it instead of decompressing it again.

#include "SVDLowRankGzip.h"
#include "SVDLowRankInterruptCleanup.h"
#include "SVDLowRankNiftiFormat.h"

#include "itkImageFileWriter.h"
#include "itkMultiThreaderBase.h"

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace svdlr_io
{

struct ImageWriteSettings
{
  int                              gzipLevel{ 0 }; // 1 to 12; 0: kDefaultGzipLevel (SVDLowRankGzip.h)
  std::optional<NiftiHeaderFields> niftiFields;    // set in a NIfTI output's header when given
};

/** Whether `path` ends in .nii.gz (any case). */
bool
IsNiftiGzFileName(const std::string & path);

/** Where a .nii.gz's uncompressed form is written first: beside it, named for this process, ending in .nii. */
std::string
UncompressedSiblingOf(const std::string & path);

/** Sets `fields` in the header of the uncompressed NIfTI-1 file `path`, in place. Throws std::runtime_error when it is
 * not NIfTI-1 or cannot be rewritten. */
void
PatchNiftiFileHeader(const std::string & path, const NiftiHeaderFields & fields);

/** Writes the .nii.gz file `path`: `header` (the bytes before the pixels, given the settings' fields) and `pixels`,
 * in gzip members on the global ITK thread count at the settings' level, and records what was written. A write that
 * fails (a full disk) is recorded as failed rather than thrown, as ITK's writer only prints it: VerifyWrittenFile
 * then fails, naming the output the caller commits. */
void
WriteNiftiGzFile(const std::string & path, std::vector<unsigned char> header, ByteSpan pixels,
                 const ImageWriteSettings & settings);

/** The bytes before the pixels of the NIfTI-1 file `small` (written by ITK, uncompressed), with dim[1..] set to
 * `sizes`: the header ITK writes for an image of these sizes and the geometry of `small`, whose size along each axis
 * is min(size, 2) (an axis of 1 stays 1, which niftilib may drop from dim[0]). std::nullopt when `small` is not
 * such a file in this machine's byte order with `pixelBytes` per voxel, or a size does not fit NIfTI-1's 16 bits. */
std::optional<std::vector<unsigned char>>
NiftiHeaderForSizes(const std::string & small, const std::vector<std::uint64_t> & sizes, std::size_t pixelBytes);

/** A file a writer leaves beside its output for a moment: listed as a partial output (removed on a signal) while this
 * lives, removed when it goes, whatever happened. */
class ScratchFile
{
public:
  explicit ScratchFile(std::string path)
    : m_Path(std::move(path))
  {
    ListPartialOutput(m_Path);
  }
  ~ScratchFile()
  {
    std::remove(m_Path.c_str());
    UnlistPartialOutput(m_Path);
  }
  ScratchFile(const ScratchFile &) = delete;
  ScratchFile &
  operator=(const ScratchFile &) = delete;

private:
  std::string m_Path;
};

/** The header ITK's NIfTI writer gives `image` (see NiftiHeaderForSizes), through a copy of at most 2 voxels along
 * each axis with the same geometry and metadata written to `scratch`, which is removed. */
template <typename TImage>
std::optional<std::vector<unsigned char>>
ItkNiftiHeaderOf(const TImage & image, const std::string & scratch)
{
  const auto &                  largest = image.GetLargestPossibleRegion();
  typename TImage::RegionType   region = largest;
  std::vector<std::uint64_t>    sizes;
  for (unsigned int i = 0; i < TImage::ImageDimension; ++i)
  {
    sizes.push_back(largest.GetSize(i));
    region.SetSize(i, std::min<typename TImage::SizeValueType>(largest.GetSize(i), 2));
  }
  auto small = TImage::New();
  small->SetRegions(region);
  small->SetSpacing(image.GetSpacing());
  small->SetOrigin(image.GetOrigin());
  small->SetDirection(image.GetDirection());
  small->SetMetaDataDictionary(image.GetMetaDataDictionary());
  small->Allocate(true);
  const ScratchFile listed(scratch);
  itk::WriteImage(small.GetPointer(), scratch, false);
  return NiftiHeaderForSizes(scratch, sizes, sizeof(typename TImage::PixelType));
}

/** Compresses the uncompressed NIfTI file `plain` into `compressed` (header fields set, members on the global ITK
 * thread count) and records what was written. Returns false, writing nothing, when `plain` is shorter than its header
 * says (no room on the disk for it: the caller writes the compressed file another way). A write of `compressed` that
 * fails (a full disk) is recorded as failed rather than thrown, as ITK's writer only prints it: VerifyWrittenFile
 * then fails, naming the output the caller commits. */
bool
CompressNiftiFile(const std::string & plain, const std::string & compressed, const ImageWriteSettings & settings);

/** What was recorded of the file at `path` by CompressNiftiFile: std::nullopt when nothing (another writer's file),
 * else "" when the file on disk has the size and CRC-32 of what was written, or what is wrong. */
std::optional<std::string>
CheckRecordedWrite(const std::string & path);

/** Whether CheckImageFile finds the file whole. */
bool
IsCompleteImageFile(const std::string & path);

/** Sets `fields` in the header of the .nii.gz file `path` by decompressing it and compressing it again into a sibling
 * that replaces it (gzip has no room to edit in place). Throws std::runtime_error when it cannot. */
void
RewriteNiftiGzHeaderFields(const std::string & path, const NiftiHeaderFields & fields, int gzipLevel);

/** The fields of the NIfTI-1 file `path` (.nii or .nii.gz) that its outputs inherit (NiftiHeaderFields: ITK 5.2's
 * writer drops them; its reader does put the codes in the metadata dictionary, which its writer ignores);
 * std::nullopt for any other file. */
std::optional<NiftiHeaderFields>
ReadNiftiHeaderFields(const std::string & path);

/** Sets `fields` in the header of the NIfTI-1 file `path`: in place for .nii (PatchNiftiFileHeader), by rewriting it
 * for .nii.gz (RewriteNiftiGzHeaderFields, at `gzipLevel`, 0: the default). Throws std::runtime_error when the file is
 * not NIfTI-1 or cannot be rewritten. */
void
WriteNiftiHeaderFields(const std::string & path, const NiftiHeaderFields & fields, int gzipLevel = 0);

/** Writes `image` to `path` through ITK, a .nii.gz as this file's header says, and sets `settings.niftiFields` in a
 * NIfTI output's header. */
template <typename TImage>
void
WriteImageFile(const TImage * image, const std::string & path, const ImageWriteSettings & settings = {})
{
  if (!IsNiftiGzFileName(path))
  {
    auto writer = itk::ImageFileWriter<TImage>::New();
    writer->SetInput(image);
    writer->SetFileName(path);
    writer->SetUseCompression(true);
    if (settings.gzipLevel > 0)
    {
      writer->SetCompressionLevel(settings.gzipLevel); // MHA, NRRD: zlib's level
    }
    writer->Update();
    const std::string lower = path.size() >= 4 ? path.substr(path.size() - 4) : path;
    if (settings.niftiFields && (lower == ".nii" || lower == ".NII"))
    {
      PatchNiftiFileHeader(path, *settings.niftiFields);
    }
    return;
  }
  if constexpr (std::is_arithmetic<typename TImage::PixelType>::value)
  {
    if (image->GetBufferedRegion() == image->GetLargestPossibleRegion())
    {
      if (auto header = ItkNiftiHeaderOf(*image, UncompressedSiblingOf(path)))
      {
        const auto * pixels = reinterpret_cast<const unsigned char *>(image->GetBufferPointer());
        WriteNiftiGzFile(path,
                         std::move(*header),
                         { pixels, image->GetPixelContainer()->Size() * sizeof(typename TImage::PixelType) },
                         settings);
        return;
      }
    }
  }
  const std::string plain = UncompressedSiblingOf(path);
  bool compressed = false;
  {
    const ScratchFile listed(plain);
    itk::WriteImage(image, plain, false);
    compressed = CompressNiftiFile(plain, path, settings);
  }
  if (!compressed)
  {
    // No room for the uncompressed file: ITK's own writer, compressing as it writes (on one thread), as before.
    itk::WriteImage(image, path, true);
    if (settings.niftiFields && IsCompleteImageFile(path)) // a short one is left for VerifyWrittenFile to name
    {
      RewriteNiftiGzHeaderFields(path, *settings.niftiFields, settings.gzipLevel);
    }
  }
}

} // namespace svdlr_io

#endif
