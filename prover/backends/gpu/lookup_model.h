// A device model of a round's lookups on GPUs, on the CPU: the microseconds from the first
// DeviceRegion::StartLookup to the last FinishLookup (the agent's round path,
// prover/agent/agent_core.cc LookUpRoundLocked) when `streams` lookups of q labels each are started
// together, each on its own lookup stream (kernels/gpu/label_kernels.cu LaunchLookup/WaitLookup).
// Every figure it gives is *modelled*: the latencies are assumptions (below, all named in the
// JSON that prints them), the same for every GPU shape; `wipeproof-gpu-check lookup` measures the
// same quantity on a device and prints both. The first H200 run (2026-12-04, docs/benchmarks.md
// "The first H200 run") bore out the submission and the device latency and showed the host's
// placing of the halves (~15-29 ns a label there), which the lookup kernel now does itself
// ("Lookup placement", the same day): the staging below is then a copy of the indices.
//
// The path modelled, per stream: the host checks the indices and copies them into pinned memory
// (stage_s_per_label a label), then submits the lookup kernel and an event (submit_s; the agent
// thread's time: the submissions of all streams follow each other); on the device the kernel
// starts (start_latency_s), each thread reads its index from pinned host memory over the host link
// (host_read_latency_s), places its halves through the region's tables in device memory
// (place_latency_s, kernels/gpu/label_places.h), reads its label from device memory
// (memory_latency_s), and writes it to pinned host memory (host_write_s); the host sees the event
// complete (completion_s) and copies the labels into the answer (copy). The kernels of different
// streams run at the same time (q <= 4096 labels is at most 32 blocks of 128 threads, a sliver of
// any device), so a round over k streams costs k submissions and k copies but one device latency:
//   total(k) = k (q stage_s_per_label + submit_s + copy(q)) + start + host read + place + memory
//              + host write + completion.
// That is the property the agent's round path is built for (lookups started together, then
// waited for), tested on emulated devices by tests/prover/agent_round_path_test.cc.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

namespace wipeproof {
namespace gpu {

struct LookupAssumptions {
  double stage_s_per_label = 2e-9;      // host: a label's check and its index's copy into pinned
                                        // memory (measured on the H200's host: 1.5-2 ns a label;
                                        // placing the halves on the host took 15-29: benchmarks.md)
  double submit_s = 5e-6;               // host: one kernel launch and one event record
  double start_latency_s = 4e-6;        // submitted to the kernel's first instruction
  double host_read_latency_s = 1.5e-6;  // a device thread's read of pinned host memory (a link round trip)
  double place_latency_s = 0.5e-6;      // a thread's reads of the placement tables (runs, bucket,
                                        // piece; cached): the H200's device time grew 0.5 us at q=256
  double memory_latency_s = 0.8e-6;     // one dependent random 32-byte read of device memory
  double host_write_s = 1e-6;           // the labels' writes to pinned host memory, until visible
  double completion_s = 3e-6;           // the event's completion seen by the host's synchronize
  double copy_bytes_per_s = 10e9;       // host memcpy from the pinned buffer into the answer
};

struct LookupModel {
  uint32_t labels_per_stream = 0;  // q
  int streams = 0;                 // lookups started together, each on its own stream
  double submit_us = 0;            // all streams' staging and submissions (host, serial)
  double device_us = 0;            // start to the last label visible to the host (streams overlap)
  double copy_us = 0;              // all streams' copies into the answer (host, serial)
  double total_us = 0;             // submit + device + copy
};

// The model of `streams` (>= 1) lookups of `labels_per_stream` labels started together. Streams < 1
// are taken as 1.
LookupModel ModelLookups(const LookupAssumptions& assumptions, uint32_t labels_per_stream, int streams);

}  // namespace gpu
}  // namespace wipeproof
