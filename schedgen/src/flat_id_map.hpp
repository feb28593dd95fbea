#pragma once
// A small open-addressing hash map from 64-bit ids to values, for the per-rank request table: a
// few dozen live entries inserted and erased millions of times. std::unordered_map allocates a
// node per insert. Here ids (which the tracer hands out in increasing order) index the table
// almost directly, so consecutive requests land in consecutive slots; linear probing with
// backward-shift deletion keeps chains short without tombstones; keys sit in their own array so
// probing touches one cache line.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace llamp::schedgen {

template <class V>
class FlatIdMap {
 public:
  FlatIdMap() : keys_(64, kFree), values_(64) {}

  V* find(uint64_t id) {
    size_t i = slot_of(id);
    return i == kNotFound ? nullptr : &values_[i];
  }
  // Inserts a default value if absent; `inserted` says which.
  V& get_or_insert(uint64_t id, bool& inserted) {
    size_t mask = keys_.size() - 1;
    size_t i = home(id) & mask;
    for (; keys_[i] != kFree; i = (i + 1) & mask)
      if (keys_[i] == id) {
        inserted = false;
        return values_[i];
      }
    if ((live_ + 1) * 2 > keys_.size()) {
      grow();
      return get_or_insert(id, inserted);
    }
    keys_[i] = id;
    values_[i] = V{};
    ++live_;
    inserted = true;
    return values_[i];
  }
  void erase(uint64_t id) {
    size_t i = slot_of(id);
    if (i == kNotFound) return;
    // Backward shift: move later entries of the probe chain into the hole.
    size_t mask = keys_.size() - 1;
    for (size_t j = (i + 1) & mask; keys_[j] != kFree; j = (j + 1) & mask) {
      size_t h = home(keys_[j]) & mask;
      bool movable = (i <= j) ? (h <= i || h > j) : (h <= i && h > j);
      if (movable) {
        keys_[i] = keys_[j];
        values_[i] = std::move(values_[j]);
        i = j;
      }
    }
    keys_[i] = kFree;
    values_[i] = V{};
    --live_;
  }
  template <class F>
  void for_each(F&& f) {
    for (size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] != kFree) f(keys_[i], values_[i]);
  }

 private:
  static constexpr uint64_t kFree = UINT64_MAX;  // never a request id (ids count up from 1)
  static constexpr size_t kNotFound = SIZE_MAX;
  static size_t home(uint64_t id) { return static_cast<size_t>(id ^ (id >> 29)); }
  size_t slot_of(uint64_t id) const {
    size_t mask = keys_.size() - 1;
    for (size_t i = home(id) & mask; keys_[i] != kFree; i = (i + 1) & mask)
      if (keys_[i] == id) return i;
    return kNotFound;
  }
  void grow() {
    std::vector<uint64_t> keys(keys_.size() * 2, kFree);
    std::vector<V> values(keys.size());
    size_t mask = keys.size() - 1;
    for (size_t s = 0; s < keys_.size(); ++s) {
      if (keys_[s] == kFree) continue;
      size_t i = home(keys_[s]) & mask;
      while (keys[i] != kFree) i = (i + 1) & mask;
      keys[i] = keys_[s];
      values[i] = std::move(values_[s]);
    }
    keys_.swap(keys);
    values_.swap(values);
  }
  std::vector<uint64_t> keys_;
  std::vector<V> values_;
  size_t live_ = 0;
};

}  // namespace llamp::schedgen
