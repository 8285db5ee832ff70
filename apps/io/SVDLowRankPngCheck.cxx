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
// CheckPngFile: every chunk of a PNG decoded through libpng, with libpng's errors caught. ITK 5.2's PNGImageIO
// reads PNG headers without a setjmp of its own, so a corrupt file makes libpng abort() the whole process (found
// by apps/fuzz/SVDLowRankPngStackFuzzer); a file that decodes here decodes there too (the same libpng).
#include "SVDLowRankPngStack.h"

#include "SVDLowRankImageFileErrors.h"
#include "itkImageIOFactory.h"

#include <png.h>

#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>

namespace svdlr_io
{
namespace
{

struct DecodeResult
{
  char message[256] = "";
};

void
OnError(png_structp png, png_const_charp message)
{
  auto * result = static_cast<DecodeResult *>(png_get_error_ptr(png));
  std::snprintf(result->message, sizeof(result->message), "%s", message);
  png_longjmp(png, 1);
}

void
OnWarning(png_structp, png_const_charp)
{} // ancillary chunks with bad CRCs and the like: libpng goes on, and so does ITK

// Decodes every row of every pass into one row buffer (nothing as large as the image is allocated, so a header
// that claims a huge image with little data fails on the data, not on memory). C style on purpose: longjmp
// skips destructors, so nothing with one lives between setjmp and the libpng calls.
bool
DecodeEveryRow(std::FILE * file, DecodeResult & result)
{
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &result, OnError, OnWarning);
  if (png == nullptr)
  {
    std::snprintf(result.message, sizeof(result.message), "libpng cannot start");
    return false;
  }
  png_infop           info = png_create_info_struct(png);
  png_bytep volatile row = nullptr;
  if (info == nullptr || setjmp(png_jmpbuf(png)) != 0)
  {
    if (row != nullptr)
    {
      png_free(png, row);
    }
    png_destroy_read_struct(&png, info != nullptr ? &info : nullptr, nullptr);
    if (result.message[0] == '\0')
    {
      std::snprintf(result.message, sizeof(result.message), "libpng cannot start");
    }
    return false;
  }
  png_init_io(png, file);
  png_read_info(png, info);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const png_uint_32 height = png_get_image_height(png, info);
  row = static_cast<png_bytep>(png_malloc(png, png_get_rowbytes(png, info)));
  for (int pass = 0; pass < passes; ++pass)
  {
    for (png_uint_32 y = 0; y < height; ++y)
    {
      png_read_row(png, row, nullptr);
    }
  }
  png_read_end(png, nullptr);
  png_free(png, row);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

// Whether every chunk's length fits in the file, up to IEND. libpng allocates an ancillary chunk's claimed length
// before reading it, so a 116-byte file claiming a 2 GB sCAL chunk took 2 GB and 6 s to fail (found by the
// fuzzer); png_set_chunk_malloc_max does not cover those chunks in libpng 1.6.39.
bool
ChunksFitTheFile(std::FILE * file, long fileSize)
{
  long offset = 8; // after the signature
  while (offset + 12 <= fileSize)
  {
    unsigned char header[8];
    if (std::fseek(file, offset, SEEK_SET) != 0 || std::fread(header, 1, sizeof(header), file) != sizeof(header))
    {
      return false;
    }
    const unsigned long length = (static_cast<unsigned long>(header[0]) << 24) | (header[1] << 16) | (header[2] << 8) |
                                 static_cast<unsigned long>(header[3]);
    if (length > static_cast<unsigned long>(fileSize - offset - 12))
    {
      return false;
    }
    offset += 12 + static_cast<long>(length);
    if (std::memcmp(header + 4, "IEND", 4) == 0)
    {
      return true;
    }
  }
  return offset == fileSize; // no IEND: libpng decides whether the data are enough
}

} // namespace

void
CheckPngFile(const std::string & path)
{
  std::FILE * file = std::fopen(path.c_str(), "rb");
  if (file == nullptr)
  {
    throw PngStackError(path + ": cannot be opened");
  }
  png_byte     signature[8] = {};
  const bool   isPng = std::fread(signature, 1, sizeof(signature), file) == sizeof(signature) &&
                     png_sig_cmp(signature, 0, sizeof(signature)) == 0;
  long fileSize = -1;
  if (isPng && std::fseek(file, 0, SEEK_END) == 0)
  {
    fileSize = std::ftell(file);
  }
  const bool   chunksFit = isPng && fileSize > 0 && ChunksFitTheFile(file, fileSize);
  DecodeResult result;
  const bool   decoded = chunksFit && (std::rewind(file), DecodeEveryRow(file, result));
  std::fclose(file);
  if (!isPng)
  {
    throw PngStackError(path + ": cannot be read as PNG: it has no PNG signature");
  }
  if (!chunksFit)
  {
    throw PngStackError(path + ": cannot be read as PNG: a chunk runs past the end of the file (truncated?)");
  }
  if (!decoded)
  {
    throw PngStackError(path + ": cannot be read as PNG: " + result.message);
  }
}

itk::ImageIOBase::Pointer
CreateCheckedReadImageIO(const std::string & path)
{
  auto io = itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::ImageIOFactory::IOFileModeEnum::ReadMode);
  if (io && std::strcmp(io->GetNameOfClass(), "PNGImageIO") == 0)
  {
    try
    {
      CheckPngFile(path);
    }
    catch (const PngStackError & error)
    {
      throw InvalidImageFile(error.what());
    }
  }
  return io;
}

