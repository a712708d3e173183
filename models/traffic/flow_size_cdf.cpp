#include "models/traffic/flow_size_cdf.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace rdmasim {
namespace {

// Sizes beyond 2^53 bytes would not survive the double arithmetic of
// sampling; no flow-size table comes near (the largest shipped is 30 MB).
constexpr double kMaxBytes = 9007199254740992.0;

std::string number(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

}  // namespace

FlowSizeCdf::FlowSizeCdf(std::vector<Point> points) : points_(std::move(points)) {
  if (points_.size() < 2) {
    throw CdfError(CdfError::npos, std::to_string(points_.size()) + " point(s), fewer than 2");
  }
  for (size_t i = 0; i < points_.size(); ++i) {
    const Point& p = points_[i];
    if (p.bytes < 0) throw CdfError(i, "size " + std::to_string(p.bytes) + " is negative");
    if (!(p.percent >= 0 && p.percent <= 100)) {
      throw CdfError(i, "percent " + number(p.percent) + " is outside 0..100");
    }
    if (i == 0) continue;
    const Point& q = points_[i - 1];
    if (p.bytes < q.bytes) {
      throw CdfError(i, "size " + std::to_string(p.bytes) + " is below the previous size " +
                            std::to_string(q.bytes));
    }
    if (p.percent < q.percent) {
      throw CdfError(i, "percent " + number(p.percent) + " is below the previous percent " +
                            number(q.percent));
    }
  }
  if (points_.front().percent != 0) {
    throw CdfError(0, "the first percent is " + number(points_.front().percent) + ", not 0");
  }
  if (points_.back().percent != 100) {
    throw CdfError(points_.size() - 1,
                   "the last percent is " + number(points_.back().percent) + ", not 100");
  }
  for (size_t i = 1; i < points_.size(); ++i) {
    const Point& a = points_[i - 1];
    const Point& b = points_[i];
    const double w = (b.percent - a.percent) / 100.0;
    if (b.bytes > a.bytes) {
      // Uniform on the whole bytes a+1 .. b.
      mean_ += w * (static_cast<double>(a.bytes) + static_cast<double>(b.bytes) + 1.0) / 2.0;
    } else {
      mean_ += w * static_cast<double>(b.bytes);
    }
  }
}

FlowSizeCdf FlowSizeCdf::parse(std::string_view text) {
  std::vector<Point> points;
  std::vector<size_t> line_of;  // 1-based line of each point
  size_t line = 0;
  while (!text.empty()) {
    ++line;
    const size_t nl = text.find('\n');
    std::string_view l = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    // Fields separated by spaces or tabs; a trailing '\r' is whitespace too.
    std::vector<std::string_view> fields;
    size_t i = 0;
    while (i < l.size()) {
      while (i < l.size() && (l[i] == ' ' || l[i] == '\t' || l[i] == '\r')) ++i;
      const size_t b = i;
      while (i < l.size() && !(l[i] == ' ' || l[i] == '\t' || l[i] == '\r')) ++i;
      if (i > b) fields.push_back(l.substr(b, i - b));
    }
    if (fields.empty() || fields[0].front() == '#') continue;
    const std::string where = "line " + std::to_string(line) + ": ";
    if (fields.size() != 2) {
      throw CdfError(points.size(), where + std::to_string(fields.size()) + " fields, not 2");
    }
    double v[2];
    for (int k = 0; k < 2; ++k) {
      const std::string_view f = fields[k];
      auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v[k]);
      if (ec != std::errc() || end != f.data() + f.size() || !std::isfinite(v[k])) {
        // Echoed clipped: a line may be megabytes long.
        const std::string shown =
            f.size() > 60 ? std::string(f.substr(0, 60)) + "…" : std::string(f);
        throw CdfError(points.size(), where + "\"" + shown + "\" is not a number");
      }
    }
    if (v[0] != std::floor(v[0]) || std::abs(v[0]) > kMaxBytes) {
      throw CdfError(points.size(),
                     where + "size " + std::string(fields[0]) + " is not a whole number of bytes");
    }
    points.push_back(Point{static_cast<int64_t>(v[0]), v[1]});
    line_of.push_back(line);
  }
  try {
    return FlowSizeCdf(std::move(points));
  } catch (const CdfError& e) {
    if (e.index == CdfError::npos) throw;
    throw CdfError(e.index, "line " + std::to_string(line_of[e.index]) + ": " + e.what());
  }
}

int64_t FlowSizeCdf::min_bytes() const {
  for (size_t i = 1; i < points_.size(); ++i) {
    const Point& a = points_[i - 1];
    const Point& b = points_[i];
    if (b.percent > a.percent) return b.bytes > a.bytes ? a.bytes + 1 : b.bytes;
  }
  return points_.back().bytes;  // unreachable: percents go from 0 to 100
}

double FlowSizeCdf::cdf(int64_t bytes) const {
  // The last point at or below `bytes` (the top of any jump there).
  auto it = std::upper_bound(points_.begin(), points_.end(), bytes,
                             [](int64_t v, const Point& p) { return v < p.bytes; });
  if (it == points_.begin()) return 0;
  const Point& a = *(it - 1);
  if (it == points_.end()) return a.percent / 100.0;
  const Point& b = *it;  // b.bytes > bytes >= a.bytes
  const double frac = static_cast<double>(bytes - a.bytes) / static_cast<double>(b.bytes - a.bytes);
  return (a.percent + (b.percent - a.percent) * frac) / 100.0;
}

int64_t FlowSizeCdf::quantile(double q) const {
  const double y = q * 100.0;
  // The first point (after the first) whose percent reaches y: the segment
  // (a, b] with a.percent < y <= b.percent.
  auto it = std::lower_bound(points_.begin() + 1, points_.end(), y,
                             [](const Point& p, double v) { return p.percent < v; });
  if (it == points_.end()) --it;  // y above 100 by rounding: the largest size
  const Point& b = *it;
  const Point& a = *(it - 1);
  if (b.bytes == a.bytes || b.percent == a.percent) return b.bytes;
  const double x = static_cast<double>(a.bytes) + static_cast<double>(b.bytes - a.bytes) *
                                                      (y - a.percent) / (b.percent - a.percent);
  // Rounded up to whole bytes: uniform on a+1 .. b (contract 2); the clamp
  // only guards against rounding at the ends.
  const auto up = static_cast<int64_t>(std::ceil(x));
  return std::clamp(up, a.bytes + 1, b.bytes);
}

}  // namespace rdmasim
