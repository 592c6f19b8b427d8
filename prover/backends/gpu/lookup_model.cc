#include "prover/backends/gpu/lookup_model.h"

#include <algorithm>

namespace wipeproof {
namespace gpu {

LookupModel ModelLookups(const LookupAssumptions& a, uint32_t labels_per_stream, int streams) {
  LookupModel m;
  m.labels_per_stream = labels_per_stream;
  m.streams = std::max(1, streams);
  const double copy_s = static_cast<double>(labels_per_stream) * 32.0 / a.copy_bytes_per_s;
  m.submit_us = m.streams * (labels_per_stream * a.stage_s_per_label + a.submit_s) * 1e6;
  m.device_us = (a.start_latency_s + a.host_read_latency_s + a.place_latency_s + a.memory_latency_s + a.host_write_s +
                 a.completion_s) *
                1e6;
  m.copy_us = m.streams * copy_s * 1e6;
  m.total_us = m.submit_us + m.device_us + m.copy_us;
  return m;
}

}  // namespace gpu
}  // namespace wipeproof
