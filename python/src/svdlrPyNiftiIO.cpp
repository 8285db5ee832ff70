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
#include "svdlrPyModule.h"
#include "svdlrPyErrors.h"

#include "SVDLowRankGradientTable.h"
#include "SVDLowRankGzipFile.h"
#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankNiftiHeaderRead.h"
#include "svdlr/CpuThreads.h"
#include "SVDLowRankNiftiBytes.h"
#include "SVDLowRankNiftiFormat.h"
#include "SVDLowRankNiftiVoxels.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <sys/stat.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace svdlr
{
namespace python
{
namespace
{

/** The file's voxels as float32, in a C-ordered array of the file's extents reversed (the slowest axis first: the
 * caller's `.T` is the (x, y, z, ...) array nibabel gives), or None when the tools' reader leaves the file to ITK. */
nb::object
LoadNiftiFloat32(const std::string & path)
{
  std::unique_ptr<float[]> voxels;
  std::vector<std::size_t> shape;
  {
    nb::gil_scoped_release                        release; // no Python object, None included, until it is back
    const std::optional<svdlr_io::NiftiFileBytes> file = svdlr_io::LoadNiftiFile(path);
    if (file)
    {
      svdlr_io::CheckNiftiValues(*file, path);
      const auto & header = file->header;
      for (int axis = header.dimensions - 1; axis >= 0; --axis)
      {
        shape.push_back(static_cast<std::size_t>(header.extents[static_cast<std::size_t>(axis)]));
      }
      voxels.reset(new float[std::max<std::uint64_t>(header.Voxels(), 1)]);
      if (!svdlr_io::NiftiVoxelsAsFloat(*file, voxels.get()))
      {
        voxels.reset();
      }
    }
  }
  if (!voxels)
  {
    return nb::none();
  }
  float *     data = voxels.release();
  nb::capsule owner(data, [](void * p) noexcept { delete[] static_cast<float *>(p); });
  return nb::ndarray<nb::numpy, float>(data, shape.size(), shape.data(), owner).cast();
}

/** The tools' gradient-table rule (svdlr_io::CheckGradientTable) for a NIfTI series: its volumes (per echo: the
 * fourth axis) from its header. Returns them; ValueError for a table that disagrees or an impossible header, OSError
 * for a series whose header cannot be read. */
std::size_t
CheckGradientTable(const std::string & series, const std::optional<std::string> & bval,
                   const std::optional<std::string> & bvec)
{
  constexpr std::size_t nifti2HeaderSize = 540; // enough bytes for either header
  const auto            head = svdlr_io::ReadDecompressedHead(series, nifti2HeaderSize);
  const auto            header = svdlr_io::ParseNiftiHeader(head.data(), head.size());
  if (!header)
  {
    RaisePythonError(PyExc_OSError, "cannot read the NIfTI header of the series '" + series + "'", {});
  }
  const std::size_t            volumes = header->dimensions >= 4 ? header->extents[3] : 1;
  svdlr_io::GradientTableFiles files = svdlr_io::GradientTableBeside(series);
  files.bval = bval ? *bval : files.bval;
  files.bvec = bvec ? *bvec : files.bvec;
  svdlr_io::CheckGradientTable(files, volumes, series); // BadGradientTable, a std::invalid_argument: ValueError
  return volumes;
}

using PixelBytes = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

std::uint64_t
WriteGzip(const std::string & path, const nb::bytes & header, const PixelBytes & pixels, int level, unsigned threads)
{
  const std::string  head(header.c_str(), header.size());
  const auto *       data = static_cast<const unsigned char *>(pixels.data());
  const std::size_t  size = pixels.nbytes();
  svdlr_io::GzipFileWrite written;
  struct stat        status{};
  bool               sized = false;
  {
    nb::gil_scoped_release release;
    const unsigned used = threads > 0 ? threads : svdlr::UsableCpuThreads();
    written = svdlr_io::WriteGzipFile(
      path,
      { { reinterpret_cast<const unsigned char *>(head.data()), head.size() }, { data, size } },
      level,
      used);
    sized = written.failure.empty() && ::stat(path.c_str(), &status) == 0 &&
            static_cast<std::uint64_t>(status.st_size) == written.bytes;
  }
  if (!written.failure.empty())
  {
    RaisePythonError(PyExc_OSError, "writing '" + path + "' failed: " + written.failure, {});
  }
  if (!sized)
  {
    RaisePythonError(PyExc_OSError, "writing '" + path + "' failed: the file on disk is not the " +
                                      std::to_string(written.bytes) + " bytes written (is the disk full?)", {});
  }
  return written.bytes;
}

} // namespace

void
DefineNiftiIO(nb::module_ & module)
{
  module.def("load_nifti_float32",
             &LoadNiftiFloat32,
             "path"_a,
             "The voxels of the NIfTI file `path` (.nii or .nii.gz, decompressed once) as float32, read as the tools\n"
             "read them (scl_slope and scl_inter applied by ITK's rule), in an array of the file's extents reversed:\n"
             "take `.T` for nibabel's (x, y, z, ...) order. None for what the tools leave to ITK (a NIfTI-2 or\n"
             ".hdr/.img file, complex or RGB voxels). OSError when the data is cut short, ValueError at a NaN or Inf.");
  module.def("check_gradient_table",
             &CheckGradientTable,
             "series"_a,
             "bval"_a = nb::none(),
             "bvec"_a = nb::none(),
             "The FSL/BIDS gradient table of the NIfTI series `series` holds one entry per volume (per echo: its\n"
             "fourth axis), the rule SVDLowRankDenoiseSeries checks before its work: `bval` holds one b-value per\n"
             "volume, `bvec` 3 rows (x, y, z) of one value per volume. None: the .bval/.bvec beside the series,\n"
             "where there is one. Returns the volumes. ValueError naming the file and both counts otherwise (\"the\n"
             "b-values 'dwi.bval' hold 3 values for the 25 volumes of 'dwi.nii.gz'\"), or an impossible header;\n"
             "OSError when the series' header cannot be read.");
  module.def("write_gzip_file",
             &WriteGzip,
             "path"_a,
             "header"_a,
             "pixels"_a,
             "level"_a = 0,
             "threads"_a = 0,
             "Writes `header` then `pixels` (a C-contiguous array, its bytes as they lie) to `path` as gzip members\n"
             "compressed on `threads` threads (0: every core) at `level` (0: the tools' default), the tools' .nii.gz\n"
             "writer. Every write, the close and the size on disk are checked: OSError naming `path` otherwise.\n"
             "Returns the bytes written.");
}

} // namespace python
} // namespace svdlr
