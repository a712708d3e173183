// docs/trace.md's tables of columns follow the declarations the writer uses
// (sim/output/trace_tables.h): for every declared table, the section
// "## `/<name>`" lists exactly its columns, in order, with their types and
// units; and the layout lists every table.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/output/trace_tables.h"

using namespace rdmasim;

namespace {

std::string read_doc() {
  std::ifstream in(std::string(RDMASIM_SOURCE_DIR) + "/docs/trace.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  size_t i = line.find('|');
  while (i != std::string::npos) {
    const size_t j = line.find('|', i + 1);
    if (j == std::string::npos) break;
    std::string c = line.substr(i + 1, j - i - 1);
    const size_t a = c.find_first_not_of(' ');
    const size_t b = c.find_last_not_of(' ');
    out.push_back(a == std::string::npos ? "" : c.substr(a, b - a + 1));
    i = j;
  }
  return out;
}

// "`a`, `b`" -> {"a", "b"}; "uint32, uint8" -> {"uint32", "uint8"}.
std::vector<std::string> split_list(std::string s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(", ", i);
    if (j == std::string::npos) j = s.size();
    std::string item = s.substr(i, j - i);
    if (item.size() >= 2 && item.front() == '`' && item.back() == '`')
      item = item.substr(1, item.size() - 2);
    out.push_back(item);
    i = j + 2;
  }
  return out;
}

struct DocColumn {
  std::string name, type, unit;
};

// The columns the section of table `name` documents, a row naming several
// columns expanded (one type for all, or one each; one unit for all).
std::vector<DocColumn> documented(const std::string& doc, const std::string& name) {
  const std::string heading = "## `/" + name + "`\n";
  const size_t at = doc.find(heading);
  REQUIRE(at != std::string::npos);
  std::istringstream in(doc.substr(at + heading.size()));
  std::string line;
  std::vector<DocColumn> out;
  bool in_table = false, has_unit = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) break;
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;
      continue;
    }
    const std::vector<std::string> c = cells(line);
    if (!in_table) {
      REQUIRE(c.size() >= 3);
      REQUIRE(c[0] == "column");
      REQUIRE(c[1] == "type");
      has_unit = c[2] == "unit";
      in_table = true;
      continue;
    }
    if (c[0].rfind("---", 0) == 0) continue;
    const std::vector<std::string> names = split_list(c[0]);
    const std::vector<std::string> types = split_list(c[1]);
    REQUIRE((types.size() == 1 || types.size() == names.size()));
    for (size_t k = 0; k < names.size(); ++k) {
      out.push_back(
          DocColumn{names[k], types.size() == 1 ? types[0] : types[k], has_unit ? c[2] : ""});
    }
  }
  return out;
}

}  // namespace

TEST_CASE("docs/trace.md documents every declared trace table's columns", "[quick][trace]") {
  const std::string doc = read_doc();
  const size_t layout = doc.find("## Layout");
  REQUIRE(layout != std::string::npos);
  const std::string layout_block = doc.substr(layout, doc.find("\n## ", layout + 1) - layout);
  for (const TraceTable* t : trace::all_tables()) {
    INFO("table /" << t->name);
    CHECK(layout_block.find("    /" + t->name + " ") != std::string::npos);
    const std::vector<DocColumn> docs = documented(doc, t->name);
    REQUIRE(docs.size() == t->columns.size());
    for (size_t i = 0; i < docs.size(); ++i) {
      const TraceColumn& c = t->columns[i];
      INFO("column " << i << ": " << c.name);
      CHECK(docs[i].name == c.name);
      CHECK(docs[i].type == to_string(c.type));
      CHECK(docs[i].unit == c.unit);
    }
  }
}

TEST_CASE("a trace table's columns tile its row struct", "[quick][trace]") {
  // Offsets increase in declaration order and the last column ends within
  // the row: the declaration follows the struct's members.
  for (const TraceTable* t : trace::all_tables()) {
    INFO("table /" << t->name);
    REQUIRE(!t->columns.empty());
    for (size_t i = 1; i < t->columns.size(); ++i) {
      CHECK(t->columns[i].offset > t->columns[i - 1].offset);
    }
    CHECK(t->columns.back().offset < t->row_size);
  }
}
