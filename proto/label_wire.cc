#include "proto/label_wire.h"

#include <algorithm>
#include <cstring>

namespace wipeproof::proto {

::wipeproof::LabelFormat FormatFromWire(LabelFormat format) {
  return format == LabelFormat::POSEDB_BLAKE3_N192 ? ::wipeproof::LabelFormat::k192 : ::wipeproof::LabelFormat::kC1;
}

LabelFormat FormatToWire(::wipeproof::LabelFormat format) {
  return format == ::wipeproof::LabelFormat::k192 ? LabelFormat::POSEDB_BLAKE3_N192 : LabelFormat::POSEDB_BLAKE3_C1;
}

RegionSpec SessionRegion(WipeOrder::Reader order) {
  RegionSpec region;
  region.format = FormatFromWire(order.getFormat());
  auto seed = order.getSeed();
  std::memcpy(region.seed, seed.begin(), std::min<size_t>(seed.size(), kSessionSeedBytes));
  region.chunk_labels = order.getChunkLabels();
  return region;
}

RegionSpec DeviceRegion(WipeOrder::Reader order, DevicePlan::Reader device) {
  RegionSpec region = SessionRegion(order);
  region.first = device.getFirstLabel();
  region.count = device.getLabelCount();
  return region;
}

}  // namespace wipeproof::proto
