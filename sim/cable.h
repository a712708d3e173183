// connect(): the one way to join two nodes. It adds a port to each node and a
// Link in each direction, so builders and tests wire networks identically.
#pragma once

#include <string>

#include "sim/link.h"
#include "sim/node.h"

namespace rdmasim {

struct Cable {
  Link* a_to_b;
  Link* b_to_a;
  uint32_t a_port;
  uint32_t b_port;
};

inline Cable connect(Simulation& sim, Node& a, Node& b, BitRate rate, Time delay) {
  Port& pa = a.add_port();
  Port& pb = b.add_port();
  Link& ab =
      sim.add<Link>(a.name() + ":" + std::to_string(pa.index()) + "->" + b.name(), rate, delay);
  Link& ba =
      sim.add<Link>(b.name() + ":" + std::to_string(pb.index()) + "->" + a.name(), rate, delay);
  pa.attach(ab);
  ab.connect(b, pb.index());
  pb.attach(ba);
  ba.connect(a, pa.index());
  return Cable{&ab, &ba, pa.index(), pb.index()};
}

// A partitioned simulation (simulation.h contract 5): each direction of the
// cable runs in the partition of the node it delivers to, and is sent on
// from the other's. The nodes themselves are assigned by the caller.
inline void place(const Cable& c, Partition& a, Partition& b) {
  c.a_to_b->place(a, b);
  c.b_to_a->place(b, a);
}

}  // namespace rdmasim
