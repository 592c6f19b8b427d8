#include "prover/agent/device_fill.h"

#include <glog/logging.h>

#include <algorithm>
#include <string>
#include <thread>

namespace wipeproof {
namespace {

// Runs fn(i) for every slot on its own thread and waits for all.
template <typename Fn>
void ForEachSlotConcurrently(size_t n, Fn fn) {
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 1; i < n; ++i) threads.emplace_back([&fn, i] { fn(i); });
  if (n > 0) fn(0);
  for (auto& t : threads) t.join();
}

Status Acquire(DeviceSlot& slot) {
  const MatchedDevice& p = slot.plan;
  AcquireOptions options;
  options.bytes = (p.label_bytes + kAcquireGranuleBytes - 1) / kAcquireGranuleBytes * kAcquireGranuleBytes;
  auto memory = p.backend->Acquire(p.selector, options);
  if (!memory.ok()) {
    if (memory.status().code() == StatusCode::kResourceExhausted) {
      return ResourceExhaustedError(ShortOfCapacity(p.selector) + ": taking " + std::to_string(options.bytes) +
                                    " bytes failed: " + memory.status().message());
    }
    return memory.status().WithContext("device '" + p.selector + "'");
  }
  slot.memory = std::move(memory).value();
  slot.bytes_acquired.store(slot.memory->bytes_held());
  if (slot.memory->label_capacity() < p.label_count) {
    const uint64_t held = slot.memory->bytes_held();
    slot.memory.reset();
    slot.bytes_acquired.store(0);
    return ResourceExhaustedError(ShortOfCapacity(p.selector) + ": the plan needs " + std::to_string(p.label_bytes) +
                                  " bytes, the backend gave " + std::to_string(held) + " bytes");
  }
  return Status::Ok();
}

}  // namespace

uint64_t ReleaseSlots(const std::vector<std::unique_ptr<DeviceSlot>>& slots) {
  uint64_t bytes = 0;
  for (const auto& slot : slots) {
    if (slot->memory) {
      bytes += slot->memory->bytes_held();
      slot->memory->Release();
      slot->memory.reset();
      slot->bytes_acquired.store(0);
    }
  }
  return bytes;
}

Status AcquireAndFill(const std::vector<std::unique_ptr<DeviceSlot>>& slots, const FillSettings& settings) {
  CHECK(settings.cancel != nullptr && settings.clock != nullptr);
  const size_t n = slots.size();
  std::vector<Status> results(n);
  std::vector<int64_t> started(n, 0);
  auto first_error = [&]() -> Status {
    for (const Status& s : results) {
      if (!s.ok()) return s;
    }
    return Status::Ok();
  };
  auto fail = [](Status status) { return status; };  // the caller releases (device_fill.h)
  auto cancelled = [&] { return settings.cancel->load(); };
  std::atomic<int64_t> first_failed{-1};

  ForEachSlotConcurrently(n, [&](size_t i) {
    started[i] = settings.clock->MonotonicMicros();
    results[i] = Acquire(*slots[i]);
  });
  if (Status error = first_error(); !error.ok()) return fail(error);
  if (cancelled()) return fail(FailedPreconditionError("cancelled"));

  size_t gpus = 0;
  for (const auto& slot : slots) gpus += slot->plan.info.kind != DeviceKind::kHost;
  int host_threads = settings.host_threads;
  if (host_threads <= 0) {
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    host_threads = std::max(1, hw - static_cast<int>(gpus));
  }

  ForEachSlotConcurrently(n, [&](size_t i) {
    DeviceSlot& slot = *slots[i];
    RegionSpec plan = settings.session;
    plan.first = slot.plan.first_label;
    plan.count = slot.plan.label_count;
    FillOptions options;
    options.cancel = settings.cancel;
    options.threads = slot.plan.info.kind == DeviceKind::kHost ? host_threads : 0;
    options.progress = [&slot](uint64_t done, uint64_t) { slot.labels_filled.store(done); };
    Status s = slot.memory->Fill(plan, options);
    if (s.ok()) {
      slot.labels_filled.store(plan.count);
    } else if (!settings.cancel->exchange(true)) {
      first_failed.store(static_cast<int64_t>(i));  // failed on its own; stop the other devices
    }
    slot.fill_micros = static_cast<uint64_t>(settings.clock->MonotonicMicros() - started[i]);
    if (s.ok() && settings.on_filled && !cancelled()) settings.on_filled(i);
    if (!s.ok()) s = s.WithContext("device '" + slot.plan.selector + "'");
    results[i] = s;
    LOG(INFO) << "device '" << slot.plan.selector << "': " << (s.ok() ? "filled " : "fill failed after ")
              << slot.labels_filled.load() << " of " << plan.count << " labels in " << slot.fill_micros << " us"
              << (s.ok() ? "" : ": " + s.ToString());
  });
  // The device that failed on its own, not the ones it stopped.
  if (first_failed.load() >= 0) return fail(results[first_failed.load()]);
  if (Status error = first_error(); !error.ok()) return fail(error);
  if (cancelled()) return fail(FailedPreconditionError("cancelled"));
  return Status::Ok();
}

}  // namespace wipeproof
