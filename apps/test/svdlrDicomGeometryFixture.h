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
#ifndef svdlrDicomGeometryFixture_h
#define svdlrDicomGeometryFixture_h

// What the tests of series that are not one volume share (SVDLowRankDicomGeometryGTest reads them through the
// library, SVDLowRankDicomGeometryToolGTest through the tools): the DicomGeometry fixture, which writes the
// localizer, two-echo and Enhanced MR series cut from Colin27, and its small helpers.
#include "SVDLowRankDicomFrames.h"
#include "svdlrDicomGeometryTestData.h"
#include "svdlrToolRun.h"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace svdlr_test
{

/** Colin27 values as physical values under a rescale: stored = Colin27's whole value. */
inline PlaneImage
Rescaled(PlaneImage plane, double slope, double intercept)
{
  for (double & v : plane.values)
    v = v * slope + intercept;
  return plane;
}

inline DicomVolumeImage::Pointer
ReadFileWithGdcm(const std::string & file)
{
  auto reader = itk::ImageFileReader<DicomVolumeImage>::New();
  reader->SetImageIO(itk::GDCMImageIO::New());
  reader->SetFileName(file);
  reader->Update();
  return reader->GetOutput();
}

inline const svdlr_io::DicomSeriesSummary &
OnlySeries(const std::vector<svdlr_io::DicomSeriesSummary> & series)
{
  EXPECT_EQ(series.size(), 1u);
  return series.at(0);
}

/** The Enhanced test files' value of a Colin27 voxel at `echo` (1-based): half of it, and the second echo 60% of
 * the first (whole stored values under every frame's rescale). */
inline double
EnhancedValue(double colin, int echo)
{
  return 0.5 * (echo == 1 ? colin : std::round(0.6 * colin));
}

/** `from` recompressed by GDCM's gdcmconv as JPEG 2000 into `to` (lossless, or lossy at quality 30, which
 * marks the file LossyImageCompression "01"); false when gdcmconv is missing or fails. */
inline bool
Jpeg2000Copy(const std::string & from, const std::string & to, bool lossy)
{
  const std::string command =
    std::string("gdcmconv ") + (lossy ? "--lossy --j2k -q 30 '" : "--j2k '") + from + "' '" + to + "' > /dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

class DicomGeometry : public RandomTest
{
protected:
  void
  SetUp() override
  {
    RandomTest::SetUp();
    svdlr_io::SilenceDicomWarnings();
    m_Colin = Colin27OrNull();
  }

  /** The tri-planar localizer of Colin27 as three classic files, values rescaled by (0.5, 10). */
  std::vector<PlaneImage>
  WriteLocalizer(const std::string & folder)
  {
    char                    uid[100];
    const std::string       seriesUID = dcmGenerateUniqueIdentifier(uid, SITE_SERIES_UID_ROOT);
    std::vector<PlaneImage> planes;
    int                     n = 0;
    for (const PlaneSpec & spec : TriPlanarLocalizer(m_Colin))
    {
      planes.push_back(Rescaled(CutPlane(m_Colin, spec), 0.5, 10.0));
      WriteClassicImage(
        folder + "/loc" + std::to_string(n) + ".dcm", planes.back(), seriesUID, "3-plane loc", n + 1, 0.5, 10.0);
      ++n;
    }
    return planes;
  }

  /** Two echoes of eight axial slices (crop 64x72), files under shuffled names; echo 2 at 60% of echo 1. */
  void
  WriteTwoEchoes(const std::string & folder)
  {
    char              uid[100];
    const std::string seriesUID = dcmGenerateUniqueIdentifier(uid, SITE_SERIES_UID_ROOT);
    std::vector<std::pair<std::string, std::function<void()>>> writes;
    for (int echo = 1; echo <= 2; ++echo)
    {
      int k = 0;
      for (const PlaneSpec & spec : AxialStack(70, 3, 8, 60, 70, 64, 72))
      {
        PlaneImage plane = CutPlane(m_Colin, spec);
        for (double & v : plane.values)
          v = echo == 1 ? v : std::round(0.6 * v);
        const std::string path = folder + "/" +
                                 std::to_string(std::uniform_int_distribution<int>(1000, 9999)(m_Random)) + "_" +
                                 std::to_string(echo) + "_" + std::to_string(k) + ".dcm";
        WriteClassicImage(
          path, plane, seriesUID, "dual echo", 8 * (echo - 1) + k + 1, 1.0, 0.0, [echo](DcmDataset * d) {
            Put(d, DCM_EchoNumbers, std::to_string(echo));
            Put(d, DCM_EchoTime, echo == 1 ? "10" : "25");
            Put(d, DCM_ScanningSequence, "GR");
            Put(d, DCM_SequenceVariant, "NONE");
          });
        ++k;
      }
    }
  }

  /** An Enhanced MR file: `echoes` echoes of six axial slices (crop 48x40), frames slice-major (echoes
   * interleaved), values EnhancedValue(); with `varyRescale` each frame has its own rescale (slope 0.5, 0.25 or
   * 0.125 by frame, intercept -7 per echo), else all (0.5, 0). */
  std::vector<EnhancedFrame>
  WriteEnhanced(const std::string & path, int echoes, bool varyRescale = true)
  {
    std::vector<EnhancedFrame> frames;
    int                        inStack = 1;
    for (const PlaneSpec & spec : AxialStack(80, 2, 6, 70, 80, 48, 40))
    {
      for (int echo = 1; echo <= echoes; ++echo)
      {
        EnhancedFrame frame;
        frame.slope = varyRescale ? 0.5 / (1 << (frames.size() % 3)) : 0.5;
        frame.intercept = varyRescale ? -7.0 * echo : 0.0;
        frame.plane = CutPlane(m_Colin, spec);
        for (double & v : frame.plane.values)
          v = EnhancedValue(v, echo);
        frame.echoTime = 8.0 * echo;
        frame.echoIndex = echo;
        frame.inStack = inStack;
        frames.push_back(frame);
      }
      ++inStack;
    }
    char uid[100];
    WriteEnhancedMr(path, frames, dcmGenerateUniqueIdentifier(uid, SITE_SERIES_UID_ROOT), "enhanced me");
    return frames;
  }

  /** The two-echo Enhanced MR file at enhanced/multi.dcm (WriteEnhanced) and its lossless JPEG 2000 copy at
   * j2k/multi.dcm; false when gdcmconv fails. */
  bool
  WriteEnhancedAndJpeg2000Copy()
  {
    Folder("enhanced");
    Folder("j2k");
    WriteEnhanced(Path("enhanced/multi.dcm"), 2);
    return Jpeg2000Copy(Path("enhanced/multi.dcm"), Path("j2k/multi.dcm"), false);
  }

  ToolRun
  Tool(const std::string & arguments)
  {
    return RunToolIn(m_Directory, SVDLR_TOOL, arguments);
  }

  DicomVolumeImage::Pointer m_Colin;
};

#define SVDLR_COLIN27_OR_SKIP()                                                                                        \
  if (!m_Colin)                                                                                                        \
  {                                                                                                                    \
    GTEST_SKIP() << "Colin27 (mricron-data) not installed";                                                            \
  }

#define SVDLR_GDCMCONV_OR_SKIP()                                                                                       \
  if (std::system("command -v gdcmconv > /dev/null 2>&1") != 0)                                                        \
  {                                                                                                                    \
    if (TestDataRequired())                                                                                            \
      FAIL() << "gdcmconv is required (apt-get install libgdcm-tools)";                                                \
    GTEST_SKIP() << "gdcmconv (libgdcm-tools) not installed";                                                          \
  }

} // namespace svdlr_test

#endif
