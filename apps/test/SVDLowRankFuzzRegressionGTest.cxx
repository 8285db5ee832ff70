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
// The inputs the fuzz targets (apps/fuzz) found to break a reader, kept in apps/fuzz/regressions/TARGET/: each
// must now give the reader's own error naming the file, and make SVDLowRankReconstructImage exit with 3, name the
// file and write nothing. The fuzz build replays the same files through the fuzz targets (ctest -R Regressions).
#include "SVDLowRankPngStack.h"
#include "svdlrFuzzFiles.h"
#include "svdlrTestScratch.h"
#include "svdlrToolRun.h"
#ifdef SVDLR_HAVE_DCMTK
#  include "SVDLowRankDicomSeries.h"
#endif

#include <gtest/gtest.h>

namespace
{
using namespace svdlr_test;

class FuzzRegressions : public RandomTest
{
protected:
  /** The reproducers of one target; never none, so that no test passes on an empty folder. */
  static std::vector<fs::path>
  Reproducers(const std::string & target)
  {
    std::vector<fs::path> files;
    for (const auto & entry : fs::directory_iterator(fs::path(SVDLR_FUZZ_REGRESSIONS_DIR) / target))
    {
      files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    EXPECT_FALSE(files.empty()) << "no reproducers for " << target;
    return files;
  }

  /** A fresh folder `name` in a fresh case folder, holding the files of `reproducer` as PREFIX0EXT, PREFIX1EXT... */
  fs::path
  Unpack(const fs::path & reproducer, const std::string & name, const std::string & prefix, const std::string & ext)
  {
    const fs::path work = fs::path(Folder(reproducer.filename().string()));
    fs::create_directories(work / name);
    const std::string bytes = ReadText(reproducer.string());
    const auto        files =
      svdlr_fuzz::SplitFiles(reinterpret_cast<const std::uint8_t *>(bytes.data()), bytes.size(), 8);
    for (std::size_t i = 0; i < files.size(); ++i)
    {
      std::ofstream(work / name / (prefix + std::to_string(i) + ext), std::ios::binary) << files[i];
    }
    return work;
  }

  /** The tool on `input` in `work`: exit code 3, a message naming `named`, and nothing written. */
  static void
  ExpectToolRefuses(const fs::path & work, const std::string & input, const std::string & named)
  {
    const auto before = Listing(work);
    const auto run = RunToolIn(work, SVDLR_TOOL, "--backend cpu " + input + " out.nii.gz");
    EXPECT_EQ(run.exitCode, 3) << run.err;
    EXPECT_NE(run.err.find("SVDLowRankReconstructImage: " + named), std::string::npos) << run.err;
    EXPECT_EQ(Listing(work), before) << "a failed run wrote something";
  }
};

TEST_F(FuzzRegressions, CorruptPngSlicesAreAnInputErrorNamingTheSlice)
{
  for (const auto & reproducer : Reproducers("SVDLowRankPngStackFuzzer"))
  {
    SCOPED_TRACE(reproducer.string());
    const fs::path work = Unpack(reproducer, "slices", "slice", ".png");
    try
    {
      const auto files = svdlr_io::FindPngSlices((work / "slices").string());
      svdlr_io::PngStackComponentType(files);
      svdlr_io::ReadPngStack<unsigned char>(files);
      ADD_FAILURE() << "read without an error";
    }
    catch (const svdlr_io::PngStackError & error)
    {
      EXPECT_NE(std::string(error.what()).find((work / "slices" / "slice").string()), std::string::npos)
        << error.what();
    }
    ExpectToolRefuses(work, "slices", "slices/slice");
    // The bad slice alone, as a single PNG file: the tool's image-file path checks it too.
    for (const auto & slice : fs::directory_iterator(work / "slices"))
    {
      try
      {
        svdlr_io::CheckPngFile(slice.path().string());
      }
      catch (const svdlr_io::PngStackError &)
      {
        const std::string name = "slices/" + slice.path().filename().string();
        ExpectToolRefuses(work, name, name);
      }
    }
  }
}

TEST_F(FuzzRegressions, DamagedImageFilesAreAnInputErrorNamingTheFile)
{
  for (const auto & [target, extension] : { std::pair<const char *, const char *>{ "SVDLowRankNiftiFuzzer", ".nii" },
                                            { "SVDLowRankMetaImageFuzzer", ".mha" },
                                            { "SVDLowRankNrrdFuzzer", ".nrrd" } })
  {
    for (const auto & reproducer : Reproducers(target))
    {
      // Both tools read an image's header on the one read path (a PNG's bytes in a .nrrd or .mha aborted the
      // denoiser in libpng, where the reconstruction tool checked them).
      for (const char * tool : { SVDLR_TOOL, SVDLR_DENOISE_TOOL })
      {
        SCOPED_TRACE(reproducer.string() + " through " + tool);
        const fs::path work = Unpack(reproducer, ".", "image", extension);
        const auto     before = Listing(work);
        const auto     run = RunToolIn(work, tool, std::string("--backend cpu image0") + extension + " out.nii.gz");
        EXPECT_EQ(run.exitCode, 3) << run.err;
        EXPECT_NE(run.err.find(std::string("image0") + extension), std::string::npos) << run.err;
        EXPECT_EQ(Listing(work), before) << "a failed run wrote something";
      }
    }
  }
}

#ifdef SVDLR_HAVE_DCMTK
TEST_F(FuzzRegressions, MalformedDicomFilesAreAnInputErrorNamingTheFile)
{
  for (const auto & reproducer : Reproducers("SVDLowRankDicomFileFuzzer"))
  {
    SCOPED_TRACE(reproducer.string());
    const fs::path    work = fs::path(Folder(reproducer.filename().string()));
    const std::string file = (work / "slice.dcm").string();
    fs::copy_file(reproducer, file);
    try
    {
      for (const auto & series : svdlr_io::FindDicomSeries({ file }))
      {
        svdlr_io::ReadDicomSeries(series);
      }
      ADD_FAILURE() << "read without an error";
    }
    catch (const svdlr_io::DicomError & error)
    {
      EXPECT_NE(std::string(error.what()).find(file), std::string::npos) << error.what();
    }
    ExpectToolRefuses(work, "slice.dcm", "slice.dcm: ");
  }
}

TEST_F(FuzzRegressions, MalformedDicomFoldersAreAnInputErrorNamingAFile)
{
  for (const auto & reproducer : Reproducers("SVDLowRankDicomFolderFuzzer"))
  {
    SCOPED_TRACE(reproducer.string());
    const fs::path work = Unpack(reproducer, "dicom", "slice", ".dcm");
    try
    {
      for (const auto & series : svdlr_io::FindDicomSeries({ (work / "dicom").string() }))
      {
        svdlr_io::ReadDicomSeries(series);
      }
      ADD_FAILURE() << "read without an error";
    }
    catch (const svdlr_io::DicomError & error)
    {
      EXPECT_NE(std::string(error.what()).find((work / "dicom" / "slice").string()), std::string::npos)
        << error.what();
    }
    ExpectToolRefuses(work, "dicom", "dicom/slice");
  }
}
#endif

} // namespace
