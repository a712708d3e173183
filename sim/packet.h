// Packets: fixed-size records from a pool owned by the Simulation.
//
// Contract:
//  1. A Packet is created only by PacketPool::make() and owned by exactly one
//     PacketHandle at a time; ownership moves through Link::transmit and
//     Node::receive. Destroying the handle returns the packet to its pool.
//  2. Everything a link and a switch read or write on every hop (size,
//     addresses, priority, ECN, flow hash, MMU accounting, cut-through
//     timing) sits in the first cache line; transport fields, read only by
//     the NICs at the ends, in the second.
//     There are no virtual functions: the protocol is a tag (kind + header set)
//     and the protocol fields are plain members.
//  3. wire_bytes is computed once, from the header stack, when the packet is
//     built (models/proto/wire_format.h); nothing else invents sizes.
//  4. A packet may carry an extension area (PacketExt) for algorithm data
//     that has no header field (INT hop records, timestamps). It is made on
//     first use and stays with the packet's slot, so a run that never asks for
//     one pays a pointer copy per packet made, and one that does allocates
//     once per slot, not per packet.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/huge_pages.h"
#include "sim/units.h"

namespace rdmasim {

class PacketPool;

enum class PacketKind : uint8_t {
  kData = 0,  // carries RDMA payload (WRITE/SEND/READ response)
  kAck = 1,   // RC acknowledgement (AETH)
  kNak = 2,   // RC negative acknowledgement (AETH with NAK syndrome)
  kCnp = 3,   // RoCE v2 congestion notification packet
  kPfc = 4,   // IEEE 802.1Qbb priority flow control frame
  kReadRequest = 5,
  kRaw = 6,  // other Ethernet traffic (e.g. a lossy bulk stream in a test): carried, not consumed
  kIbFlowControl = 7,  // InfiniBand link flow-control packet (IBA §7.9.4)
};

// A link-level control frame (a PFC frame, an InfiniBand flow-control
// packet): consumed by the receiving port's flow-control policy, never
// forwarded, never cut through.
constexpr bool is_link_control(PacketKind k) {
  return k == PacketKind::kPfc || k == PacketKind::kIbFlowControl;
}

// Bit flags on a packet.
enum PacketFlag : uint8_t {
  kFlagAckReq = 1 << 0,      // BTH AckReq: the responder acknowledges at once
  kFlagFirst = 1 << 1,       // first packet of a message
  kFlagLast = 1 << 2,        // last packet of a message
  kFlagRetransmit = 1 << 3,  // sent again by loss recovery
  kFlagCorrupted = 1 << 4,   // hit by a bit error on its last link: the receiver discards it
  kFlagEcnEcho =
      1 << 5,  // an ACK/NAK echoing congestion the responder saw (its algorithm's choice)
  // Sent on a priority its receiver had paused: a switch's PFC watchdog
  // (action forward) ignoring the pause of a stormed queue. The receiver's
  // lossless_drop check exempts what follows (sim/invariants.h); cleared there.
  kFlagPauseIgnored = 1 << 6,
};

// A packet's extension area: 64 bytes that congestion-control and telemetry
// algorithms lay out as they need (contract 4). Whoever writes it defines
// its layout; it is cleared when a packet first uses it.
struct alignas(64) PacketExt {
  std::array<std::byte, 64> bytes;
  template <class T>
  T& as() {
    static_assert(sizeof(T) <= sizeof(bytes) && alignof(T) <= 64 &&
                  std::is_trivially_copyable_v<T>);
    return *reinterpret_cast<T*>(bytes.data());
  }
  template <class T>
  const T& as() const {
    static_assert(sizeof(T) <= sizeof(bytes) && alignof(T) <= 64 &&
                  std::is_trivially_copyable_v<T>);
    return *reinterpret_cast<const T*>(bytes.data());
  }
};

struct alignas(64) Packet {
  // ---- cache line 0: read on every hop ----
  uint32_t wire_bytes;     // bytes the link serializes (incl. preamble+SFD and IFG for Ethernet)
  uint32_t payload_bytes;  // RDMA payload carried
  uint32_t src;            // source host id (the packet's IP address, in effect)
  uint32_t dst;            // destination host id: the routing key
  uint32_t flow_hash;      // ECMP entropy; RoCE v2 puts it in the UDP source port
  uint32_t headers;        // set of headers on the wire (models/proto/wire_format.h)
  PacketKind kind;
  uint8_t priority;          // traffic class 0..7 (DSCP/PCP mapped), or the IB VL it travels on
  uint8_t ecn;               // IP ECN field: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
  uint8_t flags;             // PacketFlag bits
  uint8_t opcode;            // BTH opcode
  uint8_t aeth_syndrome;     // AETH syndrome on ACK/NAK
  uint8_t dscp;              // IP DSCP (6 bits): what a switch trusting DSCP classifies on
  uint8_t pcp;               // 802.1Q PCP (3 bits), when frames carry a VLAN tag
  uint16_t ingress_port;     // set by a switch on arrival: the port it came in by
  uint16_t egress_port;      // set by a switch when it routes the packet
  uint8_t ingress_priority;  // the priority a switch charged its ingress queue with
  uint8_t ext_used;          // nonzero: `ext` holds this packet's extension data
  uint8_t sl;                // InfiniBand: the LRH service level (0..15); `priority` is its VL
  uint32_t accounted;        // bytes a switch MMU charged for it (released on departure)
  Time rx_end;               // cut-through: when the last bit reaches the current node
  uint32_t src_qpn;
  uint32_t dst_qpn;  // BTH DestQP (some switches hash it)
  // ---- cache line 1: transport fields, read at the ends ----
  Time created;  // when the packet was built
  union {
    PacketPool* pool;   // the pool it goes back to: its holder's (see PacketPool)
    Packet* next_free;  // the pool's free list (while free)
  };
  PacketPool* home;  // the pool that made it
  PacketExt* ext;    // extension area, once this slot has used one (contract 4)
  union {
    struct {                     // RoCE/IB transport
      uint32_t psn;              // BTH PSN (24 bits)
      uint32_t msn;              // AETH MSN (24 bits)
      uint64_t message_id;       // which message (WQE) this packet belongs to
      uint32_t retransmissions;  // how many times this PSN was sent before
      union {
        uint32_t read_length;  // RETH DMA length on a READ request
        uint32_t imm_data;     // ImmDt of a WRITE/SEND with immediate (its last packet)
        uint32_t nak_trigger;  // selective repeat: the PSN whose arrival sent this NAK (IRN)
      };
      uint64_t aux;  // transport-specific (e.g. SACK bitmap)
    };
    struct {                      // PFC frame
      uint16_t pfc_class_enable;  // bit p set = pause time p is valid
      uint16_t pfc_quanta[8];     // pause time per priority, in quanta of 512 bit times
    };
    struct {              // InfiniBand flow-control packet
      uint64_t fc_fccl;   // credit limit granted, in 64-byte blocks (absolute, not mod 4096)
      uint64_t fc_fctbs;  // blocks the sending port has sent on fc_vl (its FCTBS, absolute)
      // The model's shared-pool handshake (models/flow_control/credits.h),
      // not wire fields: a lowered FCCL carries its revocation number, and
      // every packet the number of the last revocation its sender obeyed.
      uint32_t fc_revoke;  // nonzero: this FCCL revokes a claim (revocation number)
      uint32_t fc_obeyed;  // the last revocation number on fc_vl its sender obeyed
      uint8_t fc_vl;       // the VL it is for
    };
  };
};

static_assert(offsetof(Packet, created) == 64,
              "the fields read on every hop fill the first cache line");
static_assert(sizeof(Packet) == 128, "a packet is two cache lines");

// Move-only owner of a pooled packet.
class PacketHandle {
 public:
  PacketHandle() = default;
  explicit PacketHandle(Packet* p) : p_(p) {}
  PacketHandle(PacketHandle&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  PacketHandle& operator=(PacketHandle&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  PacketHandle(const PacketHandle&) = delete;
  PacketHandle& operator=(const PacketHandle&) = delete;
  ~PacketHandle() { reset(); }

  Packet* operator->() const { return p_; }
  Packet& operator*() const { return *p_; }
  Packet* get() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }
  inline void reset();
  // Gives up ownership without returning the packet to its pool.
  Packet* release() { return std::exchange(p_, nullptr); }

 private:
  Packet* p_ = nullptr;
};

// A free-list pool of packets. Memory grows in chunks and is never returned
// to the system before the pool dies, so steady state allocates nothing.
//
// Partitioned runs (sim/partition.h) have a pool per partition, each used by
// one thread. A packet that crosses into another partition is handed to that
// partition's pool (Packet::pool), which releases it; one made elsewhere
// goes back to the pool that made it (Packet::home) in chains of 32 through
// a return ring, which that pool splices into its free list before it
// grows. So a partition that makes more packets than it receives (a sender)
// holds what is in flight, plus up to 31 packets per other partition still
// being chained.
class PacketPool {
 public:
  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  // A zeroed packet (its slot's extension area kept, unused) with its
  // creation time.
  PacketHandle make(Time now) {
    if (free_ == nullptr) refill();
    Packet* p = free_;
    free_ = p->next_free;
    // Returned packets come back cold, from another core's cache: fetch the
    // next one while this one is built.
    __builtin_prefetch(free_);
    PacketExt* ext = p->ext;
    *p = Packet{};
    p->pool = this;
    p->home = this;
    p->ext = ext;
    p->created = now;
    ++next_id_;
    ++live_;
    return PacketHandle(p);
  }
  // The extension area of `p`, cleared if this packet has not used it yet;
  // a slot without one gets one from this pool (the caller's: the thread
  // that holds the packet).
  PacketExt& ext(Packet& p) {
    if (p.ext == nullptr) [[unlikely]]
      p.ext = new_ext();
    if (p.ext_used == 0) {
      std::memset(p.ext->bytes.data(), 0, sizeof p.ext->bytes);
      p.ext_used = 1;
    }
    return *p.ext;
  }
  void release(Packet* p) {
    --live_;
    if (p->home != this) [[unlikely]] {
      if (send_home(p)) return;
    }
    p->next_free = free_;
    free_ = p;
  }
  // Packets this pool made minus those it released, whoever made them (in a
  // partitioned run one pool's figure can be negative; the sum over the
  // pools is the packets alive).
  int64_t live() const { return live_; }
  int64_t capacity() const { return static_cast<int64_t>(chunks_.size()) * kChunk; }
  // Packets per chunk the pool grows by: one 2 MiB huge page (huge_pages.h).
  static constexpr int kChunk = static_cast<int>(HugeBlock::kPage / sizeof(Packet));
  uint64_t created() const { return next_id_; }
  int64_t ext_capacity() const { return static_cast<int64_t>(ext_chunks_.size()) * kExtChunk; }

