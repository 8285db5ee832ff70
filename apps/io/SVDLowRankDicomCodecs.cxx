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
// Transfer syntaxes: which are read by which library, which are written, and GDCM's pixel decoding for the
// syntaxes DCMTK 3.6.7 has no codec for.
#include "SVDLowRankDicomCodecs.h"
#include "SVDLowRankDicomTags.h"

#include "dcmtk/dcmdata/dccodec.h"
#include "dcmtk/dcmjpeg/djrplol.h"

#include "gdcmImage.h"
#include "gdcmImageReader.h"
#include "gdcmTrace.h"
#include "gdcmTransferSyntax.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace svdlr_io
{
namespace
{

std::string
TrimUID(std::string uid)
{
  while (!uid.empty() && (uid.back() == ' ' || uid.back() == '\0'))
  {
    uid.pop_back();
  }
  return uid;
}

// GDCM's name of `uid`; TS_END when GDCM does not know it.
gdcm::TransferSyntax::TSType
GdcmSyntax(const std::string & uid)
{
  return gdcm::TransferSyntax::GetTSType(uid.c_str());
}

// The syntaxes GDCM decodes here that DCMTK 3.6.7 does not: JPEG 2000 (Part 1 and Part 2 multi-component,
// lossless and lossy), through OpenJPEG. Video (MPEG) and referenced pixel data (JPIP) are not images a
// slice reader can use.
bool
GdcmDecodes(const std::string & uid)
{
  switch (GdcmSyntax(uid))
  {
    case gdcm::TransferSyntax::JPEG2000Lossless:
    case gdcm::TransferSyntax::JPEG2000:
    case gdcm::TransferSyntax::JPEG2000Part2Lossless:
    case gdcm::TransferSyntax::JPEG2000Part2:
      return true;
    default:
      return false;
  }
}

} // namespace

const std::vector<std::string> &
DicomOutputSyntaxNames()
{
  static const std::vector<std::string> names{
    "keep", "explicit-le", "implicit-le", "rle", "jpeg-lossless", "jpeg-ls"
  };
  return names;
}

DicomOutputSyntax
ParseDicomOutputSyntax(const std::string & name)
{
  const auto & names = DicomOutputSyntaxNames();
  const auto   found = std::find(names.begin(), names.end(), name);
  if (found == names.end())
  {
    std::string list;
    for (const auto & n : names)
    {
      list += (list.empty() ? "" : ", ") + n;
    }
    throw DicomError("unknown DICOM transfer syntax '" + name + "'; choose one of: " + list);
  }
  return static_cast<DicomOutputSyntax>(found - names.begin());
}

std::string
DicomOutputSyntaxName(DicomOutputSyntax syntax)
{
  return DicomOutputSyntaxNames().at(static_cast<std::size_t>(syntax));
}

std::string
DicomOutputSyntaxProblem(DicomOutputSyntax syntax)
{
  if (syntax == DicomOutputSyntax::JPEGLSLossless)
  {
    return "JPEG-LS output is disabled: DCMTK 3.6.7's JPEG-LS encoder writes outside its buffer for every frame "
           "whose code stream has an odd length, aborts on 12-bit signed images and writes undecodable streams "
           "for noisy 8-bit images; write rle or jpeg-lossless for lossless compression";
  }
  return {};
}

std::string
ResolveDicomOutputSyntax(DicomOutputSyntax choice, const std::string & sourceTransferSyntaxUID)
{
  const std::string problem = DicomOutputSyntaxProblem(choice);
  if (!problem.empty())
  {
    throw DicomError(problem);
  }
  switch (choice)
  {
    case DicomOutputSyntax::ExplicitLittleEndian:
      return UID_LittleEndianExplicitTransferSyntax;
    case DicomOutputSyntax::ImplicitLittleEndian:
      return UID_LittleEndianImplicitTransferSyntax;
    case DicomOutputSyntax::RLE:
      return UID_RLELosslessTransferSyntax;
    case DicomOutputSyntax::JPEGLossless:
      return UID_JPEGProcess14SV1TransferSyntax;
    case DicomOutputSyntax::JPEGLSLossless:
      return UID_JPEGLSLosslessTransferSyntax;
    case DicomOutputSyntax::Keep:
      break;
  }
  // Keep: what the source was in, when it is among the syntaxes written here (lossless by definition);
  // lossy sources (whose loss cannot be repeated), JPEG 2000 (no encoder in DCMTK), big endian (retired),
  // deflate and JPEG-LS (see DicomOutputSyntaxProblem) become Explicit VR Little Endian.
  const std::string source = TrimUID(sourceTransferSyntaxUID);
  for (const char * writable : { UID_LittleEndianExplicitTransferSyntax,
                                 UID_LittleEndianImplicitTransferSyntax,
                                 UID_RLELosslessTransferSyntax,
                                 UID_JPEGProcess14SV1TransferSyntax })
  {
    if (source == writable)
    {
      return source;
    }
  }
  return UID_LittleEndianExplicitTransferSyntax;
}

bool
IsLossyTransferSyntax(const std::string & uid)
{
  const std::string trimmed = TrimUID(uid);
  const DcmXfer     xfer(trimmed.c_str());
  if (xfer.getXfer() != EXS_Unknown)
  {
    return xfer.isLossy();
  }
  // Syntaxes newer than DCMTK 3.6.7's table: HTJ2K (.201 lossless, .202 lossless RPCL, .203 lossy) and
  // JPEG XL (.110 lossless, .111 JPEG recompression, .112 lossy).
  return trimmed == "1.2.840.10008.1.2.4.203" || trimmed == "1.2.840.10008.1.2.4.112";
}

std::string
LossyCompressionMethod(const std::string & uid)
{
  const DcmXfer xfer(TrimUID(uid).c_str());
  if (!xfer.isLossy())
  {
    return {};
  }
  switch (xfer.getXfer())
  {
    case EXS_JPEGLSLossy:
      return "ISO_14495_1";
    case EXS_JPEG2000:
    case EXS_JPEG2000MulticomponentLosslessOnly:
    case EXS_JPEG2000Multicomponent:
      return "ISO_15444_1";
    default:
      return xfer.isEncapsulated() && std::string(xfer.getXferName()).rfind("JPEG", 0) == 0 ? "ISO_10918_1"
                                                                                           : std::string();
  }
}

std::string
DescribeTransferSyntax(const std::string & uid)
{
  const std::string trimmed = TrimUID(uid);
  const DcmXfer     xfer(trimmed.c_str());
  if (xfer.getXfer() != EXS_Unknown)
  {
    return std::string(xfer.getXferName()) + " (" + trimmed + ")";
  }
  // Syntaxes newer than DCMTK 3.6.7's table (PS3.6 2023-2024).
  static const std::map<std::string, std::string> newer{
    { "1.2.840.10008.1.2.1.98", "Encapsulated Uncompressed Explicit VR Little Endian" },
    { "1.2.840.10008.1.2.4.110", "JPEG XL Lossless" },
    { "1.2.840.10008.1.2.4.111", "JPEG XL JPEG Recompression" },
    { "1.2.840.10008.1.2.4.112", "JPEG XL" },
    { "1.2.840.10008.1.2.4.201", "High-Throughput JPEG 2000 Lossless Only" },
    { "1.2.840.10008.1.2.4.202", "High-Throughput JPEG 2000 with RPCL Options Lossless Only" },
    { "1.2.840.10008.1.2.4.203", "High-Throughput JPEG 2000" },
    { "1.2.840.10008.1.2.8.1", "Deflated Image Frame Compression" }
  };
  const auto known = newer.find(trimmed);
  return (known != newer.end() ? known->second : std::string("an unknown transfer syntax")) + " (" + trimmed + ")";
}

std::string
DicomDecoderFor(const std::string & uid)
{
  RegisterDicomCodecs(); // DCMTK answers for the codecs registered
  const std::string trimmed = TrimUID(uid);
  const DcmXfer     xfer(trimmed.c_str());
  if (xfer.getXfer() != EXS_Unknown &&
      (!xfer.isEncapsulated() || DcmCodecList::canChangeCoding(xfer.getXfer(), EXS_LittleEndianExplicit)))
  {
    return "DCMTK";
  }
  return GdcmDecodes(trimmed) ? "GDCM" : "";
}

std::vector<std::uint8_t>
DecodeFramesWithGdcm(const std::string & file,
                     const std::string & transferSyntaxUID,
                     unsigned int        frames,
                     unsigned int        rows,
                     unsigned int        columns,
                     unsigned int        bitsAllocated,
                     std::size_t         frameBytes)
{
  const std::string syntax = DescribeTransferSyntax(transferSyntaxUID);
  // GDCM's own messages would go to stderr; what goes wrong comes back as a DicomError instead.
  gdcm::Trace::SetDebug(false);
  gdcm::Trace::SetWarning(false);
  gdcm::Trace::SetError(false);
  gdcm::ImageReader reader;
  reader.SetFileName(file.c_str());
  if (!reader.Read())
  {
    throw FileError(file, "cannot be read by GDCM, which decodes its pixel data (" + syntax + "): corrupt?");
  }
  const gdcm::Image & image = reader.GetImage();
  if (image.GetColumns() != columns || image.GetRows() != rows ||
      image.GetPixelFormat().GetBitsAllocated() != bitsAllocated || image.GetPixelFormat().GetSamplesPerPixel() != 1)
  {
    throw FileError(file,
                    "is described differently by GDCM (" + std::to_string(image.GetColumns()) + "x" +
                      std::to_string(image.GetRows()) + ", " +
                      std::to_string(image.GetPixelFormat().GetBitsAllocated()) + " bits allocated) and DCMTK (" +
                      std::to_string(columns) + "x" + std::to_string(rows) + ", " + std::to_string(bitsAllocated) +
                      " bits allocated)");
  }
  const std::size_t gdcmFrames = image.GetNumberOfDimensions() > 2 ? image.GetDimension(2) : 1;
  std::vector<char> all(image.GetBufferLength());
  if (gdcmFrames < frames || all.size() < frames * frameBytes)
  {
    throw FileError(file,
                    "has " + std::to_string(gdcmFrames) + " frames in its pixel data for GDCM, " +
                      std::to_string(frames) + " for DCMTK (NumberOfFrames)");
  }
  if (!image.GetBuffer(all.data()))
  {
    throw FileError(file, "pixel data (" + syntax + ") cannot be decoded by GDCM: corrupt?");
  }
  std::vector<std::uint8_t> samples(frames * frameBytes);
  std::memcpy(samples.data(), all.data(), samples.size());
  return samples;
}

void
EncodeDicomPixelData(DcmDataset * dataset, const std::string & uid)
{
  const DcmXfer xfer(uid.c_str());
  if (!xfer.isEncapsulated())
  {
    return; // native pixel data is written as it is in any uncompressed syntax
  }
  RegisterDicomCodecs();
  DJ_RPLossless                      firstOrderPrediction(1, 0); // selection value 1, no point transform
  const DcmRepresentationParameter * parameter =
    xfer.getXfer() == EXS_JPEGProcess14SV1 ? static_cast<const DcmRepresentationParameter *>(&firstOrderPrediction)
                                           : nullptr;
  const OFCondition status = dataset->chooseRepresentation(xfer.getXfer(), parameter);
  if (status.bad() || !dataset->canWriteXfer(xfer.getXfer()))
  {
    throw DicomError("DCMTK cannot compress the pixel data as " + DescribeTransferSyntax(uid) + ": " +
                     (status.bad() ? status.text() : "no encoder"));
  }
}

} // namespace svdlr_io
