// Status and StatusOr<T>: the error type for expected failures across wipeproof (bad input, a device
// that cannot be acquired, a label that does not verify). CHECK is kept for broken invariants and
// exceptions for the Cap'n Proto edge. Modelled on leveldb's status.h and absl::StatusOr.
//
// Thread-safety: values; safe to copy between threads.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace wipeproof {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // malformed input: bad flag, wrong size, out-of-range index
  kNotFound,            // unknown device, node, session
  kAlreadyExists,       // replayed session id
  kFailedPrecondition,  // wrong state: a session already running, memory not acquired
  kResourceExhausted,   // not enough memory, mlock limit
  kPermissionDenied,    // bad signature, key file readable by others
  kDeadlineExceeded,    // expired order, late round
  kDataLoss,            // a label or ledger entry that does not verify
  kUnavailable,         // device or peer not reachable
  kBusy,                // the peer runs another session (an agent's typed refusal of an order)
  kInternal,            // device runtime error
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: seed must be 64 hex digits" or "OK".
  std::string ToString() const;
  // Returns a copy with "context: " put before the message.
  Status WithContext(const std::string& context) const;
  // For code paths that deliberately drop a status (cleanup after an earlier error).
  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgumentError(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExistsError(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status FailedPreconditionError(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status ResourceExhaustedError(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status PermissionDeniedError(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
inline Status DeadlineExceededError(std::string m) { return {StatusCode::kDeadlineExceeded, std::move(m)}; }
inline Status DataLossError(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status BusyError(std::string m) { return {StatusCode::kBusy, std::move(m)}; }
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Either a value or a non-OK status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) { assert(!status.ok()); }  // NOLINT
  StatusOr(Status&& status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT
  StatusOr(const T& value) : value_(value) {}  // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  // REQUIRES: ok().
  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace wipeproof

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define WP_RETURN_IF_ERROR(expr)                         \
  do {                                                   \
    ::wipeproof::Status wp_status_ = (expr);             \
    if (!wp_status_.ok()) return wp_status_;             \
  } while (0)

#define WP_CONCAT_INNER_(a, b) a##b
#define WP_CONCAT_(a, b) WP_CONCAT_INNER_(a, b)
// `WP_ASSIGN_OR_RETURN(auto x, StatusOrExpr());`
#define WP_ASSIGN_OR_RETURN(lhs, expr) WP_ASSIGN_OR_RETURN_IMPL_(WP_CONCAT_(wp_so_, __LINE__), lhs, expr)
#define WP_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
