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
// One gzip member decoded on several threads (SVDLowRankParallelGunzip.h) gives libdeflate's bytes, whatever wrote
// the member (zlib at levels 1, 6 and 9, fixed-Huffman and stored blocks, libdeflate), whatever the data (random
// bytes, noisy int16 and float32 MRI-like values, repetitive data whose long matches cross the chunks), on 1 to 16
// threads and chunks small enough that two cores see many boundaries; truncated and corrupt files get libdeflate's
// answer; a false block start is found out and decoded past.
#include "SVDLowRankGzip.h"
#include "svdlr/CpuThreads.h"
#include "svdlrJobOnAnotherThread.h"
#include "svdlrTestScratch.h"

#include <gtest/gtest.h>
#include <libdeflate.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace
{

using Bytes = svdlr_io::ByteBuffer; // what the decoder fills and the tests compare with

/** A gzip member written by zlib (`strategy` Z_FIXED gives fixed-Huffman blocks, level 0 stored ones). */
Bytes
ZlibGzip(const Bytes & data, int level, int strategy = Z_DEFAULT_STRATEGY)
{
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, strategy), Z_OK);
  Bytes out(deflateBound(&z, data.size()) + 64);
  z.next_in = const_cast<unsigned char *>(data.data());
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

/** A gzip member written by libdeflate's one-shot compressor. */
Bytes
LibdeflateGzip(const Bytes & data, int level)
{
  libdeflate_compressor * c = libdeflate_alloc_compressor(level);
  Bytes                   out(libdeflate_gzip_compress_bound(c, data.size()));
  out.resize(libdeflate_gzip_compress(c, data.data(), data.size(), out.data(), out.size()));
  libdeflate_free_compressor(c);
  return out;
}

/** The serial path's answer: libdeflate on one thread. */
svdlr_io::Decompressed
Serial(const Bytes & file, std::uint64_t expected)
{
  svdlr_io::GunzipSettings one;
  one.threads = 1;
  return svdlr_io::DecompressGzip(file.data(), file.size(), expected, one);
}

svdlr_io::Decompressed
Parallel(const Bytes & file, std::uint64_t expected, unsigned threads, std::size_t chunk, svdlr_io::GunzipReport * r)
{
  svdlr_io::GunzipSettings settings;
  settings.threads = threads;
  settings.chunkBytes = chunk;
  settings.minimumBytes = 1;
  return svdlr_io::DecompressGzip(file.data(), file.size(), expected, settings, r);
}

template <typename T>
void
Append(Bytes & bytes, T value)
{
  unsigned char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  bytes.insert(bytes.end(), raw, raw + sizeof(T));
}

/** The kinds of data the reader meets, about `size` bytes each. */
Bytes
RandomBytes(std::mt19937 & random, std::size_t size)
{
  Bytes bytes(size);
  for (unsigned char & b : bytes)
  {
    b = static_cast<unsigned char>(random());
  }
  return bytes;
}

/** A smooth image with Gaussian noise, as a magnitude series stores it. */
Bytes
NoisyInt16(std::mt19937 & random, std::size_t size)
{
  std::normal_distribution<double> noise(0.0, 40.0);
  Bytes                            bytes;
  for (std::size_t i = 0; bytes.size() < size; ++i)
  {
    const double signal = 800.0 + 600.0 * std::sin(i * 0.001) * std::cos(i * 0.00037);
    Append(bytes, static_cast<std::int16_t>(std::lround(std::max(0.0, signal + noise(random)))));
  }
  return bytes;
}

Bytes
NoisyFloat32(std::mt19937 & random, std::size_t size)
{
  std::normal_distribution<float> noise(0.0f, 0.05f);
  Bytes                           bytes;
  for (std::size_t i = 0; bytes.size() < size; ++i)
  {
    Append(bytes, static_cast<float>(1.0 + 0.5 * std::sin(i * 0.002)) + noise(random));
  }
  return bytes;
}

/** Phrases drawn from a small dictionary, with long runs of one repeated phrase: matches of 258 bytes everywhere,
 * chained across the chunks. */
