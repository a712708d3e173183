// Switch: an output-queued Ethernet switch with a shared-buffer MMU, eight
// priority queues per port (lanes(): every port of a switch has the same
// count), PFC, ECN marking, ECMP (per-flow hash, per-packet spraying or
// adaptive) and priority rewrite rules.
//
// The packet path:
//  1. A packet arrives (its last bit; its header in cut-through mode, see
//     docs/switch.md). A PFC frame only updates the port's pause state.
//  2. It is classified (trust DSCP or PCP) into an ingress priority, routed
//     (ForwardingTable; ECMP mode), possibly moved to another egress priority
//     by a rewrite rule, and admitted by the MMU or dropped with a reason.
//     Crossing a PFC threshold sends a pause out of the ingress port.
//  3. After the pipeline latency it passes the ECN marker (ecn_marker.h, if
//     marking at enqueue) and the egress hooks' on_enqueue (egress_hook.h)
//     and is queued at its egress port and priority.
//  4. The egress port's transmitter pulls: PFC frames first, then the
//     scheduler's pick among unpaused priorities, which passes the ECN
//     marker (if marking at dequeue) and the hooks' on_dequeue. Leaving releases the packet's
//     buffer, which may send a resume out of its ingress port.
//
// Contract: components see the switch only through its ports; the observers
// (samplers, the deadlock detector) read its state through the const
// accessors at the end of this class. Egress hooks are registered before
// setup() (add_egress_hook).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/flow_control/port_flow_control.h"
#include "models/flow_control/vl_arbiter.h"
#include "models/switch/ecn_marker.h"
#include "models/switch/egress_hook.h"
#include "models/switch/egress_queues.h"
#include "models/switch/forwarding_table.h"
#include "models/switch/mmu.h"
#include "models/switch/switch_config.h"
#include "sim/delay_line.h"
#include "sim/invariants.h"
#include "sim/node.h"
#include "sim/probe.h"
#include "sim/ring.h"

