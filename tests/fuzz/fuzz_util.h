// Shared pieces of the libFuzzer targets (docs/fuzzing.md): fixed test keys, and the two ways a
// fuzz input reaches the production parsers:
//   - as received bytes (a canonical message, an envelope, a JSON document): passed as they are;
//   - as an RPC parameter or result: the bytes are one Cap'n Proto message in stream framing
//     (segment table, then segments), read with proto::RpcReaderOptions() exactly as
//     capnp::TwoPartyVatNetwork reads what arrives on the agent's or challenger's connection.
// Where production code verifies a signature first, a target also signs the fuzz bytes with the
// fixed key the "production" side trusts, so the parse after the signature check is fuzzed too.
//
// Thread-safety: FuzzKey is thread-safe; the rest are pure.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/signing.h"

namespace wipeproof::fuzz {

// Seeds of the fixed keys (32 bytes of this value each). The agent targets use
// tests/prover/agent_test_util.h's keys instead, which is what its AgentCore is configured with.
inline constexpr uint8_t kAuthoritySeed = 0x11;
inline constexpr uint8_t kChallengerSeed = 0x22;
inline constexpr uint8_t kNodeSeed = 0x33;

// The key pair whose 32-byte seed is `seed_byte` repeated (computed once per value).
const proto::KeyPair& FuzzKey(uint8_t seed_byte);

// The fuzz input as a byte vector / string.
inline proto::Bytes BytesOf(const uint8_t* data, size_t size) { return proto::Bytes(data, data + size); }
inline std::string TextOf(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Calls fn(reader) with the root struct T of the RPC-framed message in `data` (bytes past the last
// whole word are dropped), read under proto::RpcReaderOptions(). Input capnp's RPC layer would
// refuse before the method runs (bad segment table, root pointer of the wrong type) returns
// without calling fn: that is capnp's job, not ours. Exceptions fn itself lets escape are bugs in
// the code under test and reach libFuzzer as crashes.
template <typename T, typename Fn>
void WithRpcRoot(const uint8_t* data, size_t size, Fn&& fn) {
  const size_t words = size / sizeof(capnp::word);
  if (words == 0) return;
  kj::Array<capnp::word> aligned = kj::heapArray<capnp::word>(words);
  std::memcpy(aligned.begin(), data, words * sizeof(capnp::word));
  typename T::Reader root;
  std::optional<capnp::FlatArrayMessageReader> reader;
  try {
    root = reader.emplace(aligned.asPtr(), proto::RpcReaderOptions()).template getRoot<T>();
  } catch (const kj::Exception&) {
    return;
  }
  fn(root);
}

// An envelope of `kind` around `payload`, signed with `key` as the real signer would. False when
// SignEnvelope refuses the payload (empty, not whole 8-byte words, over the kind's limit): the
// verifier's own checks of those cases are fuzzed by the unsigned variants.
bool SignFuzzPayload(proto::MessageKind kind, const uint8_t* data, size_t size, const proto::KeyPair& key,
                     proto::SignedEnvelope* out);

}  // namespace wipeproof::fuzz
