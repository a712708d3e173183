#include "sim/output/slowdown.h"

namespace rdmasim {
namespace {

// The shortest exact name of a size: "10KB", "4KiB", "1500B".
std::string size_label(Bytes b) {
  const int64_t n = b.count();
  std::string best = std::to_string(n) + "B";
  const std::pair<const char*, int64_t> units[] = {{"KB", 1'000},
                                                   {"MB", 1'000'000},
                                                   {"GB", 1'000'000'000},
                                                   {"KiB", int64_t{1} << 10},
                                                   {"MiB", int64_t{1} << 20},
                                                   {"GiB", int64_t{1} << 30}};
  for (const auto& [name, size] : units) {
    if (n > 0 && n % size == 0) {
      std::string s = std::to_string(n / size) + name;
      if (s.size() < best.size()) best = s;
    }
  }
  return best;
}

}  // namespace

SlowdownStats slowdown_stats(std::vector<double> v) {
  SlowdownStats s;
  s.count = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.p50 = nearest_rank(v, 50);
  s.p95 = nearest_rank(v, 95);
  s.p99 = nearest_rank(v, 99);
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  s.max = v.back();
  return s;
}

SlowdownSummary summarize_slowdown(const std::vector<FlowResult>& flows, size_t items,
                                   std::span<const Bytes> edges) {
  std::vector<double> all;
  std::vector<std::vector<double>> item(items);
  std::vector<std::vector<double>> bucket(edges.size() + 1);
  for (const FlowResult& f : flows) {
    if (!f.done || f.ideal_fct <= Time::zero() || f.ideal_fct.is_infinite()) continue;
    const double x = f.slowdown();
    all.push_back(x);
    if (f.item < items) item[f.item].push_back(x);
    const auto b = static_cast<size_t>(
        std::upper_bound(edges.begin(), edges.end(), Bytes(f.bytes)) - edges.begin());
    bucket[b].push_back(x);
  }
  SlowdownSummary s;
  s.overall = slowdown_stats(std::move(all));
  for (auto& v : item) s.by_item.push_back(slowdown_stats(std::move(v)));
  for (size_t b = 0; b <= edges.size(); ++b) {
    SizeBucket k;
    k.min_bytes = b == 0 ? 0 : edges[b - 1].count();
    k.max_bytes = b == edges.size() ? -1 : edges[b].count();
    if (b == 0) {
      k.label = "<" + size_label(edges.empty() ? Bytes(0) : edges[0]);
    } else if (b == edges.size()) {
      k.label = ">=" + size_label(edges[b - 1]);
    } else {
      k.label = size_label(edges[b - 1]) + "-" + size_label(edges[b]);
    }
    if (edges.empty()) k.label = "all";
    k.stats = slowdown_stats(std::move(bucket[b]));
    s.by_size.push_back(std::move(k));
  }
  return s;
}

}  // namespace rdmasim
