// rdmasim_memory_latency: the machine's dependent-load latency by working-set
// size, printed as one JSON object for bench/run.py.
//
// A simulation at scale is bound by memory latency (docs/performance.md): at
// 8,192 hosts nearly every hop's lines come from beyond the caches, one
// after another. How far W5's events/s falls from 128 to 8,192 hosts is
// therefore as much the machine's as the simulator's; benchmarks report this
// beside their figures so that runs on different machines can be compared.
//
// Method: the classic pointer chase (as lmbench's lat_mem_rd). A buffer of
// `size` bytes holds one pointer per 64-byte line; the pointers form a single
// random cycle through all lines (Sattolo's shuffle, fixed seed), so every
// load depends on the one before and hardware prefetchers cannot guess the
// next line. After one full pass (which faults the pages in), `steps` loads
// are timed; their mean is the latency. Buffers are 2 MiB-aligned and advised
// for huge pages (MADV_HUGEPAGE), as the simulator's packet pool and heap are,
// unless --small-pages is given.
//
//   rdmasim_memory_latency [--small-pages] [--steps N] [MiB ...]
//
// Default sizes: 1 4 8 16 64 256 MiB. Exit code 2 on a bad argument.
#include <sys/mman.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr size_t kLine = 64;
constexpr size_t kHugePage = size_t{2} << 20;

struct Options {
  bool small_pages = false;
  uint64_t steps = 2'000'000;
  std::vector<uint64_t> sizes_mib;
};

bool parse_u64(const char* s, uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || s[0] == '-') return false;
  out = v;
  return true;
}

// One dependent load. The empty asm says the result is used and memory may
// have changed, so the compiler neither drops the chain nor moves it out from
// between the clock readings.
inline const char* step(const char* p) {
  const char* next;
  std::memcpy(&next, p, sizeof next);
  asm volatile("" : "+r"(next)::"memory");
  return next;
}

// Mean nanoseconds per dependent load over a buffer of `mib` MiB.
double chase(uint64_t mib, const Options& opt) {
  const size_t bytes = static_cast<size_t>(mib) << 20;
  const size_t lines = bytes / kLine;
  auto* mem = static_cast<char*>(std::aligned_alloc(kHugePage, bytes));
  if (mem == nullptr) {
    std::fprintf(stderr, "rdmasim_memory_latency: cannot allocate %llu MiB\n",
                 static_cast<unsigned long long>(mib));
    std::exit(1);
  }
  if (!opt.small_pages) madvise(mem, bytes, MADV_HUGEPAGE);
  // Sattolo's shuffle: a uniformly random permutation with a single cycle.
  std::vector<uint32_t> order(lines);
  for (size_t i = 0; i < lines; ++i) order[i] = static_cast<uint32_t>(i);
  std::mt19937_64 rng(1);
  for (size_t i = lines - 1; i > 0; --i) {
    const size_t j = std::uniform_int_distribution<size_t>(0, i - 1)(rng);
    std::swap(order[i], order[j]);
  }
  for (size_t i = 0; i < lines; ++i) {
    char* next = mem + size_t{order[i]} * kLine;
    std::memcpy(mem + i * kLine, &next, sizeof next);
  }
  const char* p = mem;
  for (size_t i = 0; i < lines; ++i) p = step(p);  // fault in, warm
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < opt.steps; ++i) p = step(p);
  const auto end = std::chrono::steady_clock::now();
  std::free(mem);
  return std::chrono::duration<double, std::nano>(end - start).count() /
         static_cast<double>(opt.steps);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    uint64_t v = 0;
    if (a == "--small-pages") {
      opt.small_pages = true;
    } else if (a == "--steps" && i + 1 < argc && parse_u64(argv[i + 1], v) && v > 0) {
      opt.steps = v;
      ++i;
    } else if (parse_u64(argv[i], v) && v >= 1 && v <= 65536) {
      opt.sizes_mib.push_back(v);
    } else {
      std::fprintf(stderr,
                   "rdmasim_memory_latency: bad argument '%s': expected --small-pages, "
                   "--steps N (N >= 1) or a size in MiB (1..65536)\n",
                   argv[i]);
      return 2;
    }
  }
  if (opt.sizes_mib.empty()) opt.sizes_mib = {1, 4, 8, 16, 64, 256};
  std::printf("{\"pages\": \"%s\", \"steps\": %llu, \"ns_per_load\": {",
              opt.small_pages ? "4KiB" : "2MiB advised",
              static_cast<unsigned long long>(opt.steps));
  for (size_t i = 0; i < opt.sizes_mib.size(); ++i) {
    const double ns = chase(opt.sizes_mib[i], opt);
    std::printf("%s\"%lluMiB\": %.1f", i == 0 ? "" : ", ",
                static_cast<unsigned long long>(opt.sizes_mib[i]), ns);
    std::fflush(stdout);
  }
  std::printf("}}\n");
  return 0;
}
