// TraceTable: one table of trace.h5 declared once: its dataset name and its
// columns (name, type, unit, where the column sits in the row struct). The
// HDF5 writer builds each table's compound type from its declaration, and a
// test checks docs/trace.md's table of columns against it
// (test/sim/output/trace_tables_test.cpp), so the three cannot drift apart.
//
// Contract:
//  1. A row struct holds only the types of ColumnType (a string is a
//     `const char*`, valid while the table is written); its columns are
//     declared in the struct's member order with RDMASIM_COLUMN, which takes
//     each column's type from the member, so a type is written down once.
//  2. The file type is the packed compound of the columns in declaration
//     order (trace_writer.h contract 2: no padding reaches the file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace rdmasim {

enum class ColumnType : uint8_t {
  kUint8,
  kUint16,
  kUint32,
  kInt32,
  kUint64,
  kInt64,
  kFloat64,
  kString
};

// As docs/trace.md names it: "uint8", ..., "float64", "string".
const char* to_string(ColumnType t);

template <class T>
constexpr ColumnType column_type() {
  if constexpr (std::is_same_v<T, uint8_t>) return ColumnType::kUint8;
  if constexpr (std::is_same_v<T, uint16_t>) return ColumnType::kUint16;
  if constexpr (std::is_same_v<T, uint32_t>) return ColumnType::kUint32;
  if constexpr (std::is_same_v<T, int32_t>) return ColumnType::kInt32;
  if constexpr (std::is_same_v<T, uint64_t>) return ColumnType::kUint64;
  if constexpr (std::is_same_v<T, int64_t>) return ColumnType::kInt64;
  if constexpr (std::is_same_v<T, double>) return ColumnType::kFloat64;
  if constexpr (std::is_same_v<T, const char*>) return ColumnType::kString;
  static_assert(std::is_same_v<T, uint8_t> || std::is_same_v<T, uint16_t> ||
                    std::is_same_v<T, uint32_t> || std::is_same_v<T, int32_t> ||
                    std::is_same_v<T, uint64_t> || std::is_same_v<T, int64_t> ||
                    std::is_same_v<T, double> || std::is_same_v<T, const char*>,
                "a trace column is an integer of 8 to 64 bits, a double or a const char*");
  return ColumnType::kString;
}

struct TraceColumn {
  std::string name;
  ColumnType type;
  std::string unit;  // as docs/trace.md gives it ("ps", "bytes", "node id", "0/1"); "" if none
  size_t offset;     // of the member in the row struct
};

struct TraceTable {
  std::string name;  // the dataset, under the file's root
  size_t row_size;   // sizeof the row struct
  std::vector<TraceColumn> columns;
};

// A column of `Row` named after its member `member`.
#define RDMASIM_COLUMN(Row, member, unit)                                                   \
  ::rdmasim::TraceColumn {                                                                  \
#member, ::rdmasim::column_type < decltype(Row::member)>(), unit, offsetof(Row, member) \
  }

}  // namespace rdmasim
