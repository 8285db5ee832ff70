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
// Why the I/O library writes no JPEG-LS (svdlr_io::DicomOutputSyntaxProblem): compresses one greyscale image with
// the installed DCMTK's JPEG-LS encoder (dcmjpls, the path DcmDataset::chooseRepresentation takes) and decodes it
// back. Three images show three faults of DCMTK 3.6.7:
//   odd      7x5, 8 bits, smooth: its code stream has an odd length, and the encoder's padding byte is written
//            outside the buffer (valgrind: "Invalid write of size 1" in DJLSEncoderBase::fixPaddingIfNecessary);
//   signed12 64x64, 12 bits stored, signed: CharLS's assertion in JlsCodec::DoRegular aborts the process;
//   noisy8   64x64, 8 bits, uniform noise: DCMTK's own decoder rejects the stream written ("trailing data after
//            image": the odd-length case again, whose padding went elsewhere; about half of such images).
// AddressSanitizer does not see the first: DCMTK is not instrumented, and the byte is a plain store, not a call
// ASan intercepts. Valgrind sees it (apps/test/CMakeLists.txt runs this under valgrind when it is installed).
//
//   usage: DcmtkJpegLsEncoderCheck odd|signed12|noisy8      exit 0: round trip exact; 3: undecodable; 4: different
#include "dcmtk/config/osconfig.h"
#include "dcmtk/dcmdata/dctk.h"
#include "dcmtk/dcmdata/dcpxitem.h"
#include "dcmtk/dcmjpls/djdecode.h"
#include "dcmtk/dcmjpls/djencode.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

int
main(int argc, char * argv[])
{
  const std::string image = argc > 1 ? argv[1] : "odd";
  unsigned int      rows = 64, columns = 64, bitsStored = 8;
  bool              isSigned = false, noisy = false;
  if (image == "odd")
  {
    rows = 7;
    columns = 5;
  }
  else if (image == "signed12")
  {
    bitsStored = 12;
    isSigned = true;
  }
  else if (image == "noisy8")
  {
    noisy = true;
  }
  else
  {
    std::fprintf(stderr, "usage: %s odd|signed12|noisy8\n", argv[0]);
    return 2;
  }
  DJLSEncoderRegistration::registerCodecs();
  DJLSDecoderRegistration::registerCodecs();
  OFLog::configure(OFLogger::FATAL_LOG_LEVEL);

  const unsigned int bitsAllocated = bitsStored > 8 ? 16 : 8;
  const long         low = isSigned ? -(1L << (bitsStored - 1)) : 0;
  const long         high = isSigned ? (1L << (bitsStored - 1)) - 1 : (1L << bitsStored) - 1;
  std::mt19937       random(1);
  std::uniform_int_distribution<long> uniform(low, high);
  std::vector<Uint16>                 stored(static_cast<std::size_t>(rows) * columns);
  for (std::size_t i = 0; i < stored.size(); ++i)
  {
    const long value =
      noisy ? uniform(random) : low + static_cast<long>((high - low) * (0.5 + 0.5 * std::sin(0.01 * i)));
    stored[i] = static_cast<Uint16>(value < 0 ? value + (1L << bitsAllocated) : value);
  }

  DcmFileFormat file;
  DcmDataset *  dataset = file.getDataset();
  dataset->putAndInsertString(DCM_SOPClassUID, UID_MRImageStorage);
  dataset->putAndInsertString(DCM_PhotometricInterpretation, "MONOCHROME2");
  dataset->putAndInsertUint16(DCM_SamplesPerPixel, 1);
  dataset->putAndInsertUint16(DCM_Rows, rows);
  dataset->putAndInsertUint16(DCM_Columns, columns);
  dataset->putAndInsertUint16(DCM_BitsAllocated, bitsAllocated);
  dataset->putAndInsertUint16(DCM_BitsStored, bitsStored);
  dataset->putAndInsertUint16(DCM_HighBit, bitsStored - 1);
  dataset->putAndInsertUint16(DCM_PixelRepresentation, isSigned ? 1 : 0);
  if (bitsAllocated == 16)
  {
    dataset->putAndInsertUint16Array(DCM_PixelData, stored.data(), stored.size());
  }
  else
  {
    const std::vector<Uint8> bytes(stored.begin(), stored.end());
    dataset->putAndInsertUint8Array(DCM_PixelData, bytes.data(), bytes.size());
  }

  if (dataset->chooseRepresentation(EXS_JPEGLSLossless, nullptr).bad())
  {
    std::printf("%s: DCMTK's JPEG-LS encoder refused the image\n", image.c_str());
    return 5;
  }
  const OFCondition decoded = dataset->chooseRepresentation(EXS_LittleEndianExplicit, nullptr);
  if (decoded.bad())
  {
    std::printf("%s: the JPEG-LS stream DCMTK wrote cannot be decoded: %s\n", image.c_str(), decoded.text());
    return 3;
  }
  std::size_t different = 0;
  if (bitsAllocated == 16)
  {
    const Uint16 * back = nullptr;
    dataset->findAndGetUint16Array(DCM_PixelData, back);
    for (std::size_t i = 0; i < stored.size(); ++i)
      different += back[i] != stored[i] ? 1 : 0;
  }
  else
  {
    const Uint8 * back = nullptr;
    dataset->findAndGetUint8Array(DCM_PixelData, back);
    for (std::size_t i = 0; i < stored.size(); ++i)
      different += back[i] != stored[i] ? 1 : 0;
  }
  std::printf("%s: %zu of %zu pixels differ after the round trip\n", image.c_str(), different, stored.size());
  return different == 0 ? 0 : 4;
}
