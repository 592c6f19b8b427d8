#include "prover/agent/device_match.h"

#include <algorithm>
#include <set>

#include "proto/crypto.h"
#include "proto/label_wire.h"

namespace wipeproof {

uint64_t UsableBytes(const DeviceInfo& info, const HostLimits& host) {
  if (info.kind != DeviceKind::kHost) return info.available_bytes;
  uint64_t usable = info.available_bytes > host.reserve_bytes ? info.available_bytes - host.reserve_bytes : 0;
  if (host.budget_bytes > 0) usable = std::min(usable, host.budget_bytes);
  return usable;
}

std::string ShortOfCapacity(const std::string& selector) { return "device '" + selector + "' short of capacity"; }

namespace {

std::string WhyLimited(const DeviceInfo& info, const HostLimits& host) {
  if (info.kind != DeviceKind::kHost) {
    return "available " + std::to_string(info.available_bytes) + " of " + std::to_string(info.total_bytes) +
           " bytes, held by other processes " + std::to_string(info.held_by_others_bytes) + " bytes";
  }
  std::string why = "MemAvailable " + std::to_string(info.available_bytes) + " bytes less the host reserve of " +
                    std::to_string(host.reserve_bytes) + " bytes";
  if (host.budget_bytes > 0) why += ", host budget " + std::to_string(host.budget_bytes) + " bytes";
  return why;
}

}  // namespace

StatusOr<std::vector<MatchedDevice>> MatchOrderDevices(proto::WipeOrder::Reader order, const BackendSet& backends,
                                                       const HostLimits& host) {
  const std::vector<DeviceInfo> devices = backends.Devices();
  std::string known;
  for (const auto& d : devices) known += (known.empty() ? "" : ", ") + d.id;
  if (known.empty()) known = "none";

  std::vector<MatchedDevice> planned;
  std::set<std::string> named;
  auto plan = order.getDevices();
  for (uint32_t i = 0; i < plan.size(); ++i) {
    proto::DevicePlan::Reader d = plan[i];
    const std::string selector(d.getSelector().cStr(), d.getSelector().size());
    const std::string where = "devices[" + std::to_string(i) + "]";
    if (!named.insert(selector).second) {
      return InvalidArgumentError(where + ": device '" + selector + "' is named twice in the plan");
    }
    auto it = std::find_if(devices.begin(), devices.end(), [&](const DeviceInfo& info) { return info.id == selector; });
    if (it == devices.end()) {
      return NotFoundError(where + ": this node has no device '" + selector + "'; its devices: " + known);
    }
    MatchedDevice p;
    p.plan_index = i;
    p.selector = selector;
    p.backend = backends.FindByDeviceId(selector);
    if (p.backend == nullptr) return NotFoundError(where + ": device '" + selector + "' disappeared");
    p.info = *it;
    p.first_label = d.getFirstLabel();
    p.label_count = d.getLabelCount();
    if (p.label_count > UINT64_MAX / proto::kLabelBytes) {
      return InvalidArgumentError(where + ": labelCount " + std::to_string(p.label_count) + " overflows");
    }
    p.label_bytes = p.label_count * proto::kLabelBytes;
    planned.push_back(std::move(p));
  }
  for (const auto& d : devices) {
    if (named.count(d.id) == 0) {
      return InvalidArgumentError("plan omits device '" + d.id + "' (" + d.name + ") of this node: every device " +
                                  "of the node is wiped in the same session");
    }
  }
  for (const MatchedDevice& p : planned) {
    const uint64_t usable = UsableBytes(p.info, host);
    if (p.label_bytes > usable) {
      return ResourceExhaustedError(ShortOfCapacity(p.selector) + ": the plan needs " + std::to_string(p.label_bytes) +
                                    " bytes (" + std::to_string(p.label_count) +
                                    " labels), this agent can hold at most " + std::to_string(usable) + " bytes (" +
                                    WhyLimited(p.info, host) + ")");
    }
  }
  return planned;
}

}  // namespace wipeproof
