// Node and Port: a node (NIC, switch) meets the rest of the network only
// through its ports, each of which transmits onto one outgoing Link and
// receives from one incoming Link.
//
// Contract:
//  1. Ports are numbered 0..n-1 in the order they are added; the topology
//     layer fixes that order (see docs/topologies.md), so numbering is stable.
//  2. Egress is pull-based, as in a real MAC: when a port's transmitter is
//     free it asks its node for the next frame (Node::next_packet). A node that
//     gets something to send calls Port::wake(); the port then pulls at the
//     same picosecond, in EventClass::kTransmit, i.e. after every packet that
//     arrives at that instant has been received, so a scheduler choosing
//     between queues sees them all.
//  3. Backpressure (PFC, IB credits) is the node's business: next_packet()
//     returns only what may be sent now, and the node calls wake() (or
//     wake_at() for a known future instant, such as a pause's end) when
//     something becomes sendable.
//  4. After a frame starts, the port pulls again when the node's next_pull()
//     says (at the frame's end if it has more; later if all it has waits for
//     a known time, such as a paced QP's next slot; never if it will wake()
//     the port) or when something wakes the port meanwhile, so a frame sent
//     from an otherwise idle port (an ACK, a PFC frame) costs one transmit
//     event, not two, and so does a paced frame. A node that does not
//     override next_pull() is pulled at the end of every frame.
//  5. Node::receive gets each packet once its last bit has arrived.
//  6. A link-level control frame that would go ahead of everything may be
//     sent at once on an idle port (send_now), saving the pull that would
//     only have taken it first; never from within that port's own pull
//     (its next_packet(), whose frame has not started yet; asserted).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/event.h"
#include "sim/packet.h"
#include "sim/simulation.h"

namespace rdmasim {

class Link;
class Node;

// Aligned to a cache line, its own fields first: a wake() that finds its
// event already due reads one line (link, busy_until, the event's time and
// sequence); the 96-byte object at 16-byte offsets spanned two or three.
class alignas(64) Port {
 public:
  Port(Node& owner, uint32_t index);
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  uint32_t index() const { return index_; }
  Node& owner() const { return owner_; }
  Link* link() const { return link_; }
  void attach(Link& out) { link_ = &out; }
  // The node has a frame to send; the transmitter pulls it now if it is free.
  void wake();
  // Something may become sendable at time t (a pause expires): pull then (or
  // when the frame being sent ends, if later), unless an earlier pull is pending.
  void wake_at(Time t);
  // A link-level control frame (an InfiniBand flow-control packet) goes
  // out at once if the transmitter is free, without a pull: what the pull
  // it would otherwise take would do, as such frames go ahead of all else;
  // a pull pending before its end moves there. Returns false, leaving `f`,
  // if a frame is being sent: the node queues it and wakes the port.
  bool send_now(PacketHandle& f);
  // True while a frame is being serialized.
  bool transmitting() const;
  // The node's state for this port, which next_packet() reads first: fetched
  // ahead of each pull (see Event::set_prefetch_hint).
  void set_state_hint(const void* state) { tx_done_.set_prefetch_hint(state); }

 private:
  void on_tx_done();

  Link* link_ = nullptr;
  Time busy_until_;  // when the frame being serialized ends
#ifndef NDEBUG
  bool pulling_ = false;  // within next_packet() (contract 6)
#endif
  Node& owner_;
  uint32_t index_;
  MemberEvent<Port, &Port::on_tx_done> tx_done_;
};

class Node : public Component {
 public:
  Node(Simulation& sim, std::string name) : Component(sim, std::move(name)) {}

  Port& add_port() {
    ports_.push_back(std::make_unique<Port>(*this, static_cast<uint32_t>(ports_.size())));
    return *ports_.back();
  }
  Port& port(uint32_t i) const { return *ports_[i]; }
  uint32_t num_ports() const { return static_cast<uint32_t>(ports_.size()); }

  // A packet's last bit arrived on `port`.
  virtual void receive(uint32_t port, PacketHandle p) = 0;
  // The transmitter of `port` is free: the next frame to send, or none.
  virtual PacketHandle next_packet(uint32_t port) = 0;
  // Asked right after `port` started a frame that ends at `frame_end`: when
  // may next_packet() have another one? `frame_end` if it may then; a later
  // time if nothing can go before it; Time::infinite() only if the node will
  // wake() the port when it has one.
  virtual Time next_pull(uint32_t port, Time frame_end) const {
    (void)port;
    return frame_end;
  }
  // How long this node's MAC takes to act on a PFC frame it has received
  // (IEEE 802.1Qbb): what the headroom of a neighbour that pauses it must
  // cover. Zero for a node that does not model one.
  virtual Time pfc_response_delay() const { return Time::zero(); }
  // The cable at `port` came back up after a failure (a fault's end); the
  // link layer initialises it again. Called with every partition's clock at
  // that instant, both ends of the cable together.
  virtual void on_link_up(uint32_t port) { (void)port; }
  // The cable at `port` went down (a fault's start); called as on_link_up
  // is.
  virtual void on_link_down(uint32_t port) { (void)port; }

 private:
  std::vector<std::unique_ptr<Port>> ports_;
};

}  // namespace rdmasim
