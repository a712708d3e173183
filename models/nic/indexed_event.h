// IndexedEvent: an event that calls `(owner->*Method)(index)`, for a
// component that owns one timer per QP or per port (the index says which).
// Like MemberEvent (sim/event.h), it is owned by its component and never
// allocates when scheduled.
#pragma once

#include <cstdint>

#include "sim/event.h"

namespace rdmasim {

template <class T, void (T::*Method)(uint32_t)>
class IndexedEvent final : public Event {
 public:
  IndexedEvent(T* owner, uint32_t index, EventClass cls, uint32_t tag)
      : Event(cls, tag, &IndexedEvent::thunk), owner_(owner), index_(index) {}

 private:
  static void thunk(Event& e) {
    auto& self = static_cast<IndexedEvent&>(e);
    (self.owner_->*Method)(self.index_);
  }
  T* owner_;
  uint32_t index_;
};

}  // namespace rdmasim