Bytes
Repetitive(std::mt19937 & random, std::size_t size)
{
  std::vector<Bytes> phrases;
  for (int p = 0; p < 300; ++p)
  {
    phrases.push_back(RandomBytes(random, 20 + random() % 400));
  }
  Bytes bytes;
  while (bytes.size() < size)
  {
    const Bytes & phrase = phrases[random() % phrases.size()];
    const int     times = random() % 8 == 0 ? 50 + static_cast<int>(random() % 200) : 1;
    for (int t = 0; t < times; ++t)
    {
      bytes.insert(bytes.end(), phrase.begin(), phrase.end());
    }
    if (random() % 4 == 0)
    {
      bytes.push_back(static_cast<unsigned char>(random())); // a literal between matches
    }
  }
  bytes.resize(size);
  return bytes;
}

/** The fixture's seed (printed, and again on failure; SVDLR_TEST_SEED replays it) draws every test's data. */
class ParallelGunzip : public svdlr_test::RandomTest
{
protected:
  void
  SetUp() override
  {
    RandomTest::SetUp();
    std::cout << "seed: " << svdlr::test::SeedTrace(m_Seed) << std::endl;
  }

  /** Every thread count and chunk size give the serial bytes; with dynamic blocks, the chunks did the work. */
  void
  ExpectParallelEqualsSerial(const Bytes & file, const Bytes & data, const std::string & what, bool chunksDoTheWork)
  {
    const svdlr_io::Decompressed serial = Serial(file, data.size());
    ASSERT_TRUE(serial.complete) << what;
    ASSERT_EQ(serial.bytes, data) << what;
    for (const unsigned threads : { 1u, 2u, 3u, 8u, 16u })
    {
      for (const std::size_t chunk : { std::size_t{ 40000 }, std::size_t{ 100 } << 10, std::size_t{ 1 } << 20 })
      {
        svdlr_io::GunzipReport       report;
        const svdlr_io::Decompressed ours = Parallel(file, data.size() / 2, threads, chunk, &report);
        const std::string            label =
          what + ", " + std::to_string(threads) + " threads, chunks of " + std::to_string(chunk) + " bytes";
        EXPECT_TRUE(ours.complete) << label;
        EXPECT_TRUE(ours.bytes == serial.bytes) << label; // no tolerance: every byte
        // Chunks of 40 KB are only to cross many boundaries on 2 cores: repetitive data then meets so many false
        // block starts that the member may go back to libdeflate (3-4 of 9-10 chunks decoded again, 6 seeds in 208
        // at libdeflate level 12). From 100 KiB on (the reader's chunks are 1-8 MiB) no seed of 208 did.
        if (threads > 1 && chunksDoTheWork && chunk >= (std::size_t{ 100 } << 10) && file.size() > 2 * chunk)
        {
          EXPECT_EQ(report.members, 1u) << label << ": the member went back to libdeflate (" << report.chunks
                                        << " chunks, " << report.catchUps << " decoded again)";
        }
      }
    }
  }

};

TEST_F(ParallelGunzip, Crc32CombineEqualsTheCrcOfTheWhole)
{
  const Bytes data = RandomBytes(m_Random, 100000);
  for (int trial = 0; trial < 20; ++trial)
  {
    const std::size_t   split = m_Random() % (data.size() + 1);
    const std::uint32_t a = svdlr_io::Crc32(0, data.data(), split);
    const std::uint32_t b = svdlr_io::Crc32(0, data.data() + split, data.size() - split);
    EXPECT_EQ(svdlr_io::Crc32Combine(a, b, data.size() - split), svdlr_io::Crc32(0, data.data(), data.size()))
      << "split at " << split;
  }
}

TEST_F(ParallelGunzip, ZlibMembersAtLevels169DecodeAsLibdeflateDoes)
{
  const std::map<std::string, Bytes> kinds = { { "noisy int16", NoisyInt16(m_Random, 3 << 20) },
                                               { "noisy float32", NoisyFloat32(m_Random, 3 << 20) },
                                               { "repetitive", Repetitive(m_Random, 6 << 20) },
                                               { "random bytes", RandomBytes(m_Random, 2 << 20) } };
  for (const auto & [kind, data] : kinds)
  {
    for (const int level : { 1, 6, 9 })
    {
      ExpectParallelEqualsSerial(ZlibGzip(data, level), data, kind + ", zlib level " + std::to_string(level), true);
    }
  }
}

TEST_F(ParallelGunzip, LibdeflateMembersDecodeAsLibdeflateDoes)
{
  const Bytes int16 = NoisyInt16(m_Random, 3 << 20);
  const Bytes repetitive = Repetitive(m_Random, 6 << 20);
  for (const int level : { 1, 6, 12 })
  {
    ExpectParallelEqualsSerial(LibdeflateGzip(int16, level), int16, "noisy int16, libdeflate " + std::to_string(level),
                               true);
    ExpectParallelEqualsSerial(LibdeflateGzip(repetitive, level), repetitive,
                               "repetitive, libdeflate " + std::to_string(level), true);
  }
}

