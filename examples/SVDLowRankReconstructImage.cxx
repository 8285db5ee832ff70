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
// SVDLowRankReconstructImage: the module's command-line tool.
// Reads a 2D image or 3D volume (NIfTI, PNG, MHA, NRRD: anything ITK reads), replaces each slice by its
// rank-k truncated SVD reconstruction, writes the result and a PNG figure, and prints a summary.
#include "SVDLowRankFigure.h"
#include "SVDLowRankOptions.h"

#include "itkCommand.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkImageIOFactory.h"
#include "itkSVDLowRankReconstructionImageFilter.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace
{
using namespace svdlr_examples;

// Writes to a temporary name beside `path` and renames it into place only when complete, so an error
// never leaves a partial output behind.
template <typename TImage>
void
WriteAtomically(const TImage * image, const std::string & path)
{
  const std::string temporary = TemporaryNameFor(path);
  try
  {
    itk::WriteImage(image, temporary, true);
  }
  catch (...)
  {
    std::remove(temporary.c_str());
    throw;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
  {
    std::remove(temporary.c_str());
    throw std::runtime_error("could not move " + temporary + " to " + path);
  }
}

// A one-line progress bar on stderr, shown only on a terminal.
class ProgressBar
{
public:
  explicit ProgressBar(itk::ProcessObject * filter)
    : m_Filter(filter)
    , m_Enabled(isatty(fileno(stderr)) != 0)
  {}
  void
  Show() const
  {
    if (!m_Enabled)
    {
      return;
    }
    const int done = static_cast<int>(40 * m_Filter->GetProgress());
    std::cerr << "\r[" << std::string(done, '#') << std::string(40 - done, ' ') << "] "
              << static_cast<int>(100 * m_Filter->GetProgress()) << "%" << std::flush;
  }
  void
  Finish() const
  {
    if (m_Enabled)
    {
      std::cerr << std::endl;
    }
  }

private:
  itk::ProcessObject * m_Filter;
  bool                 m_Enabled;
};

template <typename TImage>
SliceView
MiddleSlice(const TImage * image, unsigned int axis)
{
  const auto   region = image->GetLargestPossibleRegion();
  const auto   size = region.GetSize();
  unsigned int colAxis = 0, rowAxis = 1;
  if (TImage::ImageDimension == 3)
  {
    colAxis = axis == 0 ? 1 : 0;
    rowAxis = axis == 2 ? 1 : 2;
  }
  SliceView                  view{ size[rowAxis], size[colAxis], {} };
  typename TImage::IndexType index = region.GetIndex();
  if (TImage::ImageDimension == 3)
  {
    index[axis] += static_cast<itk::IndexValueType>(size[axis] / 2);
  }
  view.values.reserve(view.rows * view.cols);
  for (std::size_t r = 0; r < view.rows; ++r)
  {
    for (std::size_t c = 0; c < view.cols; ++c)
    {
      // Rows go up the page in image space; draw the highest row first so the figure is upright.
      index[rowAxis] = region.GetIndex(rowAxis) + static_cast<itk::IndexValueType>(view.rows - 1 - r);
      index[colAxis] = region.GetIndex(colAxis) + static_cast<itk::IndexValueType>(c);
      view.values.push_back(static_cast<double>(image->GetPixel(index)));
    }
  }
  return view;
}

template <typename TPixel, unsigned int Dimension>
int
Run(const ToolOptions & options)
{
  using ImageType = itk::Image<TPixel, Dimension>;
  using FilterType = itk::SVDLowRankReconstructionImageFilter<ImageType, ImageType>;

  const auto input = itk::ReadImage<ImageType>(options.input);
  auto       filter = FilterType::New();
  filter->SetInput(input);
  if (options.energyFraction > 0.0)
  {
    filter->SetEnergyFraction(options.energyFraction);
  }
  else
  {
    filter->SetRank(options.rank);
  }
  const unsigned int axis = options.sliceAxis >= 0 ? static_cast<unsigned int>(options.sliceAxis) : Dimension - 1;
  filter->SetSliceDimension(axis);
  filter->SetBackend(options.backend);
  filter->SetDeviceId(options.deviceId);

  ProgressBar progress(filter);
  auto        onProgress = itk::FunctionCommand::New();
  onProgress->SetCallback([&progress](const itk::EventObject &) { progress.Show(); });
  filter->AddObserver(itk::ProgressEvent(), onProgress);

  const auto start = std::chrono::steady_clock::now();
  filter->Update();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.Finish();

  WriteAtomically(filter->GetOutput(), options.output);

  const auto & ranks = filter->GetEffectiveRanks();
  const std::size_t figureSlice = Dimension == 3 ? input->GetLargestPossibleRegion().GetSize(axis) / 2 : 0;
  if (!options.figure.empty())
  {
    const std::string temporary = TemporaryNameFor(options.figure);
    WriteSliceFigure(temporary, MiddleSlice(input.GetPointer(), axis), MiddleSlice(filter->GetOutput(), axis),
                     filter->GetSingularValues()[figureSlice], ranks[figureSlice]);
    std::rename(temporary.c_str(), options.figure.c_str());
  }

  std::cout << "input:    " << options.input << " (" << input->GetLargestPossibleRegion().GetSize() << ", "
            << itk::ImageIOBase::GetComponentTypeAsString(itk::ImageIOBase::MapPixelType<TPixel>::CType) << ")\n"
            << "slices:   " << ranks.size() << " along axis " << axis << "\n"
            << "ranks:    " << DescribeRanks(ranks) << "\n"
            << "backend:  " << filter->GetBackendUsed() << "\n"
            << "time:     " << seconds << " s (filter only)\n"
            << "output:   " << options.output << "\n";
  if (!options.figure.empty())
  {
    std::cout << "figure:   " << options.figure << " (slice " << figureSlice
              << ": original | reconstruction | |difference| | log singular values, rank in red)\n";
  }
  return 0;
}

template <unsigned int Dimension>
int
RunForPixelType(itk::IOComponentEnum component, const ToolOptions & options)
{
  switch (component)
  {
    case itk::IOComponentEnum::UCHAR:
      return Run<unsigned char, Dimension>(options);
    case itk::IOComponentEnum::SHORT:
      return Run<short, Dimension>(options);
    case itk::IOComponentEnum::USHORT:
      return Run<unsigned short, Dimension>(options);
    case itk::IOComponentEnum::DOUBLE:
      return Run<double, Dimension>(options);
    default: // other types are processed and written as float
      return Run<float, Dimension>(options);
  }
}

} // namespace

int
main(int argc, char * argv[])
{
  ToolOptions options;
  try
  {
    options = ParseToolOptions(argc, argv);
  }
  catch (const UsageError & error)
  {
    std::cerr << "SVDLowRankReconstructImage: " << error.what() << "\n\n" << UsageText();
    return ExitUsage;
  }
  if (options.help)
  {
    std::cout << UsageText();
    return ExitSuccess;
  }

  try
  {
    auto io = itk::ImageIOFactory::CreateImageIO(options.input.c_str(), itk::ImageIOFactory::IOFileModeEnum::ReadMode);
    if (!io)
    {
      std::cerr << "SVDLowRankReconstructImage: cannot read '" << options.input << "': no ITK reader for this file\n";
      return ExitInputError;
    }
    io->SetFileName(options.input);
    io->ReadImageInformation();
    if (io->GetNumberOfComponents() != 1)
    {
      std::cerr << "SVDLowRankReconstructImage: '" << options.input << "' has " << io->GetNumberOfComponents()
                << " components per pixel; only scalar (grey) images are supported\n";
      return ExitInputError;
    }
    const unsigned int dimension = io->GetNumberOfDimensions();
    const bool         flat = dimension == 3 && io->GetDimensions(2) == 1;
    if (dimension == 2 || flat)
    {
      return RunForPixelType<2>(io->GetComponentType(), options);
    }
    if (dimension == 3)
    {
      return RunForPixelType<3>(io->GetComponentType(), options);
    }
    std::cerr << "SVDLowRankReconstructImage: '" << options.input << "' has " << dimension
              << " dimensions; 2D images and 3D volumes are supported\n";
    return ExitInputError;
  }
  catch (const itk::ExceptionObject & error)
  {
    std::cerr << "SVDLowRankReconstructImage: " << error.GetDescription() << "\n";
    return ExitFailure;
  }
  catch (const std::exception & error)
  {
    std::cerr << "SVDLowRankReconstructImage: " << error.what() << "\n";
    return ExitFailure;
  }
}
