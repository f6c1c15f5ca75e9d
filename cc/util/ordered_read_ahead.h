// Produces results for positions 0, 1, 2, ... in order, computing up to
// `window` of them ahead on a caller-supplied scheduler.
//
// tf_gulp's source iterators use it to keep every core decoding while the
// consumer handles earlier elements: no barrier between groups, reads and
// decodes of different elements overlap. Each result is a pure function of
// its position, so work done ahead can be discarded at any time (a skip, a
// checkpoint restore) without changing what the consumer sees.
//
// The producer must be safe to call from several threads at once, and must not
// take locks the consumer holds while calling Take(). The consumer never waits
// for a task that has not started: it runs that task itself. So progress never depends on the scheduler having a free thread,
// even when the consumer runs on one of the scheduler's own threads.
#ifndef TF_GULP_CC_UTIL_ORDERED_READ_AHEAD_H_
#define TF_GULP_CC_UTIL_ORDERED_READ_AHEAD_H_

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "cc/util/parallel_for.h"

namespace tfg {

// How many read-ahead threads to run: one per core (`cores`), but no more
// than keep the window (threads + `extra_units` units of about `unit_bytes`
// each) within `budget_bytes`; at least one. A source with large units (a
// batch of 256 records of 256 KiB is 64 MiB) on a machine with many cores
// would otherwise hold gigabytes in flight.
inline int ReadAheadThreadsWithin(int cores, double unit_bytes, double budget_bytes,
                                  int extra_units) {
  int threads = std::max(1, cores);
  if (unit_bytes > 0) {
    const double fit = budget_bytes / unit_bytes - extra_units;
    if (fit < threads) threads = std::max(1, static_cast<int>(fit));
  }
  return threads;
}

template <typename Result>
class OrderedReadAhead {
 public:
  using Producer = std::function<Result(int64_t position)>;
  // A result in two steps. `prepare` runs on the consumer's thread when the
  // position is scheduled (or taken), `fill` completes what it returned, on
  // the scheduler's threads or inline. What belongs to the consumer is made
  // in `prepare`: output buffers above all. malloc keeps an arena per thread,
  // and large blocks that a reader thread allocates and the consumer frees go
  // back to the system and are faulted in again for every result.
  using Preparer = std::function<Result(int64_t position)>;
  using Filler = std::function<void(int64_t position, Result* result)>;

  // Positions run from `start` to `end` (exclusive).
  OrderedReadAhead(Scheduler schedule, int64_t window, Producer produce,
                   int64_t start, int64_t end)
      : OrderedReadAhead(
            std::move(schedule), window, [](int64_t) { return Result(); },
            [produce = std::move(produce)](int64_t position, Result* result) {
              *result = produce(position);
            },
            start, end) {}

  OrderedReadAhead(Scheduler schedule, int64_t window, Preparer prepare,
                   Filler fill, int64_t start, int64_t end)
      : state_(std::make_shared<State>()) {
    state_->schedule = std::move(schedule);
    state_->window = std::max<int64_t>(1, window);
    state_->prepare = std::move(prepare);
    state_->fill = std::move(fill);
    state_->next_to_schedule = start;
    state_->end = end;
  }

  ~OrderedReadAhead() {
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->slots.clear();  // tasks that start later find no slot and return
    state_->cancelled = true;
    state_->changed.wait(lock, [&] { return state_->running == 0; });
  }

  OrderedReadAhead(const OrderedReadAhead&) = delete;
  OrderedReadAhead& operator=(const OrderedReadAhead&) = delete;

  // The result for `position`; positions must be taken in increasing order,
  // by one consumer (Take, SkipTo and Reset are never called concurrently).
  Result Take(int64_t position) {
    std::unique_lock<std::mutex> lock(state_->mu);
    Discard(position);
    ScheduleAhead(position, lock);
    while (true) {
      auto it = state_->slots.find(position);
      if (it == state_->slots.end()) {
        // Not scheduled (e.g. position past the window): compute inline.
        lock.unlock();
        Result result = state_->prepare(position);
        state_->fill(position, &result);
        return result;
      }
      Slot& slot = it->second;
      if (slot.status == Slot::kDone) {
        Result result = std::move(slot.result);
        state_->slots.erase(it);
        return result;
      }
      if (slot.status == Slot::kPending) {
        // Do it here rather than wait for a thread to pick it up.
        Result result = std::move(slot.result);
        state_->slots.erase(it);
        lock.unlock();
        state_->fill(position, &result);
        return result;
      }
      state_->changed.wait(lock);
    }
  }

