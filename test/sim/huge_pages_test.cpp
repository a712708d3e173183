// HugeBlock and HeapHugePages (sim/huge_pages.h), and the packet pool that
// uses HugeBlock.
#include <sys/prctl.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sim/huge_pages.h"
#include "sim/packet.h"

namespace rdmasim {
namespace {

// The line starting with `key` in the /proc/self/smaps entry of the mapping
// that contains `p`; empty if not found.
std::string smaps_line(const void* p, const std::string& key) {
  std::ifstream f("/proc/self/smaps");
  const auto a = reinterpret_cast<uintptr_t>(p);
  bool in = false;
  for (std::string line; std::getline(f, line);) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream s(line);
    if (s >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      in = lo <= a && a < hi;
      continue;
    }
    if (in && line.rfind(key, 0) == 0) return line;
  }
  return {};
}

// Its VmFlags ("hg" is MADV_HUGEPAGE, proc(5)).
std::string vm_flags(const void* p) { return smaps_line(p, "VmFlags:"); }

// Its AnonHugePages, in kB (-1 if not found).
long anon_huge_kb(const void* p) {
  const std::string line = smaps_line(p, "AnonHugePages:");
  return line.empty() ? -1 : std::stol(line.substr(14));
}

// The end of the process's heap (the last [heap] mapping), 0 if none.
uintptr_t heap_end() {
  std::ifstream f("/proc/self/maps");
  uintptr_t end = 0;
  for (std::string line; std::getline(f, line);) {
    if (line.find("[heap]") == std::string::npos) continue;
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream s(line);
    if (s >> std::hex >> lo >> dash >> hi) end = std::max(end, hi);
  }
  return end;
}

// Grows the heap by 24 MiB in 64 KiB blocks (below malloc's mmap threshold),
// each page touched; false if the heap did not grow by 20 MiB (an allocator
// that does not use the brk heap, such as a sanitizer's).
bool grow_heap(std::vector<std::unique_ptr<char[]>>& blocks) {
  const uintptr_t end0 = heap_end();
  for (int i = 0; i < 384; ++i) {
    blocks.push_back(std::make_unique<char[]>(64 * 1024));
    for (size_t j = 0; j < 64 * 1024; j += 4096) blocks.back()[j] = 1;
  }
  return heap_end() >= end0 + (size_t{20} << 20);
}

// A kernel built without transparent huge pages refuses the advice (and
// says so in smaps: contract 2).
bool thp_kernel() { return std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good(); }

// ... and one whose administrator allows them (not "never") to a process
// that has not turned them off: where HeapHugePages acts at all.
bool thp_allowed() {
  std::string mode;
  std::getline(std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"), mode);
  return !mode.empty() && mode.find("[never]") == std::string::npos &&
         prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 0;
}

}  // namespace

TEST_CASE("huge block: 2 MiB-aligned, rounded up to whole pages, zeroed, advised",
          "[quick][packet]") {
  HugeBlock b(3 * 1024 * 1024 + 1);
  REQUIRE(b.data() != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(b.data()) % HugeBlock::kPage == 0);
  CHECK(b.size() == 2 * HugeBlock::kPage);
  const auto* bytes = static_cast<const unsigned char*>(b.data());
  uint64_t sum = 0;
  for (size_t i = 0; i < b.size(); i += 4096) sum += bytes[i] + bytes[i + 4095];
  CHECK(sum == 0);
  // The advice is recorded on the mapping whatever the kernel then gives.
  if (thp_kernel()) CHECK(vm_flags(b.data()).find(" hg") != std::string::npos);

  HugeBlock moved(std::move(b));
  CHECK(b.data() == nullptr);
  CHECK(moved.size() == 2 * HugeBlock::kPage);
  CHECK(HugeBlock(0).data() == nullptr);
}

TEST_CASE("packet pool grows by one huge page of packets", "[quick][packet]") {
  PacketPool pool;
  CHECK(pool.capacity() == 0);
  PacketHandle p = pool.make(Time::ns(1));
  CHECK(pool.capacity() == PacketPool::kChunk);
  CHECK(PacketPool::kChunk * sizeof(Packet) == HugeBlock::kPage);
  // The first packet out is the block's first: the pool's memory is the
  // aligned block.
  CHECK(reinterpret_cast<uintptr_t>(p.get()) % HugeBlock::kPage == 0);
  if (thp_kernel()) CHECK(vm_flags(p.get()).find(" hg") != std::string::npos);
}

TEST_CASE("heap on huge pages: advised once it has grown by 16 MiB, collapsed where the kernel can",
          "[quick][packet]") {
  HeapHugePages pages;
  pages.advise();  // what the test process has so far
  const size_t before = pages.advised();
  std::vector<std::unique_ptr<char[]>> blocks;
  if (!grow_heap(blocks)) {
    WARN("the heap did not grow; skipped");  // nothing to advise, nothing to check
    return;
  }
  if (!thp_allowed()) {
    // MADV_COLLAPSE would ignore "never": HeapHugePages does not ask.
    CHECK(pages.advise() == 0);
    CHECK(pages.collapsed() == 0);
    return;
  }
  const size_t collapsed = pages.collapsed();
  const size_t advised = pages.advise();
  CHECK(advised >= HeapHugePages::kMinBytes);
  CHECK(pages.advised() == before + advised);
  CHECK(pages.advise() == 0);  // no growth since: nothing new
  // Growth below kMinBytes waits for more.
  for (int i = 0; i < 64; ++i) blocks.push_back(std::make_unique<char[]>(64 * 1024));
  CHECK(pages.advise() == 0);
  // A block in the middle lies in the advised part.
  const char* mid = blocks[192].get();
  CHECK(vm_flags(mid).find(" hg") != std::string::npos);
  // Collapsed (Linux 6.1 and later, with huge pages free): its mapping then
  // holds huge pages.
  if (pages.collapsed() > collapsed) CHECK(anon_huge_kb(mid) >= 2048);
}

TEST_CASE("heap on huge pages: nothing asked of a process that turned THP off", "[quick][packet]") {
  // PR_SET_THP_DISABLE is kept until reset (and inherited by children):
  // ctest runs each test case in a process of its own, and it is reset here.
  REQUIRE(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0);
  HeapHugePages pages;
  std::vector<std::unique_ptr<char[]>> blocks;
  const bool grew = grow_heap(blocks);
  CHECK(pages.advise() == 0);
  CHECK(pages.collapsed() == 0);
  if (grew) CHECK(vm_flags(blocks[192].get()).find(" hg") == std::string::npos);
  prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
}

}  // namespace rdmasim
