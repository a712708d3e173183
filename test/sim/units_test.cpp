#include "test/support/catch_units.h"

#include <utility>
#include <vector>

#include "sim/units.h"

using namespace rdmasim;

TEST_CASE("time parsing is exact and requires a unit", "[quick][units]") {
  CHECK(parse_time("600ns").value == Time::ns(600));
  CHECK(parse_time("1.5us").value == Time::ps(1'500'000));
  CHECK(parse_time("2ms").value == Time::ms(2));
  CHECK(parse_time("0s").value == Time::zero());
  CHECK(parse_time("250ps").value == Time::ps(250));
  CHECK(parse_time("1e3ns").value == Time::us(1));
  CHECK(parse_time("0.000001s").value == Time::us(1));
  CHECK(parse_time("3\xC2\xB5s").value == Time::us(3));

  auto no_unit = parse_time("100");
  CHECK_FALSE(no_unit);
  CHECK(no_unit.error.find("has no unit") != std::string::npos);
  auto fraction = parse_time("0.5ps");
  CHECK_FALSE(fraction);
  CHECK(fraction.error.find("whole number of picoseconds") != std::string::npos);
  CHECK_FALSE(parse_time("1.5 us"));
  CHECK_FALSE(parse_time("us"));
  CHECK_FALSE(parse_time("-1us"));
  CHECK_FALSE(parse_time("1.5ks"));
  CHECK_FALSE(parse_time("99999999999s"));  // beyond int64 picoseconds
}

