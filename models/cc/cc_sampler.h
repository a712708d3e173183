// CcSampler: the samples of one QP's congestion-control state that the trace
// keeps (/cc_samples, docs/trace.md): the changes its algorithm reports
// (CongestionControl::observe), decimated by an interval I.
//
// Contract (what is kept, for an interval I > 0; the rows of one QP):
//  1. The first change, at its own time, with the state it set.
//  2. For every k with a change after the first in ((k-1) I, k I] and
//     k I not after the end of the run: a row at k I with the state after
//     the last change of that interval, i.e. the state at k I.
//  3. The last change, if its interval ends after the end of the run: at
//     its own time, with the state it set (the state at the end of the run).
//  So the rows of a QP are at most one per interval after the first (the
//  first change and the end of its interval may share one), at most I apart only
//  where 1 or 3 applies (the first row and the next; the last row and the
//  one before), in time order; each holds the state at its time, and
//  `changes` says how many changes it stands for since the row before.
//  With I = 0 every change is a row, at its own time.
//  4. change() is called from the QP's NIC's events only (its partition);
//     finish() after the run; settle() between them, when no change is
//     running. Nothing is scheduled: recording changes no event.
#pragma once

#include <cstdint>
#include <vector>

#include "models/cc/congestion_control.h"
#include "sim/units.h"

namespace rdmasim {

struct CcSampleRow {
  Time time;
  CcState state;         // as reported at the change the row holds
  uint32_t changes = 0;  // changes since the previous row, this one's included
};

class CcSampler {
 public:
  explicit CcSampler(Time interval) : interval_(interval) {}

  void change(const CcState& s) {
    ++count_;
    if (!any_ || interval_ == Time::zero()) {
      any_ = true;
      emit(s.time, s);
      return;
    }
    const int64_t k = window_of(s.time);
    if (has_pending_ && k != pending_k_) {
      // A later interval: the pending state is its interval's last.
      --count_;
      emit(interval_ * pending_k_, pending_);
      count_ = 1;
    }
    pending_ = s;
    pending_k_ = k;
    has_pending_ = true;
  }

  // The run ended at `end`: the last pending state, on the grid if its
  // interval closed by then, else at its own time (contract 3).
  void finish(Time end) {
    if (!has_pending_) return;
    const Time grid = interval_ * pending_k_;
    emit(grid <= end ? grid : pending_.time, pending_);
  }

  // No change comes before `t`, and the run ends no earlier: a pending
  // state whose interval closed before `t` is that interval's last, and
  // its row is written now, exactly as change() or finish() would write it
  // later. (The runner settles samplers before it takes their rows, so a
  // long run's rows leave the sampler as it goes.)
  void settle(Time t) {
    if (has_pending_ && interval_ * pending_k_ < t) emit(interval_ * pending_k_, pending_);
  }
  // Rows still to come are at this time or later, if a state is pending;
  // otherwise at the time of a change still to come.
  Time pending_since() const { return has_pending_ ? pending_.time : Time::infinite(); }

  const std::vector<CcSampleRow>& rows() const { return rows_; }
  std::vector<CcSampleRow>& rows() { return rows_; }

 private:
  // k such that t is in ((k-1) I, k I].
  int64_t window_of(Time t) const {
    return (t.in_ps() + interval_.in_ps() - 1) / interval_.in_ps();
  }
  void emit(Time at, const CcState& s) {
    rows_.push_back(CcSampleRow{at, s, count_});
    count_ = 0;
    has_pending_ = false;
  }

  Time interval_;
  bool any_ = false;
  bool has_pending_ = false;
  CcState pending_;
  int64_t pending_k_ = 0;
  uint32_t count_ = 0;
  std::vector<CcSampleRow> rows_;
};

}  // namespace rdmasim
