// A downstream program: reads a volume, reconstructs it at rank 10, prints what the filter reports.
#include "itkImageFileReader.h"
#include "itkSVDLowRankReconstructionImageFilter.h"

#include <iostream>

int
main(int argc, char * argv[])
{
  if (argc != 2)
  {
    std::cerr << "usage: consumer IMAGE" << std::endl;
    return 2;
  }
  using ImageType = itk::Image<float, 3>;
  auto filter = itk::SVDLowRankReconstructionImageFilter<ImageType>::New();
  filter->SetInput(itk::ReadImage<ImageType>(argv[1]));
  filter->SetRank(10);
  filter->Update();
  std::cout << "slices " << filter->GetEffectiveRanks().size() << ", rank " << filter->GetEffectiveRanks()[0]
            << ", backend " << filter->GetBackendUsed() << std::endl;
  return 0;
}
