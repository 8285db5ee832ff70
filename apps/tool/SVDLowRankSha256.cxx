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

#include "SVDLowRankSha256.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <stdexcept>

namespace svdlr_tools
{
namespace
{

/** Throws what `call` failed with, in OpenSSL's words where its error queue has them. */
[[noreturn]] void
ThrowOpenSslError(const char * call)
{
  std::string message = std::string("SHA-256: OpenSSL's ") + call + " failed";
  if (const unsigned long code = ERR_get_error(); code != 0)
  {
    char reason[256];
    ERR_error_string_n(code, reason, sizeof(reason));
    message += std::string(" (") + reason + ")";
  }
  ERR_clear_error(); // the rest of this thread's queue belongs to this failure too
  throw std::runtime_error(message);
}

} // namespace

void
Sha256::FreeContext::operator()(evp_md_ctx_st * context) const
{
  EVP_MD_CTX_free(context);
}

Sha256::Sha256()
{
  // Without an exit-time cleanup: Sha256Of hashes on background threads that a static destructor joins, and
  // OpenSSL's atexit handler, registered by the first digest after that static was made, would run first and free
  // what a hash still running uses (a crash or a deadlock at exit). The process's end frees it instead.
  if (OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) != 1)
  {
    ThrowOpenSslError("OPENSSL_init_crypto");
  }
  m_Context.reset(EVP_MD_CTX_new());
  if (!m_Context)
  {
    ThrowOpenSslError("EVP_MD_CTX_new");
  }
  if (EVP_DigestInit_ex(m_Context.get(), EVP_sha256(), nullptr) != 1)
  {
    ThrowOpenSslError("EVP_DigestInit_ex");
  }
}

void
Sha256::Add(const void * data, std::size_t size)
{
  if (EVP_DigestUpdate(m_Context.get(), data, size) != 1)
  {
    ThrowOpenSslError("EVP_DigestUpdate");
  }
}

std::string
Sha256::Hex()
{
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int  length = 0;
  if (EVP_DigestFinal_ex(m_Context.get(), digest, &length) != 1)
  {
    ThrowOpenSslError("EVP_DigestFinal_ex");
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string           hex;
  for (unsigned int i = 0; i < length; ++i)
  {
    hex += kDigits[digest[i] >> 4];
    hex += kDigits[digest[i] & 0xf];
  }
  return hex;
}

} // namespace svdlr_tools