  // Drops every result before `position` and restarts read-ahead there.
  void SkipTo(int64_t position) {
    std::lock_guard<std::mutex> lock(state_->mu);
    Discard(position);
    state_->next_to_schedule = std::max(state_->next_to_schedule, position);
  }

  // Drops all work and restarts at `position` (e.g. a restored checkpoint).
  // Returns once no task is running, so the caller may then change what the
  // producer reads.
  void Reset(int64_t position) {
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->slots.clear();
    state_->next_to_schedule = position;
    state_->changed.wait(lock, [&] { return state_->running == 0; });
  }

 private:
  struct Slot {
    // kPreparing: the consumer is preparing it (no task may take it yet).
    enum Status { kPreparing, kPending, kRunning, kDone } status = kPreparing;
    Result result;  // prepared (kPending), filled (kDone)
  };
  struct State {
    std::mutex mu;
    std::condition_variable changed;
    Scheduler schedule;
    Preparer prepare;
    Filler fill;
    int64_t window = 1;
    int64_t next_to_schedule = 0;
    int64_t end = 0;
    int64_t running = 0;
    bool cancelled = false;
    std::map<int64_t, Slot> slots;
  };

  // Requires state_->mu.
  void Discard(int64_t position) {
    auto& slots = state_->slots;
    slots.erase(slots.begin(), slots.lower_bound(position));
  }

  // Prepares and schedules the positions up to the window. `lock` holds
  // state_->mu, released while a position is prepared (tasks running
  // meanwhile only look at pending slots).
  void ScheduleAhead(int64_t position, std::unique_lock<std::mutex>& lock) {
    State& s = *state_;
    s.next_to_schedule = std::max(s.next_to_schedule, position);
    const int64_t limit = std::min(s.end, position + s.window);
    while (s.next_to_schedule < limit) {
      const int64_t p = s.next_to_schedule++;
      s.slots[p].status = Slot::kPreparing;
      lock.unlock();
      Result prepared = s.prepare(p);
      lock.lock();
      auto it = s.slots.find(p);
      if (it == s.slots.end() || it->second.status != Slot::kPreparing) continue;
      it->second.result = std::move(prepared);
      it->second.status = Slot::kPending;
      std::shared_ptr<State> state = state_;
      s.schedule([state]() { RunTask(*state); });
    }
  }

  // One task per pending slot, but a task produces the LOWEST pending
  // position, not the one it was scheduled for: thread pools (Eigen's, tf.data's
  // work queues) need not run tasks in the order they were scheduled, and a
  // low position left pending is one the consumer will soon block on (or
  // produce inline, alone, while the pool's threads run ahead).
  static void RunTask(State& s) {
    int64_t position;
    Result result;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      if (s.cancelled) return;
      auto it = std::find_if(s.slots.begin(), s.slots.end(), [](const auto& e) {
        return e.second.status == Slot::kPending;
      });
      if (it == s.slots.end()) return;  // taken by the consumer, skipped, reset
      position = it->first;
      result = std::move(it->second.result);
      it->second.status = Slot::kRunning;
      ++s.running;
    }
    s.fill(position, &result);
    {
      std::lock_guard<std::mutex> lock(s.mu);
      --s.running;
      auto it = s.slots.find(position);
      if (it != s.slots.end() && it->second.status == Slot::kRunning) {
        it->second.result = std::move(result);
        it->second.status = Slot::kDone;
      }
    }
    // Notified after the lock is released: a waiter woken while it is still
    // held (glibc's condition variables do not hand the mutex over) would
    // block on it at once, and the wake-up would cost two context switches
    // instead of one. `s` outlives this call (the task holds the State).
    s.changed.notify_all();
  }

  std::shared_ptr<State> state_;
};

}  // namespace tfg

#endif  // TF_GULP_CC_UTIL_ORDERED_READ_AHEAD_H_
