#include "proto/validate.h"

#include <capnp/dynamic.h>
#include <kj/exception.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "proto/crypto.h"
#include "proto/label_wire.h"

namespace wipeproof::proto {

namespace {

constexpr uint32_t kMaxDevices = 65536;  // DeviceChallenge.deviceIndex is UInt16
constexpr uint64_t kMaxOccupancyRoundLabels = uint64_t{1} << 17;  // = challenger kMaxLabelsPerRound

Status CheckSize(const char* field, capnp::Data::Reader data, size_t want) {
  if (data.size() == want) return Status::Ok();
  return InvalidArgumentError(std::string(field) + ": " + std::to_string(data.size()) + " bytes, want " +
                              std::to_string(want));
}

// Digests that may be absent (no fill report yet, no session): empty or exactly 32 bytes.
Status CheckOptionalSize(const char* field, capnp::Data::Reader data, size_t want) {
  if (data.size() == 0) return Status::Ok();
  return CheckSize(field, data, want);
}

void WalkStruct(capnp::DynamicStruct::Reader s);

void WalkValue(capnp::DynamicValue::Reader value) {
  switch (value.getType()) {
    case capnp::DynamicValue::STRUCT:
      WalkStruct(value.as<capnp::DynamicStruct>());
      break;
    case capnp::DynamicValue::LIST: {
      capnp::DynamicList::Reader list = value.as<capnp::DynamicList>();
      switch (list.getSchema().whichElementType()) {
        case capnp::schema::Type::TEXT:
        case capnp::schema::Type::DATA:
        case capnp::schema::Type::LIST:
        case capnp::schema::Type::STRUCT:
          for (capnp::DynamicValue::Reader element : list) WalkValue(element);
          break;
        default:
          break;  // primitives and enums: the list pointer itself was checked by get()
      }
      break;
    }
    default:
      break;  // get() already read and bounds-checked text, data and primitives
  }
}

void WalkStruct(capnp::DynamicStruct::Reader s) {
  for (capnp::StructSchema::Field field : s.getSchema().getNonUnionFields()) {
    if (field.getType().isInterface() || field.getType().isAnyPointer()) continue;
    WalkValue(s.get(field));
  }
  KJ_IF_MAYBE (field, s.which()) {
    WalkValue(s.get(*field));
  }
}

}  // namespace

Status WalkMessage(capnp::AnyStruct::Reader root, capnp::StructSchema schema) {
  try {
    WalkStruct(root.as<capnp::DynamicStruct>(schema));
  } catch (const kj::Exception& e) {
    return InvalidArgumentError(std::string("malformed: ") + e.getDescription().cStr());
  }
  return Status::Ok();
}

Status ValidateShape(WipeOrder::Reader order) {
  if (order.getProtocolVersion() != PROTOCOL_VERSION) {
    return InvalidArgumentError("protocolVersion " + std::to_string(order.getProtocolVersion()) + ", want " +
                                std::to_string(PROTOCOL_VERSION));
  }
  WP_RETURN_IF_ERROR(CheckSize("sessionId", order.getSessionId(), kSessionIdBytes));
  WP_RETURN_IF_ERROR(CheckSize("nodeKeyId", order.getNodeKeyId(), kKeyIdBytes));
  WP_RETURN_IF_ERROR(CheckSize("seed", order.getSeed(), kSessionSeedBytes));
  if (order.getExpiresAtUnixUs() <= order.getIssuedAtUnixUs()) {
    return InvalidArgumentError("expiresAtUnixUs is not after issuedAtUnixUs");
  }
  const bool whole_chunks = order.getFormat() == LabelFormat::POSEDB_BLAKE3_N192;
  if (!whole_chunks && order.getFormat() != LabelFormat::POSEDB_BLAKE3_C1) {
    return InvalidArgumentError("format " + std::to_string(static_cast<int>(order.getFormat())) + " is unknown");
  }
  const uint64_t m = order.getChunkLabels();
  if (!ChunkLabelsInRange(m)) {
    return InvalidArgumentError("chunkLabels " + std::to_string(m) + " is outside [1, 2^20]");
  }
  WP_RETURN_IF_ERROR(CheckSize("challengerKeyId", order.getChallengerKeyId(), kKeyIdBytes));
  if (order.getRounds() != 0) {
    return InvalidArgumentError("rounds is " + std::to_string(order.getRounds()) +
                                ": a v2 order never discloses the number of rounds (0)");
  }
  if (order.getRoundDeadlineUs() == 0) return InvalidArgumentError("roundDeadlineUs must be > 0");
  if (order.getFillDeadlineUs() == 0) return InvalidArgumentError("fillDeadlineUs must be > 0");
  if (order.getOccupancyWindowUs() == 0 && (order.getOccupancyMeanGapUs() != 0 || order.getOccupancyShortfallBytes() != 0)) {
    return InvalidArgumentError("occupancyMeanGapUs or occupancyShortfallBytes without an occupancyWindowUs");
  }
  if (order.getOccupancyWindowUs() > kMaxOccupancyWindowUs) {
    return InvalidArgumentError("occupancyWindowUs " + std::to_string(order.getOccupancyWindowUs()) +
                                " is above the most one order may ask, " + std::to_string(kMaxOccupancyWindowUs) +
                                " (31 days)");
  }
  if (order.getOccupancyWindowUs() != 0 &&
      (order.getOccupancyMeanGapUs() == 0 || order.getOccupancyMeanGapUs() > order.getOccupancyWindowUs())) {
    return InvalidArgumentError("occupancyMeanGapUs " + std::to_string(order.getOccupancyMeanGapUs()) +
                                " is not in [1, occupancyWindowUs]");
  }
  auto devices = order.getDevices();
  if (devices.size() == 0) return InvalidArgumentError("devices: empty plan");
  if (devices.size() > kMaxDevices) return InvalidArgumentError("devices: more than 65536 (deviceIndex is UInt16)");

  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [first, last] labels
  for (uint32_t i = 0; i < devices.size(); ++i) {
    DevicePlan::Reader d = devices[i];
    const std::string where = "devices[" + std::to_string(i) + "]";
    if (d.getSelector().size() == 0) return InvalidArgumentError(where + ": empty selector");
    if (d.getLabelCount() == 0) return InvalidArgumentError(where + ": labelCount is 0");
    if (d.getLabelsPerRound() == 0) return InvalidArgumentError(where + ": labelsPerRound is 0");
    if (d.getFillDeadlineUs() == 0 || d.getFillDeadlineUs() > order.getFillDeadlineUs()) {
      return InvalidArgumentError(where + ": fillDeadlineUs " + std::to_string(d.getFillDeadlineUs()) +
                                  " is not in [1, the order's fillDeadlineUs " +
                                  std::to_string(order.getFillDeadlineUs()) + "]");
    }
    if (d.getFirstLabel() > UINT64_MAX - d.getLabelCount()) {
      return InvalidArgumentError(where + ": label range overflows");
    }
    // The label engine's index space (label-spec.md): refused here, before the agent holds any
    // memory for the order, not when its fill starts.
    if (d.getFirstLabel() + d.getLabelCount() > kLabelIndexLimit) {
      return InvalidArgumentError(where + ": label range [" + std::to_string(d.getFirstLabel()) + ", +" +
                                  std::to_string(d.getLabelCount()) + ") exceeds the index space (2^62)");
    }
    // Each round challenges labelsPerRound distinct chunks of the device's range.
    const uint64_t chunks = (d.getFirstLabel() + d.getLabelCount() - 1) / m - d.getFirstLabel() / m + 1;
    if (d.getLabelsPerRound() > chunks) {
      return InvalidArgumentError(where + ": labelsPerRound " + std::to_string(d.getLabelsPerRound()) +
                                  " exceeds the " + std::to_string(chunks) + " chunks of its range");
    }
    if (whole_chunks && (d.getFirstLabel() % m != 0 || d.getLabelCount() % m != 0)) {
      return InvalidArgumentError(where + ": posedbBlake3N192 plans must cover whole chunks");
    }
    // An occupancy round asks occupancyLabels distinct chunks of every device, a shape no proof
    // round has (the audits tell the rounds apart by it).
    const uint32_t occupancy = d.getOccupancyLabels();
    if (order.getOccupancyWindowUs() == 0 && occupancy != 0) {
      return InvalidArgumentError(where + ": occupancyLabels " + std::to_string(occupancy) +
                                  " without an occupancyWindowUs");
    }
    if (order.getOccupancyWindowUs() != 0 &&
        (occupancy == 0 || occupancy > chunks || occupancy == d.getLabelsPerRound())) {
      return InvalidArgumentError(where + ": occupancyLabels " + std::to_string(occupancy) + " is not in [1, the " +
                                  std::to_string(chunks) + " chunks of its range] or equals labelsPerRound");
    }
    ranges.emplace_back(d.getFirstLabel(), d.getFirstLabel() + d.getLabelCount() - 1);
  }
  if (order.getOccupancyWindowUs() != 0) {
    // An occupancy round within the labels one round may ask (2^17, as a proof round).
    uint64_t occupancy_labels = 0;
    for (auto d : devices) occupancy_labels += d.getOccupancyLabels();
    if (occupancy_labels > kMaxOccupancyRoundLabels) {
      return InvalidArgumentError("occupancyLabels: " + std::to_string(occupancy_labels) + " per round, above " +
                                  std::to_string(kMaxOccupancyRoundLabels));
    }
    // b below the planned bytes: a shortfall of everything is not a statement.
    uint64_t planned_labels = 0;
    for (const auto& [first, last] : ranges) {
      const uint64_t count = last - first + 1;
      planned_labels = planned_labels > UINT64_MAX - count ? UINT64_MAX : planned_labels + count;
    }
    if (order.getOccupancyShortfallBytes() / kLabelBytes >= planned_labels) {
      return InvalidArgumentError("occupancyShortfallBytes " + std::to_string(order.getOccupancyShortfallBytes()) +
                                  " is not below the planned bytes");
    }
  }
  // Ranges are disjoint and no two devices share a chunk (label-spec.md §2).
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first / m <= ranges[i - 1].second / m) {
      return InvalidArgumentError("devices: label ranges overlap or share a chunk at label " +
                                  std::to_string(ranges[i].first));
    }
  }
  return Status::Ok();
}

