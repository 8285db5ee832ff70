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
// Which files of a folder FindDicomSeries takes, and that none goes without a word (issue 23): a file that belongs
// to a series but cannot be used fails that series by name; a file that cannot be read fails the search; a file
// that is clearly no image (a report, a DICOMDIR, no DICOM at all) is left out with a note.
#include "svdlrDicomTestData.h"
#include "svdlrUnreadableFolder.h"
#include "SVDLowRankDicomFrames.h"

#include <unistd.h>

namespace
{
using namespace svdlr_test;

class DicomSeriesSearch : public RandomTest
{
protected:
  /** Loads `file`, lets `change` edit it, and saves it at `to`. */
  template <typename TChange>
  void
  Edit(const std::string & file, const std::string & to, TChange change)
  {
    DcmFileFormat dicom;
    ASSERT_TRUE(dicom.loadFile(file.c_str()).good()) << file;
    change(dicom);
    ASSERT_TRUE(dicom.saveFile(to.c_str(), EXS_LittleEndianExplicit).good()) << to;
  }

  static bool
  Holds(const std::vector<std::string> & lines, const std::string & phrase)
  {
    return std::any_of(
      lines.begin(), lines.end(), [&](const std::string & line) { return line.find(phrase) != std::string::npos; });
  }
};

TEST_F(DicomSeriesSearch, ASliceWithoutRowsOrColumnsFailsItsSeriesByName)
{
  SeriesSpec spec;
  spec.slices = 4;
  const auto written = WriteSeries(Folder("series"), spec, m_Random);
  const std::string lost = written.files.back(); // the last slice: no gap in the spacing would betray it
  Edit(lost, lost, [](DcmFileFormat & file) {
    file.getDataset()->findAndDeleteElement(DCM_Rows);
    file.getDataset()->findAndDeleteElement(DCM_Columns);
  });
  svdlr_io::DicomSearchNotes notes;
  const auto                 series = svdlr_io::FindDicomSeries({ Path("series") }, &notes);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].files.size(), 3u);
  ASSERT_EQ(series[0].unusable.size(), 1u);
  EXPECT_EQ(series[0].unusable[0].file, lost);
  EXPECT_TRUE(notes.leftOut.empty());
  const std::string problem = svdlr_io::DicomSeriesProblem(series[0]);
  EXPECT_NE(problem.find(lost + ": has no Rows or Columns"), std::string::npos) << problem;
  EXPECT_NE(problem.find("1 of its 4 files"), std::string::npos) << problem;
  SVDLR_ERROR_MESSAGE(svdlr_io::ReadDicomSeries(series[0]), message);
  EXPECT_EQ(message, problem);
  SVDLR_ERROR_MESSAGE(svdlr_io::ReadDicomImages(series[0]), images);
  EXPECT_EQ(images, problem);
  EXPECT_NE(svdlr_io::DescribeDicomSeries(series).find(problem), std::string::npos);
}

TEST_F(DicomSeriesSearch, AReportAPresentationStateAndADicomdirAreLeftOutWithANote)
{
  SeriesSpec spec;
  spec.slices = 3;
  const auto written = WriteSeries(Folder("series"), spec, m_Random);
  // Non-image objects of the same series, as some exports store them beside the slices.
  const std::pair<const char *, const char *> objects[] = {
    { "report.dcm", UID_BasicTextSRStorage }, { "state.dcm", UID_GrayscaleSoftcopyPresentationStateStorage }
  };
  for (const auto & object : objects)
  {
    const char * sopClass = object.second;
    Edit(written.files[0], Path(std::string("series/") + object.first), [sopClass](DcmFileFormat & file) {
      for (const DcmTagKey & tag : { DCM_Rows, DCM_Columns, DCM_PixelData })
      {
        file.getDataset()->findAndDeleteElement(tag);
      }
      file.getDataset()->putAndInsertString(DCM_SOPClassUID, sopClass);
    });
  }
  Edit(written.files[0], Path("series/DICOMDIR"), [](DcmFileFormat & file) {
    file.getDataset()->clear();
    file.getDataset()->putAndInsertString(DCM_FileSetID, "SVDLR");
    file.getMetaInfo()->putAndInsertString(DCM_MediaStorageSOPClassUID, UID_MediaStorageDirectoryStorage);
  });
  svdlr_io::DicomSearchNotes notes;
  const auto                 series = svdlr_io::FindDicomSeries({ Path("series") }, &notes);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].files.size(), 3u);
  EXPECT_TRUE(series[0].unusable.empty());
  EXPECT_EQ(svdlr_io::ReadDicomSeries(series[0]).slices.size(), 3u);
  EXPECT_EQ(notes.leftOut.size(), 3u);
  EXPECT_TRUE(Holds(notes.leftOut, "report.dcm: a non-image object (BasicTextSRStorage)"));
  EXPECT_TRUE(Holds(notes.leftOut, "state.dcm: a non-image object (GrayscaleSoftcopyPresentationStateStorage)"));
  EXPECT_TRUE(Holds(notes.leftOut, "DICOMDIR: a DICOMDIR"));
}