TEST_F(ParallelGunzip, StoredAndFixedHuffmanBlocksDecodeAsLibdeflateDoes)
{
  const Bytes int16 = NoisyInt16(m_Random, 2 << 20);
  // Stored blocks are searched for as block starts; fixed-Huffman ones are not (nothing in them can be checked), so
  // those are decoded on by the chunk before: the same bytes either way.
  ExpectParallelEqualsSerial(ZlibGzip(int16, 0), int16, "zlib level 0 (stored blocks)", true);
  ExpectParallelEqualsSerial(ZlibGzip(int16, 6, Z_FIXED), int16, "zlib Z_FIXED (fixed-Huffman blocks)", false);
}

TEST_F(ParallelGunzip, EveryReaderGetsChunksForALargeMember)
{
  // What LoadNiftiFile calls: no settings, so the member's size and the hardware threads decide.
  if (std::thread::hardware_concurrency() < 2)
  {
    GTEST_SKIP() << "one hardware thread: the read stays with libdeflate";
  }
  const Bytes                  data = NoisyFloat32(m_Random, 6 << 20);
  const Bytes                  file = ZlibGzip(data, 6);
  svdlr_io::GunzipReport       report;
  const svdlr_io::Decompressed ours =
    svdlr_io::DecompressGzip(file.data(), file.size(), data.size(), svdlr_io::GunzipSettings{}, &report);
  ASSERT_GT(file.size(), svdlr_io::kParallelGunzipMinimumBytes + (std::size_t{ 1 } << 20));
  EXPECT_TRUE(ours.complete);
  EXPECT_TRUE(ours.bytes == data);
  EXPECT_EQ(report.members, 1u) << report.chunks << " chunks, " << report.catchUps << " decoded again";
  EXPECT_TRUE(svdlr_io::DecompressGzip(file.data(), file.size(), data.size()).bytes == data);
}

TEST_F(ParallelGunzip, GzipJobsBesideAnotherFileJobRunOnTheirShareToTheSameBytes)
{
  const unsigned all = svdlr::UsableCpuThreads();
  if (all < 2)
  {
    GTEST_SKIP() << "one usable CPU: the read stays with libdeflate";
  }
  const Bytes data = NoisyFloat32(m_Random, 6 << 20);
  const Bytes file = ZlibGzip(data, 6);
  const auto  read = [&](svdlr_io::GunzipReport & report) {
    return svdlr_io::DecompressGzip(file.data(), file.size(), data.size(), svdlr_io::GunzipSettings{}, &report);
  };
  const auto compress = [&](Bytes & into) {
    svdlr_io::CompressGzip({ { data.data(), 352 }, { data.data() + 352, data.size() - 352 } }, 1, all,
                           [&](const unsigned char * d, std::size_t n) { into.insert(into.end(), d, d + n); });
  };
  svdlr_io::GunzipReport alone;
  EXPECT_TRUE(read(alone).bytes == data);
  EXPECT_EQ(alone.threads, all) << "a lone reader takes every core";
  Bytes lone;
  compress(lone);

  const svdlr_test::JobOnAnotherThread writer(svdlr::ParallelJobKind::FileInputOutput);
  const svdlr_test::JobOnAnotherThread engineCall(svdlr::ParallelJobKind::DeviceEngineCall); // another kind: no count
  svdlr_io::GunzipReport               shared;
  EXPECT_TRUE(read(shared).bytes == data);
  EXPECT_EQ(shared.threads, all / 2 > 1 ? all / 2 : 0u) << "half the cores (0: on one, libdeflate decoded it)";
  Bytes alongside;
  compress(alongside);
  EXPECT_TRUE(alongside == lone) << "the members are independent: the same bytes on any share";
}

/** A noisy int16 member and its data, for the damaged-file tests. */
struct Sample
{
  Bytes data;
  Bytes file;
};

Sample
NoisySample(std::mt19937 & random)
{
  Sample sample;
  sample.data = NoisyInt16(random, 2 << 20);
  sample.file = ZlibGzip(sample.data, 6);
  return sample;
}

