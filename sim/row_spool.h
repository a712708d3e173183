// RowSpool: the rows of one time-series table (trace.h5's /queues,
// /pfc_events, /cc_samples...) as a run records them, kept in memory up to
// a chunk and, once a folder to spill to is given, beyond it in an unlinked
// temporary file there: a long run's traces do not grow the process.
//
// Contract:
//  1. Rows read back (for_each_chunk, all) in the order they were
//     appended, byte for byte: T is trivially copyable and stored as is.
//  2. Without spill_to(), every row stays in memory; with it, at most
//     chunk_rows() rows are held in memory and the rest are in the file.
//  3. The file is unlinked as soon as it is created (O_TMPFILE, else
//     mkstemp and unlink): nothing is left behind however the process
//     ends, and it goes when the spool does.
//  4. The first failure to create or write the file (a full disk, a file
//     size limit) is kept as error(); the rows are still counted (size())
//     but no longer kept, and reading them throws std::runtime_error with
//     that error. Nothing here throws while appending.
//  5. Not thread-safe: one thread appends (the runner, between phases).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rdmasim {

// The unlinked temporary file of a spool (contract 3, 4).
class SpoolFile {
 public:
  SpoolFile() = default;
  SpoolFile(const SpoolFile&) = delete;
  SpoolFile& operator=(const SpoolFile&) = delete;
  SpoolFile(SpoolFile&& o) noexcept { *this = std::move(o); }
  SpoolFile& operator=(SpoolFile&& o) noexcept;
  ~SpoolFile();

  // Appends n bytes, creating the file in `dir` on the first call; false
  // (and error()) if that or the write fails, and on every call after.
  bool append(const std::string& dir, const void* data, size_t n);
  // Reads n bytes at `offset`; throws std::runtime_error if it cannot.
  void read(uint64_t offset, void* data, size_t n) const;
  uint64_t size() const { return size_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string error_;
};

template <class T>
class RowSpool {
  static_assert(std::is_trivially_copyable_v<T>, "rows are stored as their bytes");

 public:
  // About 1 MiB of rows in memory.
  static constexpr size_t kDefaultChunkRows =
      sizeof(T) >= (size_t{1} << 20) ? 1 : (size_t{1} << 20) / sizeof(T);

  RowSpool() = default;
  RowSpool(RowSpool&&) noexcept = default;
  RowSpool& operator=(RowSpool&&) noexcept = default;

  // Rows beyond `chunk_rows` (0: the default) go to a temporary file in
  // `dir` (contract 2); before the first row.
  void spill_to(std::string dir, size_t chunk_rows = 0) {
    dir_ = std::move(dir);
    if (chunk_rows > 0) chunk_rows_ = chunk_rows;
  }

  void push_back(const T& row) {
    tail_.push_back(row);
    if (tail_.size() >= chunk_rows_ && !dir_.empty()) spill();
  }
  template <class It>
  void append(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }

  size_t size() const { return spilled_ + tail_.size() + lost_; }
  bool empty() const { return size() == 0; }
  size_t chunk_rows() const { return chunk_rows_; }
  // Rows now held in memory (at most chunk_rows() once spilling).
  size_t in_memory() const { return tail_.size(); }
  // Rows in the temporary file.
  size_t spilled() const { return spilled_; }
  // "" or the failure that lost rows (contract 4).
  const std::string& error() const { return file_.error(); }

  // f(const T* rows, size_t n) for every row in order, at most
  // chunk_rows() at a time (the in-memory ones last, in one call).
  template <class F>
  void for_each_chunk(F&& f) const {
    if (!error().empty()) throw std::runtime_error(error());
    if (spilled_ > 0) {
      std::vector<T> buf(std::min(chunk_rows_, spilled_));
      for (size_t at = 0; at < spilled_;) {
        const size_t n = std::min(buf.size(), spilled_ - at);
        file_.read(uint64_t{at} * sizeof(T), buf.data(), n * sizeof(T));
        f(static_cast<const T*>(buf.data()), n);
        at += n;
      }
    }
    if (!tail_.empty()) f(static_cast<const T*>(tail_.data()), tail_.size());
  }
  // Every row (tests, small tables).
  std::vector<T> all() const {
    std::vector<T> out;
    out.reserve(size());
    for_each_chunk([&](const T* rows, size_t n) { out.insert(out.end(), rows, rows + n); });
    return out;
  }

 private:
  void spill() {
    if (lost_ == 0 && file_.append(dir_, tail_.data(), tail_.size() * sizeof(T))) {
      spilled_ += tail_.size();
    } else {
      lost_ += tail_.size();
    }
    tail_.clear();
  }

  std::string dir_;
  size_t chunk_rows_ = kDefaultChunkRows;
  std::vector<T> tail_;
  size_t spilled_ = 0;
  size_t lost_ = 0;
  SpoolFile file_;
};

}  // namespace rdmasim
