// RowSpool (sim/row_spool.h): rows kept in order in memory and in an
// unlinked temporary file, and a failed write reported, not thrown.
#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/row_spool.h"

namespace rdmasim {
namespace {

struct Row {
  int64_t time;
  uint32_t node;
  uint8_t kind;  // followed by padding, stored as is
};

Row row(int i) { return Row{1000 * i, static_cast<uint32_t>(i % 7), static_cast<uint8_t>(i)}; }

void check_rows(const std::vector<Row>& rows, int n) {
  REQUIRE(rows.size() == static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    CHECK(rows[i].time == row(i).time);
    CHECK(rows[i].node == row(i).node);
    CHECK(rows[i].kind == row(i).kind);
  }
}

// A fresh empty folder under the system's temporary folder.
std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("rdmasim_row_spool_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST_CASE("row spool keeps every row in memory without a folder", "[quick]") {
  RowSpool<Row> s;
  for (int i = 0; i < 1000; ++i) s.push_back(row(i));
  CHECK(s.size() == 1000);
  CHECK(s.in_memory() == 1000);
  CHECK(s.spilled() == 0);
  check_rows(s.all(), 1000);
}

TEST_CASE("row spool spills beyond a chunk to an unlinked file, read back in order", "[quick]") {
  const auto dir = fresh_dir("spill");
  RowSpool<Row> s;
  s.spill_to(dir.string(), 3);
  std::vector<Row> rows;
  for (int i = 0; i < 10; ++i) rows.push_back(row(i));
  s.append(rows.begin(), rows.end());
  CHECK(s.size() == 10);
  CHECK(s.spilled() == 9);
  CHECK(s.in_memory() == 1);
  CHECK(s.error().empty());
  std::vector<size_t> parts;
  s.for_each_chunk([&](const Row*, size_t n) { parts.push_back(n); });
  CHECK(parts == std::vector<size_t>{3, 3, 3, 1});
  check_rows(s.all(), 10);
  // Moved, it is the same spool (the file goes with it).
  RowSpool<Row> moved = std::move(s);
  check_rows(moved.all(), 10);
  // Nothing is left in the folder, even while the spool holds its file.
  CHECK(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

TEST_CASE("row spool that cannot create its file keeps counting and reports why", "[quick]") {
  RowSpool<Row> s;
  s.spill_to("/nonexistent/rdmasim_folder", 4);
  for (int i = 0; i < 10; ++i) s.push_back(row(i));  // never throws
  CHECK(s.size() == 10);
  CHECK(s.spilled() == 0);
  CHECK_THAT(s.error(), Catch::Contains("cannot create a temporary file in "
                                        "/nonexistent/rdmasim_folder") &&
                            Catch::Contains("No such file or directory"));
  CHECK_THROWS_WITH(s.all(), Catch::Contains("/nonexistent/rdmasim_folder"));
}

TEST_CASE("row spool whose write fails (a file size limit) reports it", "[quick]") {
  const auto dir = fresh_dir("limit");
  rlimit old{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of a signal
  rlimit small = old;
  small.rlim_cur = 5 * sizeof(Row);  // the second chunk of 4 rows does not fit
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  RowSpool<Row> s;
  s.spill_to(dir.string(), 4);
  for (int i = 0; i < 12; ++i) s.push_back(row(i));
  REQUIRE(setrlimit(RLIMIT_FSIZE, &old) == 0);
  std::signal(SIGXFSZ, old_handler);
  CHECK(s.size() == 12);
  CHECK(s.spilled() == 4);
  CHECK_THAT(s.error(),
             Catch::Contains("cannot write the trace's rows") && Catch::Contains("File too large"));
  CHECK_THROWS_WITH(s.all(), Catch::Contains("File too large"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rdmasim