namespace rdmasim {

struct SwitchCounters {
  uint64_t forwarded = 0;  // (the egress queues' enqueued counts; counters() fills it in)
  uint64_t dropped_no_route = 0;
  uint64_t pfc_sent = 0;      // pause and resume frames sent
  uint64_t pfc_received = 0;  // pause and resume frames received
  uint64_t fc_sent = 0;       // InfiniBand flow-control packets sent (credits)
  uint64_t fc_received = 0;   // InfiniBand flow-control packets received
  uint64_t hoq_discards = 0;  // packets discarded at the head of a queue (lifetime passed)
  uint64_t ecn_marked = 0;
  // Lossless drops (DropReason::kHeadroom) on ports whose configured
  // headroom is below the automatic value (pfc_headroom): expected there;
  // elsewhere such a drop violates lossless_drop (sim/invariants.h).
  uint64_t lossless_drops_headroom_below_automatic = 0;
  // Lossless drops after the neighbour's PFC watchdog (action forward) sent
  // on this port ignoring its pause: the configured outcome of a storm, not
  // a violation (sim/invariants.h, lossless_drop).
  uint64_t lossless_drops_watchdog_forward = 0;
};

// Per egress port and priority.
struct QueueCounters {
  uint64_t enqueued = 0;
  uint64_t ecn_marked = 0;
  std::array<uint64_t, static_cast<size_t>(DropReason::kCount)> drops{};
  int64_t peak_bytes = 0;
  uint64_t watchdog_triggers = 0;
  uint64_t hoq_discards = 0;  // InfiniBand: head-of-queue lifetime passed
  Time xmit_wait;             // InfiniBand: PortVLXmitWait, time its head waited for credits
};

// OpenSM's head-of-queue lifetime encoding: 4.096 us x 2^value; a value of
// 20 or more is infinite (IBA §18.2.5.4, HOQLife).
inline Time hoq_lifetime(uint32_t value) {
  return value >= 20 ? Time::infinite() : Time::ns(4096) * (int64_t{1} << value);
}

// What the switch reports as it happens (attach recorders from outside).
struct PfcEvent {
  Time time;
  uint32_t node;
  uint32_t port;
  uint8_t priority;
  bool pause;  // false: resume
  bool sent;   // true: this switch sent it; false: received
  uint16_t quanta;
};
struct DropEvent {
  Time time;
  uint32_t node;
  uint32_t port;  // egress port (ingress port for a no-route drop)
  uint8_t priority;
  DropReason reason;
  uint32_t bytes;
};

// Headroom of one lossless ingress queue on a port with this cable, whose
// neighbour (the device this queue pauses) acts on a PFC frame
// `neighbour_response` after receiving it: `pfc.headroom`, or the
// worst-case formula (docs/switch.md, "Headroom auto") when that is 0.
// `slowest_in`: the slowest rate a cut-through switch's frame on this port
// may have come in at anywhere upstream (the fabric's slowest network link,
// Switch::set_slowest_ingress; 0: this port's rate).
Bytes pfc_headroom(const SwitchConfig& cfg, BitRate rate, Time cable_delay, Time neighbour_response,
                   BitRate slowest_in = BitRate());
// Buffer bytes per byte of wire time, at worst, of minimum-size frames
// (64 B) or just larger ones, each charged whole cells of `cell` bytes; at
// least 1.
double small_frame_occupancy(uint32_t cell);
// The worst-case formula alone, whatever `pfc.headroom` says.
Bytes auto_pfc_headroom(const SwitchConfig& cfg, BitRate rate, Time cable_delay,
                        Time neighbour_response, BitRate slowest_in = BitRate());
// The same with every frame of the headroom minimum-size, whatever
// `pfc.small_packet_percentage` says: below it, a lossless drop is a risk
// the configuration took, not a bug.
Bytes worst_case_pfc_headroom(const SwitchConfig& cfg, BitRate rate, Time cable_delay,
                              Time neighbour_response, BitRate slowest_in = BitRate());

// The seed switch `name` of a simulation seeded `sim_seed` salts its ECMP
// hash with: its own stream's first draw, or one for all switches when
// `per_switch_hash_seed` is false. (Also for computing a flow's path
// without running: sim/scenario/flow_route.h.)
uint64_t ecmp_seed(uint64_t sim_seed, const std::string& name, const SwitchConfig& cfg);

class Switch : public Node, private ControlSink {
 public:
  Switch(Simulation& sim, std::string name, const SwitchConfig& cfg,
         uint8_t lanes = kEthernetPriorities);
  // Lanes (priorities) of every port.
  uint8_t lanes() const { return lanes_; }
  // Port `port` runs credit-based flow control with `params` instead of PFC
  // (an InfiniBand port), and discards a packet that has waited at the head
  // of one of its egress queues for `hoq_lifetime` (infinite: never);
  // before setup(). With `qos` (kept by the caller), the port also maps each
  // packet's SL to the VL it leaves on (`qos->sl2vl`) and arbitrates its VLs
  // by `qos->vlarb` (vl_arbiter.h) instead of the scheduler's strict
  // priority and DWRR; a packet's VL on arrival is the one it came by.
  void use_credits(uint32_t port, const Credits::Params& params,
                   Time hoq_lifetime = Time::infinite(), const IbQos* qos = nullptr);

  // Cut-through: the slowest rate a frame this switch sends may have come
  // in at, anywhere upstream (a frame cut through from a slower port keeps
  // every later port busy until its last bit arrives, link.h); the
  // automatic PFC headroom covers it (pfc_headroom's `slowest_in`). Before
  // setup(); unset, the frames are taken to come in at their port's rate.
  void set_slowest_ingress(BitRate r) { slowest_in_ = r; }
  void set_forwarding_table(ForwardingTable table) {
    fib_ = std::move(table);
    hot_.fast = fib_.fast_view();
  }
  const ForwardingTable& forwarding_table() const { return fib_; }
  void add_rewrite(const PriorityRewrite& r) {
    rewrites_.push_back(r);
    hot_.rewrites = true;
  }
  // Runs `hook` for the egress queues of `priorities` (bit p = priority p)
  // on `ports` (empty: every port), after the hooks registered before it;
  // before setup(). The hook must outlive the switch's run.
  void add_egress_hook(EgressHook& hook, uint8_t priorities, std::vector<uint32_t> ports = {});