std::optional<std::string>
WhyHeaderUnreadable(itk::ImageIOBase * io, const std::string & path)
{
  if (io == nullptr)
  {
    return "no ITK reader for this file";
  }
  try
  {
    io->SetFileName(path);
    io->ReadImageInformation();
  }
  catch (const itk::ExceptionObject & error)
  {
    return error.GetDescription();
  }
  return std::nullopt;
}

namespace
{
// Encodes the rows into `file`; false with libpng's message on an error (a short write: a full disk). C style for
// the reason DecodeEveryRow gives.
bool
EncodeRows(std::FILE * file, const PngPixels & pixels, DecodeResult & result)
{
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &result, OnError, OnWarning);
  if (png == nullptr)
  {
    std::snprintf(result.message, sizeof(result.message), "libpng cannot start");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr || setjmp(png_jmpbuf(png)) != 0)
  {
    png_destroy_write_struct(&png, info != nullptr ? &info : nullptr);
    if (result.message[0] == '\0')
    {
      std::snprintf(result.message, sizeof(result.message), "libpng cannot start");
    }
    return false;
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, pixels.width, pixels.height, pixels.bitDepth,
               pixels.channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  if (pixels.bitDepth == 16)
  {
    png_set_swap(png); // PNG stores 16-bit samples big-endian; ours are in host order (little-endian)
  }
  const std::size_t rowBytes = static_cast<std::size_t>(pixels.width) * pixels.channels * (pixels.bitDepth / 8);
  for (png_uint_32 y = 0; y < pixels.height; ++y)
  {
    png_write_row(png, const_cast<png_bytep>(pixels.data + y * rowBytes));
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}
} // namespace

void
WritePngFile(const std::string & path, const PngPixels & pixels)
{
  std::FILE * file = std::fopen(path.c_str(), "wb");
  if (file == nullptr)
  {
    throw PngStackError(path + ": cannot be created: " + std::strerror(errno));
  }
  DecodeResult result;
  const bool   encoded = EncodeRows(file, pixels, result);
  const bool   flushed = std::fflush(file) == 0;
  const int    flushError = errno;
  const bool   closed = std::fclose(file) == 0;
  if (!encoded)
  {
    throw PngStackError(path + ": cannot be written: " + result.message);
  }
  if (!flushed || !closed)
  {
    throw PngStackError(path + ": cannot be written: " + std::strerror(flushed ? errno : flushError));
  }
}

} // namespace svdlr_io
