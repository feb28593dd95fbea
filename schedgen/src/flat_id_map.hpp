#pragma once
// A small open-addressing hash map from 64-bit ids to values, for the per-rank request table: a
// few dozen live entries inserted and erased millions of times. std::unordered_map allocates a
// node per insert; this keeps everything in one array (linear probing, tombstones, rehash when
// live + dead entries pass half the capacity).
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace llamp::schedgen {

template <class V>
class FlatIdMap {
 public:
  FlatIdMap() { slots_.resize(64); }

  V* find(uint64_t id) {
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(id) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.state == State::Empty) return nullptr;
      if (s.state == State::Live && s.id == id) return &s.value;
    }
  }
  // Inserts a default value if absent; `inserted` says which.
  V& get_or_insert(uint64_t id, bool& inserted) {
    if (V* v = find(id)) {
      inserted = false;
      return *v;
    }
    if ((live_ + dead_ + 1) * 2 > slots_.size()) rehash(live_ * 4 > slots_.size() ? slots_.size() * 2 : slots_.size());
    size_t mask = slots_.size() - 1;
    size_t i = hash(id) & mask;
    while (slots_[i].state == State::Live) i = (i + 1) & mask;
    if (slots_[i].state == State::Dead) --dead_;
    slots_[i].state = State::Live;
    slots_[i].id = id;
    slots_[i].value = V{};
    ++live_;
    inserted = true;
    return slots_[i].value;
  }
  void erase(uint64_t id) {
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(id) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.state == State::Empty) return;
      if (s.state == State::Live && s.id == id) {
        s.state = State::Dead;
        s.value = V{};
        --live_;
        ++dead_;
        return;
      }
    }
  }
  template <class F>
  void for_each(F&& f) {
    for (Slot& s : slots_)
      if (s.state == State::Live) f(s.id, s.value);
  }

 private:
  enum class State : uint8_t { Empty, Live, Dead };
  struct Slot {
    uint64_t id = 0;
    State state = State::Empty;
    V value{};
  };
  static size_t hash(uint64_t id) { return static_cast<size_t>((id * 0x9E3779B97F4A7C15ull) >> 17); }
  // Rebuilds the table (dropping tombstones), reusing the spare array when the size stays.
  void rehash(size_t capacity) {
    spare_.resize(capacity);
    for (Slot& s : spare_) s.state = State::Empty;
    spare_.swap(slots_);
    std::vector<Slot>& old = spare_;
    live_ = dead_ = 0;
    size_t mask = slots_.size() - 1;
    for (Slot& s : old) {
      if (s.state != State::Live) continue;
      size_t i = hash(s.id) & mask;
      while (slots_[i].state != State::Empty) i = (i + 1) & mask;
      slots_[i].state = State::Live;
      slots_[i].id = s.id;
      slots_[i].value = std::move(s.value);
      ++live_;
    }
  }
  std::vector<Slot> slots_, spare_;
  size_t live_ = 0, dead_ = 0;
};

}  // namespace llamp::schedgen
