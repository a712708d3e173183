// HugeBlock (sim/huge_pages.h) and the packet pool that uses it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/huge_pages.h"
#include "sim/packet.h"

namespace rdmasim {
namespace {

// The VmFlags of the mapping that contains `p` (/proc/self/smaps; "hg" is
// MADV_HUGEPAGE, proc(5)); empty if not found.
std::string vm_flags(const void* p) {
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
    if (in && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return {};
}

// A kernel built without transparent huge pages refuses the advice (and
// says so in smaps: contract 2).
bool thp_kernel() { return std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good(); }

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

}  // namespace rdmasim
