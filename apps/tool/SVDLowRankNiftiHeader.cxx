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
#include "SVDLowRankNiftiHeader.h"

#include "SVDLowRankImageFileCheck.h"
#include "SVDLowRankNiftiWrite.h"

namespace svdlr_tools
{

std::optional<NiftiHeaderFields>
ReadNiftiHeaderFields(const std::string & path)
{
  const auto header = svdlr_io::ReadNiftiHeader(path); // plain files as they are
  return header ? svdlr_io::HeaderFieldsOf(*header) : std::nullopt;
}

void
WriteNiftiHeaderFields(const std::string & path, const NiftiHeaderFields & fields, int compressionLevel)
{
  if (!svdlr_io::IsNiftiGzFileName(path))
  {
    svdlr_io::PatchNiftiFileHeader(path, fields);
    return;
  }
  svdlr_io::RewriteNiftiGzHeaderFields(path, fields, compressionLevel);
}

} // namespace svdlr_tools
