#include "proto/rpc_status.h"

#include <cassert>
#include <string>

namespace wipeproof::proto {

kj::Exception StatusToException(const Status& status) {
  assert(!status.ok());
  return kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__,
                       kj::str(kStatusExceptionPrefix, status.ToString().c_str()));
}

Status ExceptionToStatus(const kj::Exception& exception) {
  const std::string description = exception.getDescription().cStr();
  const size_t at = description.find(kStatusExceptionPrefix);
  if (at != std::string::npos) {
    const std::string rest = description.substr(at + sizeof(kStatusExceptionPrefix) - 1);
    for (int c = static_cast<int>(StatusCode::kInvalidArgument); c <= static_cast<int>(StatusCode::kInternal); ++c) {
      const auto code = static_cast<StatusCode>(c);
      const std::string name = std::string(StatusCodeName(code)) + ": ";
      if (rest.compare(0, name.size(), name) == 0) return Status(code, rest.substr(name.size()));
    }
  }
  switch (exception.getType()) {
    case kj::Exception::Type::DISCONNECTED:
      return UnavailableError("disconnected: " + description);
    case kj::Exception::Type::OVERLOADED:
      return UnavailableError("overloaded: " + description);
    default:
      return InternalError(description);
  }
}

}  // namespace wipeproof::proto
