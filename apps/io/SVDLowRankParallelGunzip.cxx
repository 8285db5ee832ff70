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
#include "SVDLowRankParallelGunzip.h"

#include "SVDLowRankGzip.h"
#include "SVDLowRankInflateChunk.h"
#include "SVDLowRankInflateTables.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace svdlr_io
{
namespace
{

using inflate::BlockBoundary;
using inflate::ChunkEnd;
using inflate::InflatedChunk;
using inflate::kMarkerBase;
using inflate::kWindowBytes;

constexpr std::size_t kSmallestChunk = std::size_t{ 1 } << 20;
constexpr std::size_t kLargestChunk = std::size_t{ 8 } << 20;

/** The bytes of the gzip header (RFC 1952 2.3) before the DEFLATE stream; nullopt for anything unusual (a header
 * CRC, reserved flags, a header that does not end), which libdeflate then judges. */
std::optional<std::size_t>
GzipHeaderBytes(const unsigned char * member, std::size_t size)
{
  constexpr unsigned char kText = 1, kExtra = 4, kName = 8, kComment = 16;
  if (size < 18 || !StartsGzipMember(member, size) || (member[3] & ~(kText | kExtra | kName | kComment)) != 0)
  {
    return std::nullopt;
  }
  std::size_t at = 10;
  if ((member[3] & kExtra) != 0)
  {
    at += 2 + (member[10] | (member[11] << 8));
  }
  for (const unsigned char field : { kName, kComment })
  {
    if ((member[3] & field) != 0)
    {
      while (at < size && member[at] != 0)
      {
        ++at;
      }
      ++at;
    }
  }
  return at + 8 < size ? std::optional<std::size_t>(at) : std::nullopt;
}

/** The first block start in [from, to) (bits) that looks like one and decodes like one (ConfirmBlockStart). */
std::optional<BlockBoundary>
FindBlockStart(const unsigned char * data, std::size_t size, std::uint64_t from, std::uint64_t to,
               const std::atomic<bool> & cancel)
{
  inflate::BlockTables scratch;
  to = std::min<std::uint64_t>(to, std::uint64_t{ size } * 8);
  for (std::uint64_t byte = from / 8; byte * 8 < to; ++byte)
  {
    if (cancel.load(std::memory_order_relaxed))
    {
      return std::nullopt;
    }
    if (byte * 8 >= from && inflate::LooksLikeStoredLength(data, size, byte) &&
        inflate::ConfirmBlockStart(data, size, { byte * 8, true }))
    {
      return BlockBoundary{ byte * 8, true };
    }
    // The eight bit offsets of this byte from one word: most fail on BFINAL 0, BTYPE 10 and the code counts, tested
    // here before the header is read.
    const std::uint64_t word = inflate::BitsAt(data, size, byte * 8);
    for (unsigned shift = 0; shift < 8; ++shift)
    {
      const std::uint64_t bits = word >> shift, bit = byte * 8 + shift;
      if ((bits & 7u) != 4u || ((bits >> 3) & 31u) > 29 || ((bits >> 8) & 31u) > 29 || bit < from || bit >= to)
      {
        continue;
      }
      if (inflate::LooksLikeDynamicHeader(data, size, bit, scratch) &&
          inflate::ConfirmBlockStart(data, size, { bit, false }))
      {
        return BlockBoundary{ bit, false };
      }
    }
  }
  return std::nullopt;
}

/** The (at most) 32 KiB of output before a chunk, right-aligned: byte w of the array is what marker w names. */
struct Window
{
  std::array<unsigned char, kWindowBytes> bytes{};
  std::size_t                             size{ 0 }; // the last `size` bytes are known (the stream may be shorter)

  const unsigned char *
  Known() const
  {
    return bytes.data() + (kWindowBytes - size);
  }
};

/** Output bytes [first, first + count) of `chunk` into `to`, markers replaced from `window`; false when a marker
 * names a byte before the stream's start (corrupt data). */
bool
ResolveOutput(const InflatedChunk & chunk, const Window & window, std::uint64_t first, std::size_t count,
              unsigned char * to)
{
  const std::size_t wide = chunk.symbols.size();
  const std::size_t lowest = kWindowBytes - window.size; // markers below this name no byte
  bool              ok = true;
  std::size_t       i = 0;
  for (; i < count && first + i < wide; ++i)
  {
    const std::uint16_t symbol = chunk.symbols[static_cast<std::size_t>(first + i)];
    if (symbol < kMarkerBase)
    {
      to[i] = static_cast<unsigned char>(symbol);
      continue;
    }
    const std::size_t w = symbol - kMarkerBase;
    ok = ok && w >= lowest;
    to[i] = window.bytes[w];
  }
  if (i < count)
  {
    const unsigned char * bytes = chunk.bytes.data() + chunk.bytesWindow + (first + i - wide);
    std::copy(bytes, bytes + (count - i), to + i);
  }
  return ok;
}

/** The window after `chunk`: the last 32 KiB of `before`'s bytes followed by the chunk's output. */
bool
WindowAfter(const InflatedChunk & chunk, const Window & before, Window & after)
{
  const std::uint64_t size = chunk.Size();
  const std::size_t   fromChunk = static_cast<std::size_t>(std::min<std::uint64_t>(size, kWindowBytes));
  const std::size_t   fromBefore = std::min(before.size, kWindowBytes - fromChunk);
  after.size = fromBefore + fromChunk;
  std::copy(before.bytes.end() - fromBefore, before.bytes.end(), after.bytes.end() - after.size);
  return ResolveOutput(chunk, before, size - fromChunk, fromChunk, after.bytes.end() - fromChunk);
}

/** One chunk on its way: decoded, placed in order, copied out. */
struct Slot
{
  InflatedChunk           chunk;
  bool                    decoded{ false };
  std::unique_ptr<Window> window;      // the 32 KiB before it, from its placing to its copy (not for every chunk)
  std::uint64_t           offset{ 0 }; // where its output goes, from `produced`
  std::uint64_t           size{ 0 };
  std::uint32_t           crc{ 0 };
  bool                    resolved{ true };
};

/** The chunks of one member, decoded by workers and placed in order by the calling thread. */
class MemberPipeline
{
public:
  MemberPipeline(const unsigned char * deflate, std::size_t size, std::size_t chunkBytes, unsigned threads,
                 ByteBuffer & out, std::size_t produced, std::uint64_t mostOutput)
    : m_Deflate(deflate)
    , m_Size(size)
    , m_ChunkBytes(chunkBytes)
    , m_Slots((size + chunkBytes - 1) / chunkBytes)
    , m_Out(out)
    , m_Produced(produced)
    , m_MostOutput(mostOutput)
    , m_InFlight(2 * std::size_t{ threads } + 1)
  {
    for (unsigned t = 0; t < threads; ++t)
    {
      m_Workers.emplace_back([this] { Work(); });
    }
  }
  ~MemberPipeline() { Stop(); }
  MemberPipeline(const MemberPipeline &) = delete;
  MemberPipeline &
  operator=(const MemberPipeline &) = delete;

  /** Places every chunk in order; true when the stream was decoded to its final block, with its size and CRC. */
  bool
  Place(std::uint64_t & made, std::uint32_t & crc, std::uint64_t & streamEnd, GunzipReport & report);

  bool
  EndedInFirstChunk() const
  {
    return m_EndedInFirstChunk;
  }

private:
  void
  Work();
  void
  Decode(std::size_t k);
  void
  CopyOut(std::size_t k);
  InflatedChunk
  Spare();
  std::uint64_t
  NominalEnd(std::size_t k) const
  {
    return k + 1 < m_Slots.size() ? std::uint64_t{ m_ChunkBytes } * 8 * (k + 1) : UINT64_MAX;
  }
  inflate::ChunkRequest
  Request(const BlockBoundary & start, std::size_t k) const
  {
    inflate::ChunkRequest r;
    r.data = m_Deflate;
    r.size = m_Size;
    r.start = start;
    r.stopFrom = NominalEnd(k);
    r.mostOutput = m_MostOutput;
    r.cancel = &m_Abandon;
    return r;
  }
  void
  Stop()
  {
    {
      const std::lock_guard<std::mutex> lock(m_Mutex);
      m_Abandon = true;
      m_Quit = true;
    }
    m_Changed.notify_all();
    for (std::thread & worker : m_Workers)
    {
      worker.join();
    }
    m_Workers.clear();
  }

  const unsigned char *        m_Deflate;
  std::size_t                  m_Size;
  std::size_t                  m_ChunkBytes;
  std::vector<Slot>            m_Slots;
  ByteBuffer &                m_Out;
  std::size_t                  m_Produced;
  std::uint64_t                m_MostOutput;
  std::size_t                  m_InFlight; // chunks decoded but not yet copied out, at most
  std::vector<std::thread>     m_Workers;
  std::mutex                   m_Mutex;
  std::condition_variable      m_Changed;
  std::atomic<bool>            m_Abandon{ false }; // decodes stop at their next block boundary, none starts
  bool                         m_Quit{ false };
  std::size_t                  m_NextToDecode{ 0 };
  std::size_t                  m_Freed{ 0 };   // chunks copied out (or dropped)
  std::deque<std::size_t>      m_ToCopy;      // placed chunks, for the workers to copy out
  std::vector<InflatedChunk>   m_Spares;      // chunks copied out, whose memory the next decodes reuse
  std::size_t                  m_Copying{ 0 }; // copies queued or running
  bool                         m_EndedInFirstChunk{ false };
};

void
MemberPipeline::Work()
{
  for (;;)
  {
    std::size_t k = 0;
    bool        copy = false;
    {
      std::unique_lock<std::mutex> lock(m_Mutex);
      m_Changed.wait(lock, [&] {
        return m_Quit || !m_ToCopy.empty() ||
               (!m_Abandon && m_NextToDecode < m_Slots.size() && m_NextToDecode < m_Freed + m_InFlight);
      });
      if (m_Quit)
      {
        return;
      }
      copy = !m_ToCopy.empty(); // copies first: they free memory and the next decodes wait on them
      if (copy)
      {
        k = m_ToCopy.front();
        m_ToCopy.pop_front();
      }
      else
      {
        k = m_NextToDecode++;
      }
    }
    try
    {
      copy ? CopyOut(k) : Decode(k);
    }
    catch (...)
    {
      // Out of memory: the chunk counts as undecodable (the calling thread decodes its range or gives up), or as not
      // copied out (the member goes to libdeflate).
      if (copy)
      {
        m_Slots[k].resolved = false;
      }
      else
      {
        m_Slots[k].chunk = InflatedChunk{}; // ChunkEnd::Error
      }
    }
    {
      const std::lock_guard<std::mutex> lock(m_Mutex);
      if (copy)
      {
        --m_Copying;
        ++m_Freed;
      }
      else
      {
        m_Slots[k].decoded = true;
      }
    }
    m_Changed.notify_all();
  }
}

InflatedChunk
MemberPipeline::Spare()
{
  const std::lock_guard<std::mutex> lock(m_Mutex);
  if (m_Spares.empty())
  {
    return {};
  }
  InflatedChunk spare = std::move(m_Spares.back());
  m_Spares.pop_back();
  return spare;
}

void
MemberPipeline::Decode(std::size_t k)
{
  Slot & slot = m_Slots[k];
  if (k == 0)
  {
    inflate::ChunkRequest r = Request({ 0, false }, 0);
    r.windowKnown = true; // the stream's start: nothing before it
    slot.chunk = inflate::InflateChunk(r, Spare());
    return;
  }
  const std::uint64_t from = std::uint64_t{ m_ChunkBytes } * 8 * k;
  const auto          start =
    FindBlockStart(m_Deflate, m_Size, from, from + std::uint64_t{ m_ChunkBytes } * 8, m_Abandon);
  if (!start)
  {
    slot.chunk.end = ChunkEnd::Error; // no start found: the chunk before is decoded on through this one's range
    return;
  }
  inflate::ChunkRequest r = Request(*start, k);
  r.windowKnown = false;
  slot.chunk = inflate::InflateChunk(r, Spare());
}

void
MemberPipeline::CopyOut(std::size_t k)
{
  Slot &              slot = m_Slots[k];
  const std::uint64_t size = slot.chunk.Size();
  unsigned char *     to = m_Out.data() + m_Produced + slot.offset;
  slot.resolved = ResolveOutput(slot.chunk, *slot.window, 0, static_cast<std::size_t>(size), to);
  slot.window.reset();
  slot.crc = Crc32(0, to, static_cast<std::size_t>(size)); // beside the copy, while the bytes are in cache
  const std::lock_guard<std::mutex> lock(m_Mutex);
  m_Spares.push_back(std::move(slot.chunk));
  slot.chunk = InflatedChunk{};
}

bool
MemberPipeline::Place(std::uint64_t & made, std::uint32_t & crc, std::uint64_t & streamEnd, GunzipReport & report)
{
  Window            window; // the output's last 32 KiB so far
  BlockBoundary     at{ 0, false };
  std::uint64_t     total = 0;
  bool              ended = false, ok = true;
  const std::size_t mostCatchUps = std::max<std::size_t>(2, m_Slots.size() / 4);
  std::size_t       catchUps = 0, placed = 0;
  for (std::size_t k = 0; k < m_Slots.size() && ok && !ended; ++k)
  {
    Slot & slot = m_Slots[k];
    {
      std::unique_lock<std::mutex> lock(m_Mutex);
      m_Changed.wait(lock, [&] { return slot.decoded; });
    }
    if (slot.chunk.end == ChunkEnd::Error || !(slot.chunk.start == at))
    {
      // Not where the chunk before stopped: a false block start, or one the search missed. This chunk's range is
      // decoded again from where the last one stopped, now that its window is known. Many of them (a stream of
      // fixed-Huffman blocks, which the search does not look for) and libdeflate is faster. When the chunk before
      // stopped past this one's range (a block longer than a chunk), there is nothing to decode again.
      if (at.bit < NominalEnd(k) && ++catchUps > mostCatchUps)
      {
        ok = false;
        break;
      }
      inflate::ChunkRequest r = Request(at, k);
      r.windowKnown = true;
      r.window = window.Known();
      r.windowSize = window.size;
      slot.chunk = inflate::InflateChunk(r, std::move(slot.chunk));
      ok = slot.chunk.end != ChunkEnd::Error;
    }
    slot.offset = total;
    slot.size = slot.chunk.Size();
    total += slot.size;
    slot.window = std::make_unique<Window>(window);
    ok = ok && total <= m_MostOutput && WindowAfter(slot.chunk, *slot.window, window);
    if (!ok)
    {
      break;
    }
    at = slot.chunk.stop;
    ended = slot.chunk.end == ChunkEnd::StreamEnd;
    m_EndedInFirstChunk = ended && k == 0;
    if (ended)
    {
      m_Abandon = true; // what the chunks after it decode lies past the member
    }
    std::unique_lock<std::mutex> lock(m_Mutex);
    if (m_Produced + total > m_Out.size())
    {
      // The caller's buffer is short: it grows once no copy writes into it.
      m_Changed.wait(lock, [&] { return m_Copying == 0; });
      m_Out.resize(static_cast<std::size_t>(m_Produced +
                                            std::min(std::max(total, 2 * (m_Out.size() - m_Produced)), m_MostOutput)));
    }
    ++m_Copying;
    ++placed;
    m_ToCopy.push_back(k);
    lock.unlock();
    m_Changed.notify_all();
  }
  m_Abandon = true;
  {
    std::unique_lock<std::mutex> lock(m_Mutex);
    m_Changed.notify_all();
    m_Changed.wait(lock, [&] { return m_Copying == 0; });
  }
  Stop();
  report.catchUps += catchUps;
  if (!ok || !ended)
  {
    return false;
  }
  // The CRC of the whole output, from each chunk's (computed as it was copied out).
  crc = 0;
  for (std::size_t k = 0; k < placed; ++k)
  {
    if (!m_Slots[k].resolved)
    {
      return false;
    }
    crc = Crc32Combine(crc, m_Slots[k].crc, m_Slots[k].size);
  }
  made = total;
  streamEnd = at.bit / 8;
  return true;
}

} // namespace

GunzipMemberResult
GunzipMember(const unsigned char *        member,
             std::size_t                  size,
             ByteBuffer &                 out,
             std::size_t                  produced,
             std::uint64_t                mostOutput,
             unsigned                     threads,
             const GunzipSettings &       settings,
             GunzipReport *               report)
{
  GunzipMemberResult result;
  const auto         header = GzipHeaderBytes(member, size);
  if (!header || threads < 1 || size - *header < std::max<std::size_t>(settings.minimumBytes, 1))
  {
    return result;
  }
  // A few chunks a thread, so that the last ones do not leave threads idle, of 1 to 8 MiB (smaller chunks search and
  // resolve more for the same output).
  const std::size_t deflateBytes = size - *header;
  const std::size_t chunkBytes =
    settings.chunkBytes > 0
      ? settings.chunkBytes
      : std::clamp<std::size_t>(deflateBytes / (3 * std::size_t{ threads }), kSmallestChunk, kLargestChunk);
  if (deflateBytes <= chunkBytes)
  {
    return result; // one chunk: libdeflate is faster at it
  }
  GunzipReport      scratch;
  GunzipReport &    told = report != nullptr ? *report : scratch;
  std::uint64_t made = 0, streamEnd = 0;
  std::uint32_t crc = 0;
  bool          placed = false, small = false;
  {
    MemberPipeline pipeline(member + *header, deflateBytes, chunkBytes, threads, out, produced, mostOutput);
    told.threads = threads;
    told.chunks += (deflateBytes + chunkBytes - 1) / chunkBytes;
    placed = pipeline.Place(made, crc, streamEnd, told);
    small = pipeline.EndedInFirstChunk();
  }
  result.endedInFirstChunk = small;
  if (placed)
  {
    // The trailer: CRC-32 and size modulo 2^32 of the output, which was copied out in chunks at known offsets.
    const unsigned char * trailer = member + *header + streamEnd;
    if (*header + streamEnd + 8 <= size)
    {
      const std::uint32_t storedCrc = trailer[0] | (trailer[1] << 8) | (trailer[2] << 16) |
                                      (static_cast<std::uint32_t>(trailer[3]) << 24);
      const std::uint32_t storedSize = trailer[4] | (trailer[5] << 8) | (trailer[6] << 16) |
                                       (static_cast<std::uint32_t>(trailer[7]) << 24);
      if (storedSize == static_cast<std::uint32_t>(made) && storedCrc == crc)
      {
        result.done = true;
        result.used = *header + static_cast<std::size_t>(streamEnd) + 8;
        result.made = static_cast<std::size_t>(made);
        ++told.members;
        return result;
      }
    }
  }
  ++told.fallbacks;
  return result;
}

} // namespace svdlr_io
