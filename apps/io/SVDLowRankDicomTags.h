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
#ifndef SVDLowRankDicomTags_h
#define SVDLowRankDicomTags_h

// Small DCMTK helpers shared by the DICOM finder, reader and writer (and their tests). Includes DCMTK.

#include "dcmtk/config/osconfig.h"
#include "dcmtk/dcmdata/dctk.h"

#include "SVDLowRankDicomSeries.h"

#include <memory>

#include <cstdio>
#include <string>

namespace svdlr_io
{

/** All values of `tag` in `item` joined by backslashes, trimmed; empty when absent. */
inline std::string
GetString(DcmItem * item, const DcmTagKey & tag)
{
  OFString value;
  if (item->findAndGetOFStringArray(tag, value).bad())
  {
    return {};
  }
  std::string       text = value.c_str();
  const std::size_t last = text.find_last_not_of(" \0", std::string::npos, 2);
  return last == std::string::npos ? std::string() : text.substr(0, last + 1);
}

/** `value` as a DICOM decimal string: the most precise form that fits the 16 characters DS allows. */
inline std::string
FormatDecimalString(double value)
{
  if (value == 0.0)
  {
    return "0";
  }
  char text[64];
  for (int precision = 15; precision > 0; --precision)
  {
    std::snprintf(text, sizeof(text), "%.*g", precision, value);
    if (std::string(text).size() <= 16)
    {
      return text;
    }
  }
  return "0";
}

/** An error about `file`: the message starts with its name. */
inline DicomError
FileError(const std::string & file, const std::string & what)
{
  return DicomError(file + ": " + what);
}

/** Loads `file`; `headerOnly` stops before the pixel data (enough to list and group series). */
inline std::unique_ptr<DcmFileFormat>
LoadDicomFile(const std::string & file, bool headerOnly)
{
  RegisterDicomCodecs();
  auto              dicom = std::make_unique<DcmFileFormat>();
  const OFCondition status =
    headerOnly ? dicom->loadFileUntilTag(
                   file.c_str(), EXS_Unknown, EGL_noChange, DCM_MaxReadLength, ERM_autoDetect, DCM_PixelData)
               : dicom->loadFile(file.c_str());
  if (status.bad())
  {
    throw FileError(file, std::string("cannot be read as DICOM: ") + status.text() + " (a truncated file?)");
  }
  return dicom;
}

} // namespace svdlr_io

#endif
