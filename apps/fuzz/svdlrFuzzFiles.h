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
#ifndef svdlrFuzzFiles_h
#define svdlrFuzzFiles_h

// What the fuzz targets share. The readers take paths, not bytes (as the tool calls them), so each input is written
// to a scratch folder first: one file, or several cut apart at kFileSeparator (a folder of slices). The contract
// checked is the tool's: bad bytes give the reader's own error (exit code 3 in the tool) with a message naming
// the file; any other exception, a crash or a sanitizer report is a bug.

#include "itkImage.h"
#include "itkObject.h"
#include "vnl/algo/vnl_determinant.h"

#include <cmath>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace svdlr_fuzz
{
namespace fs = std::filesystem;

/** Cuts a fuzz input into the files of one folder; seeds/make-seeds.sh joins real files with it. */
constexpr char kFileSeparator[] = "\n--svdlr-next-file--\n";

/** The pieces of `data` between separators, at most `maxFiles` (the last one keeps the rest). */
inline std::vector<std::string>
SplitFiles(const std::uint8_t * data, std::size_t size, std::size_t maxFiles)
{
  const std::string        all(reinterpret_cast<const char *>(data), size);
  const std::string        separator(kFileSeparator);
  std::vector<std::string> files;
  std::size_t              start = 0;
  while (files.size() + 1 < maxFiles)
  {
    const std::size_t next = all.find(separator, start);
    if (next == std::string::npos)
    {
      break;
    }
    files.push_back(all.substr(start, next - start));
    start = next + separator.size();
  }
  files.push_back(all.substr(start));
  return files;
}

/** A folder of this process's own in /dev/shm (memory, not disk), emptied for every input. */
class ScratchFolder
{
public:
  explicit ScratchFolder(const std::string & name)
  {
    const fs::path base = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    m_Path = (base / ("svdlr-fuzz-" + name + "-" + std::to_string(::getpid()))).string();
    fs::remove_all(m_Path);
    fs::create_directories(m_Path);
  }
  ~ScratchFolder() { fs::remove_all(m_Path); }
  ScratchFolder(const ScratchFolder &) = delete;
  ScratchFolder &
  operator=(const ScratchFolder &) = delete;

  const std::string &
  Path() const
  {
    return m_Path;
  }

  /** Empties the folder and writes `files` into it as NAME0.EXT, NAME1.EXT, ...; returns their paths. */
  std::vector<std::string>
  Fill(const std::vector<std::string> & files, const std::string & name, const std::string & extension) const
  {
    for (const auto & entry : fs::directory_iterator(m_Path))
    {
      fs::remove_all(entry.path());
    }
    std::vector<std::string> paths;
    for (std::size_t i = 0; i < files.size(); ++i)
    {
      paths.push_back(m_Path + "/" + name + std::to_string(i) + extension);
      std::ofstream(paths.back(), std::ios::binary)
        .write(files[i].data(), static_cast<std::streamsize>(files[i].size()));
    }
    return paths;
  }

private:
  std::string m_Path;
};

/** A broken contract: report it the way libFuzzer reports a crash, so the input is kept. */
[[noreturn]] inline void
Fail(const std::string & what)
{
  std::fprintf(stderr, "svdlr-fuzz: contract broken: %s\n", what.c_str());
  std::abort();
}

/** The reader's own error must name the file (or the folder) it is about. */
inline void
ExpectNamesThePath(const std::exception & error, const std::string & path)
{
  if (std::string(error.what()).find(path) == std::string::npos)
  {
    Fail("the message does not name '" + path + "': " + error.what());
  }
}

/** What a reader returns must be usable as the tool uses it: a positive, finite spacing, a finite origin, an
 * invertible direction and finite pixels (the filters refuse NaN; a reader must not make them from bad tags). */
template <typename TPixel>
void
ExpectUsableVolume(const itk::Image<TPixel, 3> * image)
{
  if (image == nullptr || image->GetLargestPossibleRegion().GetNumberOfPixels() == 0)
  {
    Fail("a reader returned no pixels without an error");
  }
  for (unsigned int i = 0; i < 3; ++i)
  {
    if (!(image->GetSpacing()[i] > 0.0 && std::isfinite(image->GetSpacing()[i])) ||
        !std::isfinite(image->GetOrigin()[i]))
    {
      Fail("a reader returned a non-finite or non-positive spacing or origin");
    }
  }
  const double determinant = vnl_determinant(image->GetDirection().GetVnlMatrix().as_ref());
  if (!(std::abs(determinant) > 1e-6 && std::isfinite(determinant)))
  {
    Fail("a reader returned a singular direction");
  }
  const TPixel * pixels = image->GetBufferPointer();
  for (std::size_t i = 0, n = image->GetLargestPossibleRegion().GetNumberOfPixels(); i < n; ++i)
  {
    if (!std::isfinite(static_cast<double>(pixels[i])))
    {
      Fail("a reader returned a non-finite pixel");
    }
  }
}

/** What every target's LLVMFuzzerInitialize does: ITK quiet (its warnings are not findings). */
inline void
InitializeQuietly()
{
  itk::Object::GlobalWarningDisplayOff();
}

} // namespace svdlr_fuzz

#endif
