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
#ifndef SVDLowRankSha256_h
#define SVDLowRankSha256_h

// SHA-256, fed in pieces, for the sidecar, which names its inputs by content so that a reader can tell whether a
// file is the one that was processed. OpenSSL's EVP digest does the work (on the CPU's SHA extensions where present);
// this class owns its context and turns a failed call into an exception.

#include <cstddef>
#include <memory>
#include <string>

struct evp_md_ctx_st; // OpenSSL's EVP_MD_CTX, kept out of the callers' includes

namespace svdlr_tools
{

class Sha256
{
public:
  /** Throws std::runtime_error when OpenSSL cannot start a SHA-256 digest. */
  Sha256();

  /** Appends `size` bytes of the message. Throws std::runtime_error when OpenSSL fails. */
  void
  Add(const void * data, std::size_t size);

  /** The digest as 64 lowercase hex digits; the object is spent afterwards. Throws std::runtime_error when OpenSSL
   * fails. */
  std::string
  Hex();

private:
  struct FreeContext
  {
    void
    operator()(evp_md_ctx_st * context) const;
  };
  std::unique_ptr<evp_md_ctx_st, FreeContext> m_Context;
};

} // namespace svdlr_tools

#endif
