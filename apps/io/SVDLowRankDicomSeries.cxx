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
#include "SVDLowRankDicomTags.h"

#include "dcmtk/dcmdata/dcrledrg.h"
#include "dcmtk/dcmdata/dcrleerg.h"
#include "dcmtk/dcmjpeg/djdecode.h"
#include "dcmtk/dcmjpeg/djencode.h"
#include "dcmtk/dcmjpls/djdecode.h"
#include "dcmtk/dcmjpls/djencode.h"

#include <algorithm>
#include <cstdlib>
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

std::vector<std::string>
FilesUnder(const std::string & path)
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
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, error), end;
       !error && it != end;
       it.increment(error))
  {
    if (it->is_regular_file(error))
    {
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Files in a folder without the "DICM" preamble are only tried when their name looks like DICOM.
bool
MayBeDicomWithoutPreamble(const std::string & file)
{
  std::string extension = fs::path(file).extension().string();
  std::transform(
    extension.begin(), extension.end(), extension.begin(), [](unsigned char c) { return std::tolower(c); });
  return extension.empty() || extension == ".dcm" || extension == ".dicom" || extension == ".ima";
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
FindDicomSeries(const std::vector<std::string> & paths, std::vector<std::string> * skipped)
{
  std::map<std::string, DicomSeriesSummary> byUID;
  for (const std::string & path : paths)
  {
    const bool explicitFile = fs::is_regular_file(path);
    for (const std::string & file : FilesUnder(path))
    {
      const bool preamble = HasDicomPreamble(file);
      if (!explicitFile && !preamble && !MayBeDicomWithoutPreamble(file))
      {
        continue;
      }
      std::unique_ptr<DcmFileFormat> dicom;
      try
      {
        dicom = LoadDicomFile(file, true);
      }
      catch (const DicomError & error)
      {
        if ((explicitFile || preamble) && skipped == nullptr)
        {
          throw;
        }
        if (explicitFile || preamble)
        {
          skipped->push_back(error.what());
        }
        continue; // a stray file without the DICOM preamble
      }
      DcmDataset *      dataset = dicom->getDataset();
      const std::string uid = GetString(dataset, DCM_SeriesInstanceUID);
      Uint16            rows = 0, columns = 0;
      if (dataset->findAndGetUint16(DCM_Rows, rows).bad() || dataset->findAndGetUint16(DCM_Columns, columns).bad())
      {
        if (explicitFile && skipped == nullptr)
        {
          throw FileError(file, "is not a DICOM image (no Rows or Columns)");
        }
        if (explicitFile)
        {
          skipped->push_back(file + ": not a DICOM image (no Rows or Columns)");
        }
        continue; // DICOMDIR, structured reports, presentation states...
      }
      DicomSeriesSummary & series = byUID[uid]; // files without a SeriesInstanceUID form one series
      if (series.files.empty())
      {
        series.seriesInstanceUID = uid;
        series.seriesNumber = GetString(dataset, DCM_SeriesNumber);
        series.seriesDescription = GetString(dataset, DCM_SeriesDescription);
        series.modality = GetString(dataset, DCM_Modality);
        series.patientName = GetString(dataset, DCM_PatientName);
        series.rows = rows;
        series.columns = columns;
      }
      series.files.push_back(file);
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
