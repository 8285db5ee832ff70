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
// Finding DICOM series among files and folders, listing them and choosing one; DCMTK codec set-up.
#include "SVDLowRankDicomSeries.h"
#include "SVDLowRankDicomComplexPairs.h"
#include "SVDLowRankDicomTags.h"
#include "SVDLowRankFolderFiles.h"
#include "SVDLowRankReadableFile.h"

#include "dcmtk/dcmdata/dcrledrg.h"
#include "dcmtk/dcmdata/dcrleerg.h"
#include "dcmtk/dcmjpeg/djdecode.h"
#include "dcmtk/dcmjpeg/djencode.h"
#include "dcmtk/dcmjpls/djdecode.h"
#include "dcmtk/dcmjpls/djencode.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

namespace svdlr_io
{
namespace
{
namespace fs = std::filesystem;

/** The files under `path` (itself, if it is a file), sorted. Hidden files and folders are not looked at, as in the
 * batch's search: .git and .datalad, macOS's ._IM0001.dcm and .DS_Store, a staged output's temporaries. A dangling
 * link (an un-fetched git-annex or DataLad file) is listed, so that it fails by name. A folder that cannot be listed
 * is a DicomError: its files might be slices of a series. */
std::vector<std::string>
SearchedFiles(const std::string & path)
{
  std::error_code error;
  if (fs::is_regular_file(path, error))
  {
    return { path };
  }
  if (!fs::is_directory(path, error))
  {
    throw DicomError(path + ": no such file or folder");
  }
  std::vector<std::string> files;
  try
  {
    for (const fs::path & file : svdlr_io::FilesUnder(path))
    {
      files.push_back(file.string());
    }
  }
  catch (const UnlistableFolder & unlistable)
  {
    throw DicomError(path + ": not every folder under it can be listed ('" + unlistable.Folder().string() + "': " +
                     unlistable.Reason() + "), so the files of a series may be missing");
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool
HasDicomExtension(const std::string & file)
{
  const std::string extension = LowerCase(fs::path(file).extension().string());
  return extension == ".dcm" || extension == ".dicom" || extension == ".ima";
}

// Files in a folder without the "DICM" preamble are only looked at when their name looks like DICOM.
bool
MayBeDicomWithoutPreamble(const std::string & file)
{
  return HasDicomExtension(file) || fs::path(file).extension().empty();
}

/** Why `file` cannot be opened for reading ("" when it can): a dangling link, no permission. */
std::string
WhyNotOpenable(const std::string & file)
{
  std::error_code error;
  if (!fs::exists(file, error))
  {
    return "cannot be opened: it is a link to a file that is not there (an un-fetched git-annex or DataLad file?)";
  }
  std::ifstream stream(file, std::ios::binary);
  if (!stream)
  {
    return std::string("cannot be opened: ") + std::strerror(errno);
  }
  return {};
}

/** What a file without Rows and Columns clearly is, when it is no part of an image series: a DICOMDIR, a non-image
 * object, not DICOM at all; "" when it may be a slice that lost its image attributes. */
std::string
WhatNonImageFileIs(DcmFileFormat & dicom, const std::string & file, bool preamble)
{
  DcmDataset * dataset = dicom.getDataset();
  std::string  sopClass = GetString(dataset, DCM_SOPClassUID);
  if (sopClass.empty())
  {
    sopClass = GetString(dicom.getMetaInfo(), DCM_MediaStorageSOPClassUID);
  }
  if (sopClass == UID_MediaStorageDirectoryStorage || fs::path(file).filename() == "DICOMDIR")
  {
    return "a DICOMDIR (an index of files), not an image";
  }
  if (!sopClass.empty() && dcmIsaStorageSOPClassUID(sopClass.c_str(), ESSC_All) &&
      !dcmIsImageStorageSOPClassUID(sopClass.c_str()))
  {
    return std::string("a non-image object (") + dcmFindNameOfUID(sopClass.c_str(), sopClass.c_str()) + ")";
  }
  if (sopClass.empty() && !preamble && GetString(dataset, DCM_SeriesInstanceUID).empty())
  {
    return "not DICOM (no preamble, and no SOPClassUID, SeriesInstanceUID, Rows or Columns)";
  }
  return {};
}

/** A file that cannot be read, whose series is therefore unknown: an error, or a line in `notes` when asked. */
void
Unreadable(const std::string & why, DicomSearchNotes * notes)
{
  if (notes == nullptr || !notes->listUnreadable)
  {
    throw DicomError(why);
  }
  notes->unreadable.push_back(why);
}

void
LeftOut(const std::string & why, DicomSearchNotes * notes)
{
  if (notes != nullptr)
  {
    notes->leftOut.push_back(why);
  }
}

} // namespace

void
RegisterDicomCodecs()
{
  static std::once_flag once;
  std::call_once(once, [] {
    DJDecoderRegistration::registerCodecs();
    DJEncoderRegistration::registerCodecs();
    DJLSDecoderRegistration::registerCodecs();
    DJLSEncoderRegistration::registerCodecs();
    DcmRLEDecoderRegistration::registerCodecs();
    DcmRLEEncoderRegistration::registerCodecs();
    std::atexit([] {
      DJDecoderRegistration::cleanup();
      DJEncoderRegistration::cleanup();
      DJLSDecoderRegistration::cleanup();
      DJLSEncoderRegistration::cleanup();
      DcmRLEDecoderRegistration::cleanup();
      DcmRLEEncoderRegistration::cleanup();
    });
  });
  if (!dcmDataDict.isDictionaryLoaded())
  {
    throw DicomError("DCMTK's data dictionary is not loaded: install DCMTK's dicom.dic or set DCMDICTPATH");
  }
}

void
SilenceDicomWarnings()
{
  OFLog::configure(OFLogger::FATAL_LOG_LEVEL);
}

bool
HasDicomPreamble(const std::string & path)
{
  std::ifstream file(path, std::ios::binary);
  char          head[132] = {};
  return file.read(head, sizeof(head)) && std::string(head + 128, 4) == "DICM";
}

std::vector<DicomSeriesSummary>
FindDicomSeries(const std::vector<std::string> & paths, DicomSearchNotes * notes)
{
  std::map<std::string, DicomSeriesSummary> byUID;
  for (const std::string & path : paths)
  {
    std::error_code error;
    const bool      explicitFile = fs::is_regular_file(path, error);
    for (const std::string & file : SearchedFiles(path))
    {
      const bool preamble = HasDicomPreamble(file);
      if (!explicitFile && !preamble && !MayBeDicomWithoutPreamble(file))
      {
        continue; // not DICOM by its content or its name (a .json sidecar, a .txt)
      }
      const std::string unopenable = WhyNotOpenable(file);
      if (!unopenable.empty())
      {
        Unreadable(file + ": " + unopenable, notes);
        continue;
      }
      if (fs::file_size(file, error) == 0 && !error)
      {
        Unreadable(file + ": is empty (a copy that failed?)", notes);
        continue;
      }
      std::unique_ptr<DcmFileFormat> dicom;
      try
      {
        dicom = LoadDicomFile(file, true);
      }
      catch (const DicomError & failure)
      {
        // Claimed to be DICOM by its preamble, its name or the user: an error. Otherwise a file that is no DICOM.
        if (explicitFile || preamble || HasDicomExtension(file))
        {
          Unreadable(failure.what(), notes);
        }
        else
        {
          LeftOut(file + ": not DICOM (no preamble, and DCMTK cannot parse it)", notes);
        }
        continue;
      }
      DcmDataset *      dataset = dicom->getDataset();
      const std::string uid = GetString(dataset, DCM_SeriesInstanceUID);
      Uint16            rows = 0, columns = 0;
      const bool        image =
        dataset->findAndGetUint16(DCM_Rows, rows).good() && dataset->findAndGetUint16(DCM_Columns, columns).good();
      std::string nonImage;
      if (!image)
      {
        if (explicitFile)
        {
          Unreadable(file + ": is not a DICOM image (no Rows or Columns)", notes);
          continue;
        }
        nonImage = WhatNonImageFileIs(*dicom, file, preamble);
        if (!nonImage.empty())
        {
          LeftOut(file + ": " + nonImage, notes);
          continue;
        }
      }
      DicomSeriesSummary & series = byUID[uid]; // files without a SeriesInstanceUID form one series
      if (series.files.empty() && series.unusable.empty())
      {
        series.seriesInstanceUID = uid;
        series.seriesNumber = GetString(dataset, DCM_SeriesNumber);
        series.seriesDescription = GetString(dataset, DCM_SeriesDescription);
        series.modality = GetString(dataset, DCM_Modality);
        series.studyInstanceUID = GetString(dataset, DCM_StudyInstanceUID);
        series.frameOfReferenceUID = GetString(dataset, DCM_FrameOfReferenceUID);
        series.manufacturer = GetString(dataset, DCM_Manufacturer);
      }
      if (!image)
      {
        // A slice that lost its image attributes: the series would be read without it, so it is not read at all.
        series.unusable.push_back({ file, "has no Rows or Columns (0028,0010/0011), so it is no usable image" });
        continue;
      }
      if (series.files.empty())
      {
        series.rows = rows;
        series.columns = columns;
      }
      series.files.push_back(file);
      for (const DicomComplexPart part : DicomComplexPartsOfFile(dataset))
      {
        if (std::find(series.complexParts.begin(), series.complexParts.end(), part) == series.complexParts.end())
        {
          series.complexParts.push_back(part);
        }
      }
    }
  }
  std::vector<DicomSeriesSummary> series;
  for (auto & entry : byUID)
  {
    series.push_back(std::move(entry.second));
  }
  std::stable_sort(series.begin(), series.end(), [](const DicomSeriesSummary & a, const DicomSeriesSummary & b) {
    return std::atol(a.seriesNumber.c_str()) < std::atol(b.seriesNumber.c_str());
  });
  return series;
}

std::string
DicomSeriesProblem(const DicomSeriesSummary & series)
{
  if (series.unusable.empty())
  {
    return {};
  }
  const std::size_t total = series.files.size() + series.unusable.size();
  std::string       text = "DICOM " + DescribeSeriesBriefly(series) + " is not read: " +
                     std::to_string(series.unusable.size()) + " of its " + std::to_string(total) +
                     " files cannot be used, and it would lack their slices: ";
  for (std::size_t i = 0; i < series.unusable.size(); ++i)
  {
    text += (i == 0 ? "" : "; ") + series.unusable[i].file + ": " + series.unusable[i].reason;
  }
  return text;
}

std::string
DescribeDicomSeries(const std::vector<DicomSeriesSummary> & series)
{
  std::size_t descriptionWidth = 11;
  for (const auto & s : series)
  {
    descriptionWidth = std::max(descriptionWidth, s.seriesDescription.size());
  }
  std::ostringstream text;
  text << std::left << "  " << std::setw(4) << "#" << std::setw(7) << "files" << std::setw(11) << "size"
       << std::setw(10) << "modality" << std::setw(8) << "series" << std::setw(descriptionWidth + 2) << "description"
       << "SeriesInstanceUID\n";
  for (std::size_t i = 0; i < series.size(); ++i)
  {
    const auto & s = series[i];
    text << "  " << std::setw(4) << i + 1 << std::setw(7) << s.files.size() << std::setw(11)
         << (std::to_string(s.columns) + "x" + std::to_string(s.rows)) << std::setw(10) << s.modality << std::setw(8)
         << s.seriesNumber << std::setw(descriptionWidth + 2) << s.seriesDescription << s.seriesInstanceUID << "\n";
  }
  for (std::size_t i = 0; i < series.size(); ++i)
  {
    const std::string problem = DicomSeriesProblem(series[i]);
    if (!problem.empty())
    {
      text << "  #" << i + 1 << ": " << problem << "\n";
    }
  }
  return text.str();
}

const DicomSeriesSummary &
SelectDicomSeries(const std::vector<DicomSeriesSummary> & series, const std::string & choice)
{
  if (series.empty())
  {
    throw DicomError("no DICOM image series found");
  }
  if (choice.empty())
  {
    if (series.size() == 1)
    {
      return series.front();
    }
    throw DicomError(std::to_string(series.size()) + " DICOM series found; choose one by UID or number:\n" +
                     DescribeDicomSeries(series));
  }
  for (const auto & s : series)
  {
    if (s.seriesInstanceUID == choice)
    {
      return s;
    }
  }
  char *     end = nullptr;
  const long number = std::strtol(choice.c_str(), &end, 10);
  if (*end == '\0' && number >= 1 && static_cast<std::size_t>(number) <= series.size())
  {
    return series[static_cast<std::size_t>(number - 1)];
  }
  throw DicomError("no DICOM series '" + choice + "' here; the series are:\n" + DescribeDicomSeries(series));
}

} // namespace svdlr_io
