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
// LocalLowRankDenoisingExample: MP-PCA denoising of a 4D series (diffusion, fMRI, multi-echo) in an ITK pipeline.
// Reads a 4D image, denoises it with the local low-rank filter (the rank and the noise level of every patch come
// from the Marchenko-Pastur law, as in MRtrix3's dwidenoise), and writes the denoised series and the noise map.
//
//   LocalLowRankDenoisingExample DWI OUTPUT NOISE_MAP [MASK]
//   LocalLowRankDenoisingExample dwi.nii.gz dwi_denoised.nii.gz sigma.nii.gz brain_mask.nii.gz
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkLocalLowRankDenoisingImageFilter.h"

#include <cstdlib>
#include <iostream>

int
main(int argc, char * argv[])
{
  if (argc < 4)
  {
    std::cerr << "Usage: " << argv[0] << " DWI OUTPUT NOISE_MAP [MASK]\n";
    return EXIT_FAILURE;
  }
  using SeriesType = itk::Image<float, 4>; // x, y, z, volume
  using FilterType = itk::LocalLowRankDenoisingImageFilter<SeriesType>;
  try
  {
    auto filter = FilterType::New();
    filter->SetInput(itk::ReadImage<SeriesType>(argv[1]));
    if (argc > 4)
    {
      filter->SetMaskImage(itk::ReadImage<FilterType::MaskImageType>(argv[4])); // voxels outside are copied
    }
    // The defaults (svdlr/Defaults.h): a cube patch just large enough for the volume count, MP-PCA with dwidenoise
    // 3.0's estimator, each voxel the mean over the patches holding it, the kept singular values shrunk optimally.
    itk::WriteImage(filter->GetOutput(), argv[2], true);
    itk::WriteImage(filter->GetNoiseSigmaOutput(), argv[3], true);
    std::cout << "wrote " << argv[2] << " and " << argv[3] << " (patch " << filter->GetPatchSizeUsed() << ", backend "
              << filter->GetBackendUsed() << ")\n";
  }
  catch (const itk::ExceptionObject & error)
  {
    std::cerr << error.GetDescription() << "\n";
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
