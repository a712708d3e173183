// Probe: a named point where a model reports something that happened (a PFC
// frame, a drop). Recorders attach from outside, by configuration; with
// nothing attached, emitting costs one branch.
#pragma once

#include <functional>
#include <vector>

namespace rdmasim {

template <class... Args>
class Probe {
 public:
  using Sink = std::function<void(Args...)>;
  void attach(Sink s) { sinks_.push_back(std::move(s)); }
  // Check before building an expensive argument.
  bool attached() const { return !sinks_.empty(); }
  void emit(Args... args) const {
    if (sinks_.empty()) [[likely]]
      return;
    for (const Sink& s : sinks_) s(args...);
  }

 private:
  std::vector<Sink> sinks_;
};

}  // namespace rdmasim