  void setup() override;
  void receive(uint32_t port, PacketHandle p) override;
  PacketHandle next_packet(uint32_t port) override;
  Time next_pull(uint32_t port, Time frame_end) const override;
  Time pfc_response_delay() const override { return cfg_.pfc.response_delay; }
  void on_link_up(uint32_t port) override;
  // InfiniBand: a switch discards the packets queued for, or routed to, an
  // output port whose cable is down (IBA §7.2: a port whose link is down
  // sends no data packets); they would otherwise hold their ingress credits
  // until their head-of-queue lifetime, blocking flows that never use the
  // dead cable. Ethernet ports keep sending into the dead cable, where
  // frames are lost (drops.link_down).
  void on_link_down(uint32_t port) override;

  // ---- observation ----
  SwitchCounters counters() const {
    SwitchCounters c = counters_;
    // Every forwarded packet is pushed onto one egress queue, and nothing
    // else is: the queues' counts are the count.
    for (const Port& pt : ports_) {
      for (uint8_t pr = 0; pr < pt.queues.lanes(); ++pr) c.forwarded += pt.queues.enqueued(pr);
    }
    c.ecn_marked = ecn_ ? ecn_->marked() : 0;
    return c;
  }
  // Pause and resume frames sent so far (counters() sums every queue).
  uint64_t pfc_sent() const { return counters_.pfc_sent; }
  // The ECN marker, if fabric.switch.ecn is enabled.
  const EcnMarker* ecn_marker() const { return ecn_.get(); }
  // `end`: the time an open credit wait is counted up to (the run's end when
  // collecting: a partition's clock stops at its own last event).
  QueueCounters queue_counters(uint32_t port, uint8_t prio, Time end) const;
  QueueCounters queue_counters(uint32_t port, uint8_t prio) const {
    return queue_counters(port, prio, ctx().now());
  }
  const Mmu& mmu() const { return *mmu_; }
  const EgressQueues& egress(uint32_t port) const { return ports_[port].queues; }
  // Is egress (port, prio) paused by its downstream neighbour now?
  bool egress_paused(uint32_t port, uint8_t prio) const {
    return ports_[port].fc.paused(prio, ctx().now());
  }
  // Why egress (port, prio) cannot send its head packet now, for the
  // deadlock detector: kPause, paused by PFC; kCredits, its head packet
  // needs more credits than the downstream VL buffer has granted (which is
  // not the same as none left: a 65-block packet waits with 64 granted).
  BlockedBy egress_blocked(uint32_t port, uint8_t prio) const {
    const Port& pt = ports_[port];
    const Time now = ctx().now();
    if (!pt.fc.credited()) return pt.fc.paused(prio, now) ? BlockedBy::kPause : BlockedBy::kNone;
    if (pt.queues.empty(prio)) return BlockedBy::kNone;
    return pt.fc.may_send(prio, pt.queues.packet(prio, 0), now) ? BlockedBy::kNone
                                                                : BlockedBy::kCredits;
  }
  // The link-level flow control of a port (PFC or credits).
  const PortFlowControl& flow_control(uint32_t port) const { return ports_[port].fc; }
  // When egress (port, prio) last started sending a frame.
  Time last_tx(uint32_t port, uint8_t prio) const { return ports_[port].queues.last_sent(prio); }
  // Are we pausing our upstream neighbour on (port, prio)?
  bool pausing(uint32_t port, uint8_t prio) const { return ports_[port].fc.holding(prio); }
  uint64_t drops(DropReason r) const;
  // With checks on (sim/invariants.h, flow_bytes): the data payload the
  // switch holds (pipeline and egress queues), and what it dropped, by
  // sending QP (LossLedger::key).
  void add_in_flight(std::map<uint64_t, int64_t>& to) const;
  void add_losses(std::map<uint64_t, int64_t>& to) const {
    if (losses_) losses_->add_to(to);
  }

  Probe<const PfcEvent&> pfc_probe;
  Probe<const DropEvent&> drop_probe;
  // Every ECN decision on an ECN-capable packet: the queue length it saw
  // (bytes, this packet excluded) and whether it was marked. Attach before
  // the run (setup() reads whether it listens).
  Probe<int64_t, bool> ecn_probe;
  // The egress port chosen for the first packet of every message (not its
  // retransmissions): enough to know every flow's path.
  Probe<const Packet&, uint32_t> route_probe;