  // Partitioned runs: pools[i] is partition i's; every pool gets a return
  // ring to every other.
  static void connect(const std::vector<PacketPool*>& pools);

 private:
  static constexpr int kExtChunk = static_cast<int>(HugeBlock::kPage / sizeof(PacketExt));
  static_assert(kChunk >= 1 && kExtChunk >= 1);
  // A single-producer, single-consumer ring of packets going home.
  struct ReturnRing {
    static constexpr uint64_t kCapacity = uint64_t{1} << 12;  // chains
    static constexpr uint32_t kChain = 32;                    // packets per chain
    struct Chain {
      Packet* first;
      Packet* last;
    };
    std::unique_ptr<Chain[]> ring{new Chain[kCapacity]};
    alignas(64) std::atomic<uint64_t> tail{0};  // written by the releasing pool
    uint64_t seen_head = 0;
    Packet* first = nullptr;  // the releasing pool's chain not yet pushed
    Packet* last = nullptr;
    uint32_t chained = 0;
    alignas(64) std::atomic<uint64_t> head{0};  // written by the home pool
  };
  // Takes back the packets other pools returned; grows if there are none.
  void refill();
  void grow();
  bool send_home(Packet* p);
  PacketExt* new_ext();

  // Huge-page blocks (huge_pages.h): at 8,192 hosts the packets in flight
  // span hundreds of MiB, touched in no order.
  std::vector<HugeBlock> chunks_;
  Packet* free_ = nullptr;
  uint64_t next_id_ = 0;  // packets made
  // Extension areas: handed out from chunks and never returned (they stay
  // with the packet slot that took them).
  std::vector<HugeBlock> ext_chunks_;
  int ext_next_ = kExtChunk;
  int64_t live_ = 0;
  // The ring to each other pool, found by the pool's address: a release
  // reads nothing of the home pool, whose lines its own thread keeps busy.
  std::vector<std::pair<const PacketPool*, std::unique_ptr<ReturnRing>>> to_;
  std::vector<ReturnRing*> from_;  // rings into this pool
};

inline void PacketHandle::reset() {
  if (p_ != nullptr) {
    p_->pool->release(p_);
    p_ = nullptr;
  }
}

}  // namespace rdmasim