Status ValidateShape(FillReport::Reader report) {
  WP_RETURN_IF_ERROR(CheckSize("sessionId", report.getSessionId(), kSessionIdBytes));
  WP_RETURN_IF_ERROR(CheckSize("orderDigest", report.getOrderDigest(), kDigestBytes));
  WP_RETURN_IF_ERROR(CheckSize("nodeKeyId", report.getNodeKeyId(), kKeyIdBytes));
  if (report.getDevices().size() == 0) return InvalidArgumentError("devices: empty");
  return Status::Ok();
}

Status ValidateShape(DeviceFillNotice::Reader notice) {
  WP_RETURN_IF_ERROR(CheckSize("sessionId", notice.getSessionId(), kSessionIdBytes));
  WP_RETURN_IF_ERROR(CheckSize("orderDigest", notice.getOrderDigest(), kDigestBytes));
  WP_RETURN_IF_ERROR(CheckSize("nodeKeyId", notice.getNodeKeyId(), kKeyIdBytes));
  return Status::Ok();
}

Status ValidateShape(Delegation::Reader delegation) {
  WP_RETURN_IF_ERROR(CheckSize("challengerPublicKey", delegation.getChallengerPublicKey(), kPublicKeyBytes));
  if (delegation.getNotAfterUnixUs() <= delegation.getNotBeforeUnixUs()) {
    return InvalidArgumentError("notAfterUnixUs is not after notBeforeUnixUs");
  }
  WP_RETURN_IF_ERROR(CheckOptionalSize("inventoryDigest", delegation.getInventoryDigest(), kDigestBytes));
  const auto profiles = delegation.getProfiles();
  for (unsigned i = 0; i < profiles.size(); ++i) {
    const std::string where = "profiles[" + std::to_string(i) + "]";
    // A listed profile is one the authority signed: it names that signature.
    Status key = CheckSize("authorityKeyId", profiles[i].getAuthorityKeyId(), kKeyIdBytes);
    if (key.ok()) key = CheckSize("documentDigest", profiles[i].getDocumentDigest(), kDigestBytes);
    WP_RETURN_IF_ERROR(key.WithContext(where));
  }
  if (profiles.size() == 0 && !delegation.getAllowUnsignedProfiles()) {
    return InvalidArgumentError("lists no profile and allows no unsigned one: it delegates nothing");
  }
  return Status::Ok();
}