TEST_CASE("size parsing: decimal and binary prefixes, bare bytes", "[quick][units]") {
  CHECK(parse_bytes("4096").value == Bytes(4096));
  CHECK(parse_bytes("64KiB").value == Bytes(65536));
  CHECK(parse_bytes("1.5MB").value == Bytes(1'500'000));
  CHECK(parse_bytes("12GB").value == Bytes(12'000'000'000));
  CHECK(parse_bytes("1GiB").value == Bytes(1LL << 30));
  CHECK(parse_bytes("2KB").value == Bytes(2000));
  CHECK(parse_bytes("100B").value == Bytes(100));
  auto spaced = parse_bytes("12 MB");
  CHECK_FALSE(spaced);
  CHECK(spaced.error == "\"12 MB\" is not a size (expected e.g. \"4096\", \"64KiB\" or \"12MB\")");
  CHECK_FALSE(parse_bytes("1.5B"));
  CHECK_FALSE(parse_bytes("12mb"));
}

TEST_CASE("rate parsing: bare bit/s and SI prefixes", "[quick][units]") {
  CHECK(parse_rate("400Gbps").value == BitRate::gbps(400));
  CHECK(parse_rate("100G").value == BitRate::gbps(100));
  CHECK(parse_rate("25.78125Gbps").value == BitRate::bps(25'781'250'000));
  CHECK(parse_rate("800Mbps").value == BitRate::mbps(800));
  CHECK(parse_rate("1000000").value == BitRate::mbps(1));
  CHECK(parse_rate("100Gb/s").value == BitRate::gbps(100));
  CHECK_FALSE(parse_rate("fast"));
  CHECK_FALSE(parse_rate("0.5bps"));
}

TEST_CASE("printing is exact and round-trips", "[quick][units]") {
  CHECK(to_string(Time::ps(1'500'000)) == "1500ns");
  CHECK(to_string(Time::us(1)) == "1us");
  CHECK(to_string(Time::ps(83'560)) == "83560ps");
  CHECK(to_string(Bytes(65536)) == "64KiB");
  CHECK(to_string(Bytes(4178)) == "4178B");
  CHECK(to_string(BitRate::gbps(400)) == "400Gbps");
  for (int64_t ps : {0LL, 1LL, 999LL, 1'000LL, 123'456'789LL, 5'000'000'000'000LL}) {
    CHECK(parse_time(to_string(Time::ps(ps))).value == Time::ps(ps));
  }
  for (int64_t b : {0LL, 1LL, 1023LL, 4096LL, 1LL << 30, 3'000'000LL}) {
    CHECK(parse_bytes(to_string(Bytes(b))).value == Bytes(b));
  }
  CHECK(parse_rate(to_string(BitRate::bps(25'781'250'000))).value == BitRate::bps(25'781'250'000));
}

TEST_CASE("unit algebra: serialization times from the definition", "[quick][units]") {
  // One byte is 8 bits; at 400 Gb/s a bit takes 2.5 ps, a byte 20 ps.
  CHECK(Bytes(1) / BitRate::gbps(400) == Time::ps(20));
  CHECK(Bytes(4178) / BitRate::gbps(100) == Time::ps(334'240));
  // A full 1 GiB at 400 Gb/s: 2^30 * 8 / 400e9 s = 21.474836.48 us exactly.
  CHECK(Bytes::gib(1) / BitRate::gbps(400) == Time::ps(21'474'836'480));
  // Rounded up: 1 byte at 3 bit/s is 8/3 s.
  CHECK(Bytes(1) / BitRate::bps(3) == Time::ps(2'666'666'666'667));
  CHECK(BitRate::gbps(100) * Time::us(1) == Bytes(12'500));
  CHECK(Bytes(12'500) / Time::us(1) == BitRate::gbps(100));
}

TEST_CASE("the serializer carries remainders: no drift over many frames", "[quick][units]") {
  // 25.78125 Gb/s does not divide a byte into whole picoseconds.
  const BitRate r = BitRate::bps(25'781'250'000);
  Serializer s(r);
  Time total;
  const int n = 100'000;
  for (int i = 0; i < n; ++i) total += s.next(Bytes(1500));
  const Time exact_floor = Time::ps(
      static_cast<int64_t>(static_cast<__int128>(1500) * 8 * n * 1'000'000'000'000 / r.in_bps()));
  CHECK(total == exact_floor);
  // A naive per-frame rounding would drift by up to n ps.
  const Time naive = (Bytes(1500) / r) * n;
  CHECK(naive - total > Time::ps(n / 4));
}

TEST_CASE(
    "the serializer at rates whose byte is whole picoseconds: bytes x 8e12 / rate exactly, "
    "frame by frame",
    "[quick][units]") {
  // 100G: 80 ps a byte, 400G: 20, 800G: 10, 40G: 200, 25G: 320; 1 Gb/s
  // 8,000. Every frame's time is its exact duration, so there is no
  // remainder to carry: each next() is bytes x ps per byte, and the total
  // over mixed frames is the exact total.
  for (const auto& [gbps, ps_per_byte] : std::vector<std::pair<int64_t, int64_t>>{
           {100, 80}, {400, 20}, {800, 10}, {40, 200}, {25, 320}, {1, 8000}}) {
    INFO(gbps << " Gb/s");
    Serializer s(BitRate::gbps(gbps));
    Time total;
    int64_t bytes = 0;
    for (int i = 0; i < 1000; ++i) {
      const Bytes b(i % 5 == 0 ? 64 : 1000 + 37 * i);
      const Time t = s.next(b);
      CHECK(t == Time::ps(b.count() * ps_per_byte));
      total += t;
      bytes += b.count();
    }
    CHECK(total == Time::ps(bytes * ps_per_byte));
    CHECK(s.next(Bytes(2'000'000'000)) == Time::ps(int64_t{2'000'000'000} * ps_per_byte));
  }
}

TEST_CASE("the serializer is exact for frames beyond 64-bit arithmetic too", "[quick][units]") {
  // Frames of 2 MB need the 128-bit path (bits x 1e12 ps/s > 2^63); mixed
  // with small ones, the total is still the exact floor of all bits / rate.
  const BitRate r = BitRate::bps(25'781'250'000);
  Serializer s(r);
  Time total;
  __int128 bits = 0;
  for (int i = 0; i < 1000; ++i) {
    const Bytes b(i % 3 == 0 ? 2'000'000 + i : 1500 + i);
    total += s.next(b);
    bits += b.bits();
  }
  CHECK(total == Time::ps(static_cast<int64_t>(bits * 1'000'000'000'000 / r.in_bps())));
}