 private:
  struct Port;
  void forward(PacketHandle p);
  // A packet out of the pipeline (`latency`): forward()ed, unless its queue
  // now takes nothing (a watchdog dropping it, a dead InfiniBand port).
  void leave_pipeline(PacketHandle p);
  void drop(PacketHandle p, uint32_t port, uint8_t prio, DropReason why);
  // ControlSink: a PFC frame a port's policy sends.
  void emit_link_control(uint32_t port, PacketHandle frame) override;
  void on_watchdog();
  uint8_t classify(const Packet& p) const;
  // Runs the ECN marker and then the hooks of p's queue at port `port` at
  // `kPoint` (an EgressHook::Points bit).
  template <uint8_t kPoint>
  void run_hooks(Packet& p, uint32_t port);
  // The hooks' part of run_hooks(), out of line.
  template <uint8_t kPoint>
  [[gnu::noinline]] void run_hook_table(Packet& p, uint32_t port);
  int64_t route(const Packet& p, uint32_t in_port);
  Bytes headroom_for(uint32_t port) const;
  Bytes auto_headroom_for(uint32_t port) const;
  Bytes worst_case_headroom_for(uint32_t port) const;
  // A lossless frame the MMU dropped at ingress (in_port, in_prio): counted
  // if the port's headroom is below the automatic value, else a violation
  // (with checks on).
  [[gnu::cold]] void lossless_drop(uint32_t in_port, uint8_t in_prio, const Packet& p);
  // A queued packet taken out unsent: buffer released, ingress lane told.
  PacketHandle take_and_release(uint32_t port, uint8_t prio);
  // A frame sent ignoring a pause came in at (port, prio).
  [[gnu::cold]] void note_pause_ignored(uint32_t port, uint8_t prio, Packet& p);

  // Counters of one egress queue not touched per packet (those that are
  // live in EgressQueues).
  struct QueueEvents {
    std::array<uint64_t, static_cast<size_t>(DropReason::kCount)> drops{};
    uint64_t watchdog_triggers = 0;
    uint64_t hoq_discards = 0;
  };
  // Per-packet state first (EgressQueues: one line to decide, one per
  // priority); what PFC frames, the watchdog and drops touch after it.
  struct Port {
    EgressQueues queues;               // also the control frames waiting to go out
    PortFlowControl fc;                // PFC or credits on this port's cable, both ways
    std::vector<Time> watchdog_until;  // per lane: stormed queue handling ends
    std::vector<QueueEvents> events;   // per lane
    // Head-of-queue lifetime (credited ports): since when each lane's head
    // packet has been at the head; empty if the lifetime is infinite.
    std::vector<Time> head_since;
    Time hoq_lifetime = Time::infinite();
    std::unique_ptr<VlArbiter> arb;  // InfiniBand: VL arbitration; else null
    // Credited ports: the lanes whose head or credits changed since
    // note_credit_waits() last looked (the others' answer is the same).
    uint32_t credit_dirty = ~0U;
    // InfiniBand: the port's cable is down; packets routed to it are
    // discarded (on_link_down).
    bool link_down = false;
    void set_lanes(uint8_t lanes) {
      queues.set_lanes(lanes);
      fc.set_lanes(lanes);
      watchdog_until.assign(lanes, Time::zero());
      events.assign(lanes, QueueEvents{});
    }
  };
  // PortXmitWait: tells each lane of credited port `pt` whether its head
  // packet waits for credits now. Only a lane marked in credit_dirty can
  // have a new answer, unless received grants are pending (they mature with
  // time alone).
  void note_credit_waits(Port& pt, Time now) {
    if (pt.credit_dirty != 0 || pt.fc.grants_pending()) note_dirty_credit_waits(pt, now);
  }
  void note_dirty_credit_waits(Port& pt, Time now);
  // Head-of-queue lifetime: lane `prio` of port `pt` has a new head now.
  void new_head(Port& pt, uint8_t prio, Time now);
  void on_hoq_timer();
  uint16_t allowed(Port& pt, Time now);
  // next_packet() on a port with VL arbitration (InfiniBand).
  [[gnu::noinline]] PacketHandle pop_arbitrated(Port& pt, Time now);
  // Schedules a pull of `port` for when its pause state next changes.
  void wake_on_pause_change(uint32_t port, Time now) const;