Status ValidateShape(WaveVerdict::Reader verdict) {
  const auto ids = verdict.getSessionIds();
  if (ids.size() == 0) return InvalidArgumentError("sessionIds: empty");
  if (verdict.getNodeNames().size() != ids.size() || verdict.getVerdictDigests().size() != ids.size()) {
    return InvalidArgumentError("sessionIds, nodeNames and verdictDigests differ in length");
  }
  for (unsigned i = 0; i < ids.size(); ++i) {
    const std::string id_field = "sessionIds[" + std::to_string(i) + "]";
    const std::string digest_field = "verdictDigests[" + std::to_string(i) + "]";
    WP_RETURN_IF_ERROR(CheckSize(id_field.c_str(), ids[i], kSessionIdBytes));
    WP_RETURN_IF_ERROR(CheckSize(digest_field.c_str(), verdict.getVerdictDigests()[i], kDigestBytes));
  }
  return Status::Ok();
}

Status ValidateShape(ChallengeRound::Reader round) {
  WP_RETURN_IF_ERROR(CheckSize("sessionId", round.getSessionId(), kSessionIdBytes));
  if (round.getDevices().size() == 0) return InvalidArgumentError("devices: empty");
  return Status::Ok();
}

Status ValidateShape(RoundAnswer::Reader answer) {
  WP_RETURN_IF_ERROR(CheckSize("sessionId", answer.getSessionId(), kSessionIdBytes));
  if (answer.getLabels().size() % kLabelBytes != 0) {
    return InvalidArgumentError("labels: " + std::to_string(answer.getLabels().size()) +
                                " bytes is not a whole number of 32-byte labels");
  }
  return Status::Ok();
}

