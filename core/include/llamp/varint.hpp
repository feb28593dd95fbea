#pragma once
// LEB128 varints and zigzag, shared by the trace encoder and decoder.
#include <cstdint>

namespace llamp {

inline uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

// Writes v at p (at most 10 bytes), returns the byte after it.
inline uint8_t* put_varint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v) | 0x80;
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// Reads a varint from [p, end). Returns nullptr on truncation or overlong input.
inline const uint8_t* get_varint(const uint8_t* p, const uint8_t* end, uint64_t& out) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64 && p < end; shift += 7) {
    uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      out = v;
      return p;
    }
  }
  return nullptr;
}

}  // namespace llamp