  // What every packet reads: one cache line. (The object's other lines are
  // touched by PFC frames, drops, probes and failures; with dozens of
  // switches on a packet's path, each line read per hop is a likely miss.)
  struct alignas(64) Hot {
    Mmu* mmu = nullptr;     // mmu_.get()
    Port* ports = nullptr;  // ports_.data()
    ForwardingTable::FastView fast;
    uint64_t ecmp_seed = 0;
    // The configuration, read per packet (classification, ECMP, watchdog,
    // pipeline): its pointer here saves the object's next line per hop.
    const SwitchConfig* cfg = nullptr;
    bool rewrites = false;  // any priority rewrite rule
    uint8_t hooks = 0;  // EgressHook::Points with a hook on some queue; kEcnAt(point): the marker
    uint8_t uniform_hooks = 0;      // Points whose hooks per priority are the same on every port
    bool watchdog_forward = false;  // the watchdog's action is forward: mark what it sends
    bool ib = false;                // InfiniBand: lanes are VLs, chosen by SL (ib_qos_)
    // Some port runs credits: without, a packet's egress port's flow
    // control is never read (PFC acts at ingress), a line per hop less.
    bool credited = false;
    uint8_t ecn_priorities = 0;  // EcnMarker::priorities(), 0 without ECN
  };
  static_assert(sizeof(Hot) == 64);
  // Hot::hooks' bit for the switch's own ECN marker at an EgressHook point.
  static constexpr uint8_t kEcnAt(uint8_t point) { return static_cast<uint8_t>(point << 2); }
  const SwitchConfig& hcfg() const { return *hot_.cfg; }
  Hot hot_;
  const SwitchConfig& cfg_;
  uint8_t lanes_;
  BitRate slowest_in_;  // set_slowest_ingress()
  ForwardingTable fib_;
  std::vector<PriorityRewrite> rewrites_;
  const IbQos* ib_qos_ = nullptr;  // InfiniBand ports' SL2VL and VL arbitration
  RngStream rng_;
  std::vector<Port> ports_;
  std::unique_ptr<Mmu> mmu_;
  DelayLine<Switch, &Switch::leave_pipeline> pipeline_;
  MemberEvent<Switch, &Switch::on_watchdog> watchdog_;
  SwitchCounters counters_;
  bool checks_ = false;                    // sim().checks(), read at setup
  bool queue_control_ = false;             // emit_link_control queues (on_link_up)
  std::vector<bool> headroom_below_auto_;  // per port
  // Per ingress (port, priority), port * lanes_ + priority: when a frame
  // last came in that its sender sent ignoring the pause (kFlagPauseIgnored),
  // and per port how long such a frame's excess can cause drops after it.
  std::vector<Time> pause_ignored_at_;
  std::vector<Time> pause_ignored_span_;
  std::vector<const Credits::Params*> credits_;  // per port: null = PFC (use_credits)
  std::vector<Time> hoq_lifetime_;               // per port (use_credits)
  MemberEvent<Switch, &Switch::on_hoq_timer> hoq_timer_;
  std::unique_ptr<LossLedger> losses_;  // with checks on
  // Egress hooks as registered; then, from setup(), the hooks of each
  // (port, priority, point) in registration order:
  // hook_list_[hook_range_[k].begin .. .end) with
  // k = (port * lanes_ + priority) * 2 + (0 at enqueue, 1 at dequeue);
  // with Hot::uniform_hooks, every port's ranges are port 0's.
  struct HookRegistration {
    EgressHook* hook;
    uint8_t priorities;
    std::vector<uint32_t> ports;  // empty: all
  };
  std::vector<HookRegistration> hook_regs_;
  struct HookRange {
    uint32_t begin = 0;
    uint32_t end = 0;
  };
  std::vector<HookRange> hook_range_;
  std::vector<EgressHook*> hook_list_;
  std::unique_ptr<EcnMarker> ecn_;  // fabric.switch.ecn, when enabled
};

}  // namespace rdmasim