void
ExpectSameAnswer(const Bytes & file, std::uint64_t expected, const std::string & what)
{
  const svdlr_io::Decompressed serial = Serial(file, expected);
  for (const unsigned threads : { 2u, 8u })
  {
    const svdlr_io::Decompressed ours = Parallel(file, expected, threads, 64 << 10, nullptr);
    EXPECT_EQ(ours.complete, serial.complete) << what << ", " << threads << " threads";
    EXPECT_TRUE(ours.bytes == serial.bytes) << what << ", " << threads << " threads";
  }
}

TEST_F(ParallelGunzip, TruncatedFilesGetTheSerialAnswer)
{
  const Sample sample = NoisySample(m_Random);
  const std::size_t size = sample.file.size();
  for (const std::size_t keep : { size / 3, size / 2 + m_Random() % (size / 3), size - 9, size - 5, size - 1 })
  {
    Bytes cut(sample.file.begin(), sample.file.begin() + keep);
    ExpectSameAnswer(cut, sample.data.size(), "cut to " + std::to_string(keep) + " of " + std::to_string(size));
    EXPECT_FALSE(Serial(cut, sample.data.size()).complete);
  }
}

TEST_F(ParallelGunzip, CorruptFilesGetTheSerialAnswer)
{
  const Sample sample = NoisySample(m_Random);
  for (int trial = 0; trial < 12; ++trial)
  {
    Bytes             damaged = sample.file;
    const std::size_t at = 10 + m_Random() % (damaged.size() - 10);
    damaged[at] ^= static_cast<unsigned char>(1u << (m_Random() % 8));
    ExpectSameAnswer(damaged, sample.data.size(), "bit flipped in byte " + std::to_string(at));
  }
  Bytes badCrc = sample.file;
  badCrc[badCrc.size() - 8] ^= 1; // the trailer's CRC
  ExpectSameAnswer(badCrc, sample.data.size(), "trailer CRC wrong");
  EXPECT_FALSE(Serial(badCrc, sample.data.size()).complete);
  Bytes badSize = sample.file;
  badSize[badSize.size() - 4] ^= 1; // the trailer's ISIZE
  ExpectSameAnswer(badSize, sample.data.size(), "trailer ISIZE wrong");
}

TEST_F(ParallelGunzip, SeveralMembersAndTrailingBytesDecodeAsLibdeflateDoes)
{
  const Bytes a = NoisyInt16(m_Random, 2 << 20), b = Repetitive(m_Random, 3 << 20);
  Bytes       file = ZlibGzip(a, 6), second = LibdeflateGzip(b, 6);
  file.insert(file.end(), second.begin(), second.end());
  Bytes both = a;
  both.insert(both.end(), b.begin(), b.end());
  svdlr_io::GunzipReport report;
  const auto             ours = Parallel(file, both.size(), 4, 100 << 10, &report);
  EXPECT_TRUE(ours.complete);
  EXPECT_TRUE(ours.bytes == both);
  EXPECT_EQ(report.members, 2u) << "both large members decoded in chunks";
  // Bytes after the last member that start no other one are ignored, as libdeflate's loop ignores them.
  Bytes trailing = file;
  trailing.insert(trailing.end(), { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 });
  ExpectSameAnswer(trailing, both.size(), "trailing bytes");
  // The writer's files: a header member, then members of 1 MiB.
  Bytes ours2;
  svdlr_io::CompressGzip({ { a.data(), 352 }, { a.data() + 352, a.size() - 352 } }, 1, 2,
                         [&](const unsigned char * d, std::size_t n) { ours2.insert(ours2.end(), d, d + n); });
  ExpectSameAnswer(ours2, a.size(), "the writer's members");
  EXPECT_TRUE(Parallel(ours2, a.size(), 4, 64 << 10, nullptr).bytes == a);
}

/** A DEFLATE stored block of `payload` (byte-aligned: its header byte is BFINAL, BTYPE 00 and zero padding). */
void
AppendStoredBlock(Bytes & stream, const unsigned char * payload, std::size_t size, bool final)
{
  stream.push_back(final ? 1 : 0);
  Append(stream, static_cast<std::uint16_t>(size));
  Append(stream, static_cast<std::uint16_t>(~size));
  if (size > 0)
  {
    stream.insert(stream.end(), payload, payload + size);
  }
}

/** A gzip member of `stream` (raw DEFLATE) that decodes to `data`. */
Bytes
GzipOf(const Bytes & stream, const Bytes & data)
{
  Bytes file = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255 };
  file.insert(file.end(), stream.begin(), stream.end());
  Append(file, svdlr_io::Crc32(0, data.data(), data.size()));
  Append(file, static_cast<std::uint32_t>(data.size()));
  return file;
}