TEST_F(DicomSeriesSearch, AFileNamedLikeDicomThatIsNotIsAnErrorInAFolderToo)
{
  SeriesSpec spec;
  spec.slices = 2;
  WriteSeries(Folder("series"), spec, m_Random);
  std::ofstream(Path("series/notes.dcm")) << "DICM? no: plain text";
  SVDLR_ERROR_MESSAGE(svdlr_io::FindDicomSeries({ Path("series") }), inFolder);
  EXPECT_NE(inFolder.find(Path("series/notes.dcm") + ": cannot be read as DICOM"), std::string::npos) << inFolder;
  SVDLR_ERROR_MESSAGE(svdlr_io::FindDicomSeries({ Path("series/notes.dcm") }), named);
  EXPECT_NE(named.find("notes.dcm"), std::string::npos) << named;
  SVDLR_ERROR_MESSAGE(svdlr_io::FindDicomSeries({ Path("nowhere") }), missing);
  EXPECT_NE(missing.find("no such file or folder"), std::string::npos) << missing;
}

TEST_F(DicomSeriesSearch, PlainFilesAreLeftOutWithANoteOrNotLookedAt)
{
  SeriesSpec spec;
  spec.slices = 2;
  WriteSeries(Folder("series"), spec, m_Random);
  std::ofstream(Path("series/README")) << "Exported by a scanner; slices below.\n"; // no extension: looked at
  std::ofstream(Path("series/sidecar.json")) << "{}\n";                          // not DICOM by name: not looked at
  std::ofstream(Path("series/._IM0001.dcm")) << "AppleDouble";                   // hidden: not looked at
  fs::create_directories(Path("series/.git/objects"));                           // nor is a hidden folder
  std::ofstream(Path("series/.git/HEAD")) << "ref: refs/heads/main\n";
  std::ofstream(Path("series/.git/objects/empty")).close();
  svdlr_io::DicomSearchNotes notes;
  const auto                 series = svdlr_io::FindDicomSeries({ Path("series") }, &notes);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].files.size(), 2u);
  ASSERT_EQ(notes.leftOut.size(), 1u) << ::testing::PrintToString(notes.leftOut);
  EXPECT_NE(notes.leftOut[0].find(Path("series/README") + ": not DICOM"), std::string::npos) << notes.leftOut[0];
}

TEST_F(DicomSeriesSearch, AnEmptyFileOrADanglingLinkIsAnErrorNamingIt)
{
  SeriesSpec spec;
  spec.slices = 2;
  WriteSeries(Folder("series"), spec, m_Random);
  std::ofstream(Path("series/IM0003")).close(); // a copy that failed, no extension
  SVDLR_ERROR_MESSAGE(svdlr_io::FindDicomSeries({ Path("series") }), empty);
  EXPECT_NE(empty.find(Path("series/IM0003") + ": is empty"), std::string::npos) << empty;
  fs::remove(Path("series/IM0003"));

  fs::create_symlink("../.git/annex/objects/Xk/MD5E-s1--0.dcm", Path("series/IM0004.dcm"));
  SVDLR_ERROR_MESSAGE(svdlr_io::FindDicomSeries({ Path("series") }), dangling);
  EXPECT_NE(dangling.find(Path("series/IM0004.dcm") + ": cannot be opened"), std::string::npos) << dangling;
}

TEST_F(DicomSeriesSearch, AFileOrFolderWithoutReadPermissionIsAnErrorNamingIt)
{
  const svdlr_test::WithoutPermissionOverride asAnyUser; // root too (CI runs as root): svdlrUnreadableFolder.h
  SeriesSpec                                  spec;
  spec.slices = 2;
  WriteSeries(Folder("series"), spec, m_Random);
  std::ofstream(Path("series/IM0005.dcm")) << "locked";
  fs::permissions(Path("series/IM0005.dcm"), fs::perms::none);
  if (std::ifstream(Path("series/IM0005.dcm")).good())
  {
    GTEST_SKIP() << "this process reads a file of mode 000 (root whose CAP_DAC_OVERRIDE cannot be dropped here)";
  }
  SVDLR_ERROR_MESSAGE(svdlr_io::FindDicomSeries({ Path("series") }), locked);
  EXPECT_NE(locked.find(Path("series/IM0005.dcm") + ": cannot be opened: Permission denied"), std::string::npos)
    << locked;
  fs::remove(Path("series/IM0005.dcm"));

  fs::create_directories(Path("series/locked"));
  fs::permissions(Path("series/locked"), fs::perms::none);
  SVDLR_ERROR_MESSAGE(svdlr_io::FindDicomSeries({ Path("series") }), folder);
  fs::permissions(Path("series/locked"), fs::perms::owner_all);
  EXPECT_NE(folder.find("not every folder under it can be listed ('" + Path("series/locked") + "'"), std::string::npos)
    << folder;
}

TEST_F(DicomSeriesSearch, ListingCollectsUnreadableFilesInsteadOfFailing)
{
  SeriesSpec spec;
  spec.slices = 2;
  WriteSeries(Folder("series"), spec, m_Random);
  std::ofstream(Path("series/notes.dcm")) << "not DICOM";
  svdlr_io::DicomSearchNotes notes;
  notes.listUnreadable = true;
  const auto series = svdlr_io::FindDicomSeries({ Path("series") }, &notes);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].files.size(), 2u);
  ASSERT_EQ(notes.unreadable.size(), 1u);
  EXPECT_NE(notes.unreadable[0].find("notes.dcm"), std::string::npos) << notes.unreadable[0];
}

} // namespace
