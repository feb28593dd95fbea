#pragma once
// A map from MPI handles (requests, messages, communicators) to two 64-bit words, safe for
// concurrent use without a lock on the common path (MPI_THREAD_MULTIPLE).
//
// Why this shape: MPI libraries recycle handles (MPICH hands out pool indices), so the set of
// distinct handle values stays near the peak number of live objects. A slot, once claimed by a
// handle value, belongs to it forever; erasing only clears the value. Lookups and updates are
// then plain atomic loads/stores on a fixed array, and no memory is ever reclaimed under a
// reader. When the probe budget is exhausted, a mutex-protected overflow map takes the rest.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <utility>

namespace llamp::tracer {

// A non-zero key for any handle type (int in MPICH, a pointer in Open MPI).
template <typename H>
inline uint64_t handle_key(H h) {
  if constexpr (std::is_pointer_v<H>) {
    return reinterpret_cast<uint64_t>(h) | (uint64_t{1} << 63);
  } else {
    return static_cast<uint64_t>(static_cast<uint32_t>(h)) | (uint64_t{1} << 63);
  }
}

class HandleTable {
 public:
  struct Value {
    uint64_t id = 0;  // 0 = absent
    uint64_t aux = 0;
  };

  explicit HandleTable(unsigned log2_slots = 14)
      : slots_(new Slot[size_t{1} << log2_slots]), mask_((uint64_t{1} << log2_slots) - 1), shift_(64 - log2_slots) {}

  void put(uint64_t key, Value v) {
    Slot* s = find_or_claim(key);
    if (s) {
      s->aux.store(v.aux, std::memory_order_relaxed);
      s->id.store(v.id, std::memory_order_release);
      return;
    }
    put_overflow(key, v);
  }

  Value get(uint64_t key) const {
    uint64_t i = index(key);
    for (unsigned probe = 0; probe < kMaxProbe; ++probe, i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      const uint64_t k = s.key.load(std::memory_order_acquire);
      if (k == key) return {s.id.load(std::memory_order_acquire), s.aux.load(std::memory_order_relaxed)};
      if (k == 0) return {};
    }
    return get_overflow(key);
  }

  void erase(uint64_t key) {
    uint64_t i = index(key);
    for (unsigned probe = 0; probe < kMaxProbe; ++probe, i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      const uint64_t k = s.key.load(std::memory_order_acquire);
      if (k == key) {
        s.id.store(0, std::memory_order_release);
        return;
      }
      if (k == 0) return;
    }
    if (has_overflow_.load(std::memory_order_acquire)) erase_overflow(key);
  }

 private:
  static constexpr unsigned kMaxProbe = 32;
  struct Slot {
    std::atomic<uint64_t> key{0};
    std::atomic<uint64_t> id{0};
    std::atomic<uint64_t> aux{0};
  };

  uint64_t index(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_; }

  Slot* find_or_claim(uint64_t key) {
    uint64_t i = index(key);
    for (unsigned probe = 0; probe < kMaxProbe; ++probe, i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      uint64_t k = s.key.load(std::memory_order_acquire);
      if (k == 0 && s.key.compare_exchange_strong(k, key, std::memory_order_acq_rel)) return &s;
      if (k == key) return &s;
    }
    return nullptr;
  }

  // The overflow map's paths out of line: flattened wrappers inline the table's fast path only.
  [[gnu::noinline]] void put_overflow(uint64_t key, Value v) {
    std::lock_guard lock(overflow_mutex_);
    overflow_[key] = v;
    has_overflow_.store(true, std::memory_order_release);
  }

  [[gnu::noinline]] void erase_overflow(uint64_t key) {
    std::lock_guard lock(overflow_mutex_);
    overflow_.erase(key);
  }

  [[gnu::noinline]] Value get_overflow(uint64_t key) const {
    if (!has_overflow_.load(std::memory_order_acquire)) return {};
    std::lock_guard lock(overflow_mutex_);
    auto it = overflow_.find(key);
    return it == overflow_.end() ? Value{} : it->second;
  }

  std::unique_ptr<Slot[]> slots_;
  uint64_t mask_;
  unsigned shift_;
  mutable std::mutex overflow_mutex_;
  std::unordered_map<uint64_t, Value> overflow_;
  std::atomic<bool> has_overflow_{false};
};

}  // namespace llamp::tracer
