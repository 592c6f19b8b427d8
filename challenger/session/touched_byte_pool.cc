#include "challenger/session/touched_byte_pool.h"

#include <algorithm>

namespace wipeproof {

size_t TouchedBytePool::Reserve(size_t count, size_t capacity, size_t budget_bytes) {
  if (capacity == 0) return 0;
  const size_t room = budget_bytes > bytes_ ? (budget_bytes - bytes_) / capacity : 0;
  count = std::min(count, room);
  if (count == 0) return 0;
  auto at = std::lower_bound(classes_.begin(), classes_.end(), capacity,
                             [](const Class& c, size_t cap) { return c.capacity < cap; });
  if (at == classes_.end() || at->capacity != capacity) at = classes_.insert(at, Class{capacity, {}});
  at->buffers.reserve(at->buffers.size() + count);
  for (size_t i = 0; i < count; ++i) {
    proto::Bytes buffer(capacity);  // written: every page of it is in memory from here on
    buffer.clear();                 // the capacity stays
    at->buffers.push_back(std::move(buffer));
  }
  bytes_ += count * capacity;
  return count;
}

proto::Bytes TouchedBytePool::CopyOf(const uint8_t* data, size_t size) {
  for (Class& c : classes_) {
    if (c.capacity < size || c.buffers.empty()) continue;
    proto::Bytes out = std::move(c.buffers.back());
    c.buffers.pop_back();
    bytes_ -= c.capacity;
    out.assign(data, data + size);
    return out;
  }
  return proto::Bytes(data, data + size);
}

size_t TouchedBytePool::buffers() const {
  size_t n = 0;
  for (const Class& c : classes_) n += c.buffers.size();
  return n;
}

}  // namespace wipeproof
