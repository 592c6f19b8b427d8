// Byte buffers allocated and written once before a session's rounds, for the copies a round keeps
// (its request's and its answer's canonical bytes in the round log), so that no round is the one
// that first writes a fresh page of the heap. On the reference VM each such page fault costs a
// round 20-40 us, and during a wave, where every member's log grows at once, about one check in
// eight paid one (docs/benchmarks.md "Page faults in the challenger's rounds"; issue 23).
//
// Buffers come in classes by capacity (Reserve); CopyOf takes the smallest pooled buffer that
// holds the bytes, or allocates a fresh one when none does (a pool used up costs speed, never
// correctness). The copy is an ordinary proto::Bytes: it leaves the pool for good.
//
// Thread-safety: none; one session's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proto/codec.h"

namespace wipeproof {

class TouchedBytePool {
 public:
  // Adds `count` buffers of `capacity` bytes, each written once (zeros), unless that would take
  // the pool past `budget_bytes` in all: then only as many as fit. Returns the buffers added.
  size_t Reserve(size_t count, size_t capacity, size_t budget_bytes);

  // `size` bytes from `data` in a pooled buffer (the smallest whose capacity fits), else in a
  // fresh one.
  proto::Bytes CopyOf(const uint8_t* data, size_t size);

  size_t buffers() const;                  // pooled, not yet taken
  size_t bytes() const { return bytes_; }  // capacity of the buffers pooled, not yet taken

 private:
  struct Class {
    size_t capacity = 0;
    std::vector<proto::Bytes> buffers;
  };
  std::vector<Class> classes_;  // ascending capacity
  size_t bytes_ = 0;
};

}  // namespace wipeproof
