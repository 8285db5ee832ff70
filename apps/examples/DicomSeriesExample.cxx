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
// DicomSeriesExample: a DICOM series in, a derived DICOM series out. Reads the one series in a folder
// (through DCMTK, slices ordered along the slice normal), replaces each slice by its rank-k
// reconstruction and writes the result as a new series of the same patient and study.
//
//   DicomSeriesExample DICOM_FOLDER OUTPUT_FOLDER [RANK]
#include "SVDLowRankDicomWriter.h"
#include "SVDLowRankMethodLabels.h"
#include "itkSVDLowRankReconstructionImageFilter.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

int
main(int argc, char * argv[])
{
  if (argc < 3)
  {
    std::cerr << "Usage: " << argv[0] << " DICOM_FOLDER OUTPUT_FOLDER [RANK]\n";
    return EXIT_FAILURE;
  }
  const unsigned int rank = argc > 3 ? static_cast<unsigned int>(std::atoi(argv[3])) : 20;
  try
  {
    // The folder must hold exactly one series; SelectDicomSeries lists them otherwise. Files left out as no part
    // of an image series (a DICOMDIR, a report) are told, never dropped without a word.
    svdlr_io::DicomSearchNotes  notes;
    const auto                  series = svdlr_io::FindDicomSeries({ argv[1] }, &notes);
    for (const std::string & file : notes.leftOut)
    {
      std::cerr << "note: left out " << file << "\n";
    }
    const svdlr_io::DicomVolume volume = svdlr_io::ReadDicomSeries(svdlr_io::SelectDicomSeries(series, ""));

    using ImageType = svdlr_io::DicomVolumeImage; // float, physical values (rescale applied)
    auto filter = itk::SVDLowRankReconstructionImageFilter<ImageType>::New();
    filter->SetInput(volume.image);
    filter->SetRank(rank);
    filter->Update();

    // Patient, study and pixel representation come from the source; the series is named after the policy, as
    // SVDLowRankReconstructImage names it ("SVD rank 20 of <the source's description>").
    const auto options = svdlr_io::DerivedSeriesOptions(svdlr::RankPolicy::Fixed(rank),
                                                        filter->GetEffectiveRanks(),
                                                        &volume,
                                                        "",
                                                        svdlr_io::DicomOutputSyntax::Keep);
    std::filesystem::create_directories(argv[2]);
    const auto files = svdlr_io::WriteDicomSeries(filter->GetOutput(), argv[2], options);
    std::cout << "wrote " << files.size() << " files to " << argv[2] << ": \"" << options.seriesDescription << "\"\n";
  }
  catch (const std::exception & error)
  {
    std::cerr << error.what() << "\n";
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