TEST_F(ParallelGunzip, StoredLengthReadOneByteEarlyIsNotTakenForABlockStart)
{
  // Full stored blocks (LEN ffff, NLEN 0000, as zlib's level 0 writes them) of a noisy int16 series: one byte before
  // each LEN, the header byte 00 and LEN's ff read as LEN ff00, and ff 00 as its NLEN: a length that agrees, whose
  // block ends inside the real one's data, where int16 values decode as fixed-Huffman blocks too often. Taken for a
  // start, it has the chunk decoded again.
  const Bytes series = NoisyInt16(m_Random, 40 * 65535);
  Bytes       stream, data;
  for (int block = 0; block < 40; ++block)
  {
    const Bytes payload(series.begin() + block * 65535, series.begin() + (block + 1) * 65535);
    AppendStoredBlock(stream, payload.data(), payload.size(), false);
    data.insert(data.end(), payload.begin(), payload.end());
  }
  AppendStoredBlock(stream, nullptr, 0, true);
  const Bytes file = GzipOf(stream, data);
  for (const unsigned threads : { 2u, 8u })
  {
    svdlr_io::GunzipReport report;
    const auto             ours = Parallel(file, data.size(), threads, 100 << 10, &report);
    EXPECT_TRUE(ours.bytes == data) << threads << " threads";
    EXPECT_EQ(report.members, 1u) << threads << " threads";
    EXPECT_EQ(report.catchUps, 0u) << threads << " threads: a false start was taken";
  }
}

TEST_F(ParallelGunzip, FalseBlockStartIsFoundOutAndDecodedPast)
{
  // Inside a stored block's data, just past a chunk's nominal start, lie the bytes of a real DEFLATE fragment: a
  // non-final dynamic block and a sync flush (what zlib writes with Z_SYNC_FLUSH). The search takes it for a block
  // start, and it decodes like one; only the chunk before, which decodes the stored block as data, shows that no block
  // starts there.
  const Bytes text = Repetitive(m_Random, 100000); // more than the 64 KiB the search decodes to confirm a start
  z_stream    z{};
  ASSERT_EQ(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes fragment(deflateBound(&z, text.size()) + 64);
  z.next_in = const_cast<unsigned char *>(text.data());
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = fragment.data();
  z.avail_out = static_cast<uInt>(fragment.size());
  ASSERT_EQ(deflate(&z, Z_SYNC_FLUSH), Z_OK);
  fragment.resize(z.total_out);
  deflateEnd(&z);
  ASSERT_EQ(fragment[0] & 7, 4) << "zlib's first block is a non-final dynamic one";

  constexpr std::size_t chunk = 64 << 10;
  Bytes                 stream, data;
  while (stream.size() < 5 * chunk)
  {
    // Blocks of random data; the one across the first chunk's end carries the fragment just past it.
    const std::size_t nextChunk = (stream.size() / chunk + 1) * chunk;
    Bytes             payload = RandomBytes(m_Random, 4000 + m_Random() % 20000);
    if (nextChunk == chunk && stream.size() + 5 + payload.size() > nextChunk)
    {
      const std::size_t into = nextChunk + 8 - (stream.size() + 5); // the fragment starts 8 bytes past the chunk's
      payload.resize(std::max(payload.size(), into + fragment.size() + 100));
      std::copy(fragment.begin(), fragment.end(), payload.begin() + into);
    }
    AppendStoredBlock(stream, payload.data(), payload.size(), false);
    data.insert(data.end(), payload.begin(), payload.end());
  }
  AppendStoredBlock(stream, nullptr, 0, true);
  const Bytes file = GzipOf(stream, data);

  ASSERT_TRUE(Serial(file, data.size()).bytes == data);
  for (const unsigned threads : { 2u, 3u, 8u })
  {
    svdlr_io::GunzipReport report;
    const auto             ours = Parallel(file, data.size(), threads, chunk, &report);
    EXPECT_TRUE(ours.complete) << threads << " threads";
    EXPECT_TRUE(ours.bytes == data) << threads << " threads";
    EXPECT_GE(report.catchUps, 1u) << threads << " threads: the false start was not taken";
    EXPECT_EQ(report.members, 1u) << threads << " threads: decoded in chunks all the same";
  }
}

} // namespace
