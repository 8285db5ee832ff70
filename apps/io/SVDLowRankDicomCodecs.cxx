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
#include "SVDLowRankGzipFile.h"
#include "SVDLowRankJpeg2000Header.h"

#include "dcmtk/dcmdata/dccodec.h"
#include "dcmtk/dcmdata/dcfilefo.h"
#include "dcmtk/dcmdata/dcostrmb.h"
#include "dcmtk/dcmjpeg/djrplol.h"

#include "gdcmImage.h"
#include "gdcmImageReader.h"
#include "gdcmTrace.h"
#include "gdcmTransferSyntax.h"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>

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

// The syntaxes GDCM decodes here that DCMTK 3.6.7 does not: JPEG 2000 (Part 1 and Part 2 multi-component,
// lossless and lossy), through OpenJPEG. Video (MPEG) and referenced pixel data (JPIP) are not images a
// slice reader can use.
bool
GdcmDecodes(const std::string & uid)
{
  switch (gdcm::TransferSyntax::GetTSType(uid.c_str())) // TS_END when GDCM does not know it
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

namespace
{
/** `dicom` written by DCMTK into memory as a DICOM file in its own transfer syntax (encapsulated pixel data kept as
 * it is), with a meta header DCMTK makes: what GDCM is given to parse instead of the file on disk. */
std::string
ReencodedByDcmtk(DcmFileFormat & dicom, const std::string & file, const std::string & syntax)
{
  const E_TransferSyntax xfer = dicom.getDataset()->getOriginalXfer();
  if (dicom.validateMetaInfo(xfer).bad())
  {
    throw FileError(file, "has a file meta header DCMTK cannot rebuild, so its pixel data (" + syntax +
                            ") is not handed to GDCM");
  }
  const Uint32      length = dicom.calcElementLength(xfer, EET_ExplicitLength);
  std::string       bytes(static_cast<std::size_t>(length) + 1024, '\0');
  DcmOutputBufferStream stream(bytes.data(), static_cast<offile_off_t>(bytes.size()));
  dicom.transferInit();
  const OFCondition written = dicom.write(stream, xfer, EET_ExplicitLength, nullptr);
  dicom.transferEnd();
  void *      start = nullptr;
  offile_off_t used = 0;
  stream.flushBuffer(start, used);
  if (written.bad() || start == nullptr)
  {
    throw FileError(file, std::string("cannot be written again by DCMTK for GDCM to decode its pixel data: ") +
                            written.text());
  }
  bytes.resize(static_cast<std::size_t>(used));
  return bytes;
}

/** The address space this process holds now (a sanitizer's shadow reservation included), from /proc/self/statm's
 * first field; false when it cannot tell. */
bool
AddressSpaceHeld(rlim_t & bytes)
{
  std::size_t   pages = 0;
  std::ifstream statm("/proc/self/statm");
  const long    pageSize = ::sysconf(_SC_PAGESIZE);
  if (!(statm >> pages) || pageSize <= 0)
  {
    return false;
  }
  bytes = static_cast<rlim_t>(pages) * static_cast<rlim_t>(pageSize);
  return true;
}

/** OpenJPEG 2.5.0 allocates for every tile and component its SIZ declares while it reads a header, before any check
 * of ours can run: a code stream of a few hundred bytes describing 64 x 64 one-pixel tiles took 314 MB with 64
 * components, 1.15 GB with 256, and 16384 components ask for about 70 GB; one of 65025 tiles took 630 MB with one
 * component. A sound header reads in about 2 MB. (opj_read_header on code streams built for it, peak RSS by
 * /usr/bin/time; SVDLowRankJpeg2000HeaderGTest's HeaderMakingOpenJpegAllocate... case.) So the child reads the
 * frames' headers with its address space capped this far above what it holds: past it OpenJPEG's allocation fails
 * and the frame is refused. */
constexpr rlim_t kJpeg2000HeaderAddressSpace = rlim_t{ 256 } << 20;

/** CheckJpeg2000Frames under kJpeg2000HeaderAddressSpace: the child's soft RLIMIT_AS lowered for it, then put back
 * for GDCM's decoding (within the hard limit PrepareChild may have set). A refused frame ends the child. */
void
CheckJpeg2000FramesCapped(DcmFileFormat &     dicom,
                          const std::string & file,
                          unsigned int        frames,
                          unsigned int        rows,
                          unsigned int        columns,
                          unsigned int        bitsAllocated)
{
  rlimit before{};
  rlim_t held = 0;
  const bool capped = ::getrlimit(RLIMIT_AS, &before) == 0 && AddressSpaceHeld(held);
  if (capped)
  {
    const rlimit cap{ std::min<rlim_t>(before.rlim_cur, held + kJpeg2000HeaderAddressSpace), before.rlim_max };
    ::setrlimit(RLIMIT_AS, &cap);
  }
  CheckJpeg2000Frames(dicom, file, frames, rows, columns, bitsAllocated);
  if (capped)
  {
    ::setrlimit(RLIMIT_AS, &before);
  }
}

GdcmChildLimits g_ChildLimits; // as SetGdcmChildLimits set them

/** The child's own state before it decodes: default signal handlers (a crash ends the child, not a handler the
 * parent installed: the tools' interrupt cleanup, a sanitizer's or libFuzzer's report), its limits, then the
 * setup hook (which runs within them). */
void
PrepareChild(const GdcmChildLimits & limits)
{
  for (const int signalNumber : { SIGINT, SIGTERM, SIGHUP, SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGALRM })
  {
    ::signal(signalNumber, SIG_DFL);
  }
  rlim_t held = 0;
  if (limits.addressSpaceBytes > 0 && AddressSpaceHeld(held))
  {
    const rlimit limit{ held + limits.addressSpaceBytes, held + limits.addressSpaceBytes };
    ::setrlimit(RLIMIT_AS, &limit);
  }
  if (limits.seconds > 0)
  {
    ::alarm(limits.seconds + 1); // the parent kills it at `seconds`; this is in case the parent is gone
  }
  if (limits.setup != nullptr)
  {
    limits.setup();
  }
}

/** Reads `channel` to its end into `received`; false when `seconds` (0: none) passed first. */
bool
ReadUntilClosed(int channel, unsigned int seconds, std::string & received)
{
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  char       buffer[1 << 16];
  for (;;)
  {
    int wait = -1;
    if (seconds > 0)
    {
      const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
      {
        return false;
      }
      wait = static_cast<int>(left.count());
    }
    pollfd ready{ channel, POLLIN, 0 };
    const int polled = ::poll(&ready, 1, wait);
    if (polled < 0 && errno == EINTR)
    {
      continue;
    }
    if (polled == 0)
    {
      return false;
    }
    const ssize_t got = ::read(channel, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR)
    {
      continue;
    }
    if (got <= 0)
    {
      return true;
    }
    received.append(buffer, static_cast<std::size_t>(got));
  }
}

/** Runs `decode` in a child process and returns what it returned (`expectedBytes` of samples), or throws: its
 * DicomError's message when it threw one, and an error naming `file` when the child died (a signal, an abort, a
 * sanitizer's report). The child only decodes and writes to a pipe, then leaves with _exit. */
std::vector<std::uint8_t>
InChildProcess(const std::string & file, const std::string & syntax, std::size_t expectedBytes,
               const std::function<std::vector<std::uint8_t>()> & decode)
{
  int channel[2];
  if (::pipe(channel) != 0)
  {
    throw FileError(file, "cannot start the decoding of its pixel data (" + syntax + "): no pipe");
  }
  const pid_t child = ::fork();
  if (child < 0)
  {
    ::close(channel[0]);
    ::close(channel[1]);
    throw FileError(file, "cannot start the decoding of its pixel data (" + syntax + "): no process");
  }
  const GdcmChildLimits limits = g_ChildLimits;
  if (child == 0)
  {
    ::close(channel[0]);
    PrepareChild(limits);
    unsigned char status = 0;
    std::string   payload;
    try
    {
      const std::vector<std::uint8_t> samples = decode();
      payload.assign(samples.begin(), samples.end());
    }
    catch (const DicomError & error)
    {
      status = 1;
      payload = error.what();
    }
    catch (const std::exception & error) // std::bad_alloc past the child's address space, GDCM's own
    {
      status = 1;
      payload = FileError(file, "pixel data (" + syntax + ") made GDCM fail while decoding it (" + error.what() +
                                  "): corrupt?")
                  .what();
    }
    const auto * bytes = reinterpret_cast<const unsigned char *>(payload.data());
    const bool   sent =
      WriteAllBytes(channel[1], &status, 1) == 0 && WriteAllBytes(channel[1], bytes, payload.size()) == 0;
    ::close(channel[1]);
    ::_exit(sent ? 0 : 3);
  }
  ::close(channel[1]);
  std::string received;
  const bool  inTime = ReadUntilClosed(channel[0], limits.seconds, received);
  ::close(channel[0]);
  if (!inTime)
  {
    ::kill(child, SIGKILL);
  }
  int exitStatus = 0;
  while (::waitpid(child, &exitStatus, 0) < 0 && errno == EINTR)
  {
  }
  if (!inTime)
  {
    throw FileError(file, "pixel data (" + syntax + ") kept GDCM decoding for more than " +
                            std::to_string(limits.seconds) + " s: corrupt?");
  }
  const bool finished = WIFEXITED(exitStatus) && WEXITSTATUS(exitStatus) == 0 && !received.empty();
  if (!finished)
  {
    throw FileError(file, "pixel data (" + syntax + ") made GDCM fail while decoding it (" +
                            (WIFSIGNALED(exitStatus) ? "signal " + std::to_string(WTERMSIG(exitStatus))
                                                     : "exit " + std::to_string(WEXITSTATUS(exitStatus))) +
                            "): corrupt?");
  }
  if (received[0] != 0)
  {
    throw DicomError(received.substr(1));
  }
  if (received.size() != expectedBytes + 1)
  {
    throw FileError(file, "pixel data (" + syntax + ") came back from GDCM with " + std::to_string(received.size() - 1) +
                            " bytes, expected " + std::to_string(expectedBytes));
  }
  return std::vector<std::uint8_t>(received.begin() + 1, received.end());
}

} // namespace

void
SetGdcmChildLimits(const GdcmChildLimits & limits)
{
  g_ChildLimits = limits;
}

std::vector<std::uint8_t>
DecodeFramesWithGdcm(DcmFileFormat &     dicom,
                     const std::string & file,
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
  const std::string bytes = ReencodedByDcmtk(dicom, file, syntax);
  // GDCM 3.0.21 reads outside its buffers on some corrupt JPEG 2000 code streams (a SEGV in
  // JPEG2000Codec::GetHeaderInfo, found by apps/fuzz), and OpenJPEG allocates for whatever a header declares: both
  // run in a child process, so that a crash there is an error about the file and not the end of the program.
  return InChildProcess(file, syntax, frames * frameBytes, [&]() -> std::vector<std::uint8_t> {
    // Each frame's header first: GDCM must never see a code stream that is cut short in its header or describes
    // another image than the DICOM header does.
    CheckJpeg2000FramesCapped(dicom, file, frames, rows, columns, bitsAllocated);
    std::istringstream reencoded(bytes);
    gdcm::ImageReader  reader;
    reader.SetStream(reencoded);
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
    return std::vector<std::uint8_t>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(frames * frameBytes));
  });
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
