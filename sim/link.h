// Link: one direction of a cable. It serializes frames at its rate and
// delivers each one a fixed propagation delay after its last bit left.
//
// Contract:
//  1. transmit() may be called only while the link is idle (the previous
//     frame's last bit has left) and only in Phase::kRunning; it returns the
//     time the frame's last bit leaves, at which the sender may send again.
//  2. Frames arrive in the order sent (constant delay, one serializer), so the
//     link keeps its in-flight frames in a DelayLine and has at most one
//     pending event: the arrival of the oldest.
//  3. Serialization carries its rounding remainder (sim/units.h Serializer),
//     so n back-to-back frames take the exact total time to within 1 ps.
//  4. The delay must be positive: it is the lookahead that lets a topology be
//     split across threads (contract 5), and later across processes.
//  5. In a partitioned simulation (simulation.h contract 5) the link belongs
//     to its receiver's partition, and transmit() runs in its sender's: a
//     link between partitions puts each frame in a channel to the receiver,
//     which hands it to the link before it runs anything the frame could
//     precede. Its delay bounds the lookahead. place() sets both
//     partitions; cable.h's place() does so for both directions.
//  6. A link that is down still takes the sender's frames at line rate (the
//     sender learns of the failure only through routing) but delivers none;
//     going down loses the frames in flight. With a bit error rate, a frame
//     of n bits is corrupted with probability 1 - (1 - BER)^n and discarded
//     on arrival, as a MAC discards a frame with a bad FCS.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "sim/delay_line.h"
#include "sim/event.h"
#include "sim/invariants.h"
#include "sim/packet.h"
#include "sim/simulation.h"
#include "sim/units.h"

namespace rdmasim {

class Node;

struct LinkCounters {
  uint64_t frames = 0;          // every frame serialized (a "packet-hop")
  uint64_t data_frames = 0;     // frames that carry RDMA payload
  uint64_t control_frames = 0;  // link-level control frames (PFC, IB flow control)
  int64_t wire_bytes = 0;       // bytes serialized, all frames
  int64_t payload_bytes = 0;    // RDMA payload bytes serialized
  Time busy;                    // total serialization time
  uint64_t lost_down = 0;       // frames sent into, or caught on, a link that was down
  uint64_t corrupted = 0;       // frames hit by a bit error, discarded by the receiving MAC
};

// Laid out by cache line (contract of the hot path: a frame's two ends touch
// few lines of the link): line 0 the component, line 1 what transmit() reads
// and writes, line 2 the counters, lines 3-4 the in-flight line (its event;
// its ring with the receiver), then what only faults and bit errors read.
class alignas(64) Link : public Component {
 public:
  Link(Simulation& sim, std::string name, BitRate rate, Time delay);

  void connect(Node& to, uint32_t port) { propagation_.extra() = Receiver{&to, port}; }
  Node* to() const { return propagation_.extra().node; }
  uint32_t to_port() const { return propagation_.extra().port; }
  BitRate rate() const { return serializer_.rate(); }
  Time delay() const { return propagation_.delay(); }
  bool idle() const { return sender_->now() >= tx_end_; }
  size_t in_flight() const { return propagation_.size(); }
  const LinkCounters& counters() const { return counters_; }
  // With checks on (sim/invariants.h, flow_bytes): the data payload in
  // flight on the link, and what it lost, by sending QP (LossLedger::key).
  void add_in_flight(std::map<uint64_t, int64_t>& to) const {
    propagation_.for_each([&](const Packet& p) {
      if (p.kind == PacketKind::kData) to[LossLedger::key(p.src, p.src_qpn)] += p.payload_bytes;
    });
  }
  void add_losses(std::map<uint64_t, int64_t>& to) const {
    if (losses_) losses_->add_to(to);
    if (sender_losses_) sender_losses_->add_to(to);
  }

  Time transmit(PacketHandle p);

  // The partitions of the node that sends on it and of the one it delivers
  // to; before setup(). (Both default to partition 0.)
  void place(Partition& sender, Partition& receiver) {
    sender_ = &sender;
    assign(receiver);
  }
  void setup() override;
  // A frame sent from another partition (contract 5), due at `due`.
  void hand_over(Time due, Packet* p);

  bool up() const { return up_; }
  void set_up(bool up);
  // Bit error rate; 0 turns corruption off. Draws from the link's own stream.
  // `outside_frame`: bytes of each frame's wire bytes that are not the frame
  // (Ethernet's preamble, SFD and inter-frame gap), where errors are not
  // counted: the MAC discards a frame whose own bits, FCS included, were hit.
  void set_bit_error_rate(double ber, Bytes outside_frame = Bytes(0));
  double bit_error_rate() const { return ber_; }
  // The receiver forwards cut-through: deliver each frame once `header`
  // bytes have arrived (0: store-and-forward, at the last bit), with
  // Packet::rx_end telling when the last bit arrives.
  void set_cut_through(Bytes header);

 private:
  void deliver(PacketHandle p);
  // Into the line, or into the channel when the receiver is in another
  // partition.
  void send(Time due, PacketHandle p) {
    if (channel_ == nullptr) [[likely]] {
      propagation_.push_at(due, std::move(p));
    } else {
      sender_->send(*channel_, Partition::Transfer{this, due, p.release()});
    }
  }

  // Line 1: transmit().
  Time tx_end_;
  Partition* sender_;
  // The channel to the receiver if the sender is in another partition.
  Partition::Channel* channel_ = nullptr;
  Serializer serializer_;
  double ber_ = 0;
  int32_t cut_through_bytes_ = 0;
  bool up_ = true;
  // Line 2.
  alignas(64) LinkCounters counters_;
  // Lines 3 and 4; the receiver rides in the in-flight line's second line,
  // which a delivery reads anyway.
  struct Receiver {
    Node* node = nullptr;
    uint32_t port = 0;
  };
  DelayLine<Link, &Link::deliver, Receiver> propagation_;
#ifdef NDEBUG  // Debug adds the due-order check's field
  static_assert(sizeof(propagation_) == 128, "the in-flight line is two cache lines");
#endif
  double log1m_ber_ = 0;        // log(1 - BER), so a frame's survival is exp(bits * log1m_ber_)
  uint32_t outside_frame_ = 0;  // set_bit_error_rate()
  RngStream rng_;
  // With checks on: what the link lost, on the receiver's side (corrupted,
  // caught by a failure) and on the sender's (sent into a link that is down),
  // kept apart since the two sides may run on different threads.
  std::unique_ptr<LossLedger> losses_, sender_losses_;
};

}  // namespace rdmasim