Status ValidateShape(TranscriptDigest::Reader transcript) {
  WP_RETURN_IF_ERROR(CheckSize("sessionId", transcript.getSessionId(), kSessionIdBytes));
  WP_RETURN_IF_ERROR(CheckSize("digest", transcript.getDigest(), kDigestBytes));
  WP_RETURN_IF_ERROR(CheckSize("verdictDigest", transcript.getVerdictDigest(), kDigestBytes));
  WP_RETURN_IF_ERROR(CheckSize("nodeKeyId", transcript.getNodeKeyId(), kKeyIdBytes));
  return Status::Ok();
}

Status ValidateShape(Verdict::Reader verdict) {
  WP_RETURN_IF_ERROR(CheckSize("sessionId", verdict.getSessionId(), kSessionIdBytes));
  WP_RETURN_IF_ERROR(CheckSize("orderDigest", verdict.getOrderDigest(), kDigestBytes));
  WP_RETURN_IF_ERROR(CheckOptionalSize("reportDigest", verdict.getReportDigest(), kDigestBytes));
  if (verdict.getPass() != (verdict.getFailure().getReason() == FailureReason::NONE)) {
    return InvalidArgumentError("pass and failure.reason disagree");
  }
  return Status::Ok();
}

Status ValidateShape(Receipt::Reader receipt) {
  WP_RETURN_IF_ERROR(CheckSize("sessionId", receipt.getSessionId(), kSessionIdBytes));
  WP_RETURN_IF_ERROR(CheckSize("orderDigest", receipt.getOrderDigest(), kDigestBytes));
  WP_RETURN_IF_ERROR(CheckOptionalSize("reportDigest", receipt.getReportDigest(), kDigestBytes));
  WP_RETURN_IF_ERROR(CheckSize("verdictDigest", receipt.getVerdictDigest(), kDigestBytes));
  return Status::Ok();
}

Status ValidateShape(LedgerEntry::Reader entry) {
  WP_RETURN_IF_ERROR(CheckSize("prevEntryDigest", entry.getPrevEntryDigest(), kDigestBytes));
  WP_RETURN_IF_ERROR(CheckOptionalSize("sessionId", entry.getSessionId(), kSessionIdBytes));
  if (entry.getKind() == LedgerRecordKind::UNKNOWN) return InvalidArgumentError("kind: unknown");
  return Status::Ok();
}

Status ValidateShape(RoundLog::Reader log) { return CheckSize("sessionId", log.getSessionId(), kSessionIdBytes); }

}  // namespace wipeproof::proto
