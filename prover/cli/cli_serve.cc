// `wipeproof-prover serve`: runs the prover agent (prover/agent) on a TCP address until SIGINT or
// SIGTERM. Output contract: once listening, one line on stdout,
//   listening on HOST:PORT
// with the port actually bound (so --listen=127.0.0.1:0 can be used by scripts and tests); phases,
// timings and refusals go to stderr through glog (INFO and up unless --minloglevel says otherwise).
// Every connection is TLS 1.3 (prover/agent/agent_rpc_server.h): the agent presents the certificate
// of its node key (rebuilt from --node_key; `keygen` wrote the same bytes to PREFIX.crt for the
// inventory) and accepts only a client holding the key of --challenger_cert, which must be the
// certificate of --challenger_key (checked byte for byte at start-up).
// With --metrics_listen=HOST:PORT it also serves Prometheus metrics (prover/agent/agent_metrics.h,
// docs/metrics.md) on http://HOST:PORT/metrics and /healthz, on the same event loop, and prints a
// second line once that port is bound:
//   metrics on HOST:PORT
// Exit status: 0 after a signal (any session ended and its memory freed), 1 when it cannot start
// (key file missing or readable by others, a challenger certificate that is not the challenger
// key's, nothing to listen on (either address), no usable device), 2 for a bad command line.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <kj/async-io.h>
#include <kj/async-unix.h>
#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/metrics_http_server.h"
#include "common/metrics_registry.h"
#include "common/numbers.h"
#include "common/progress_line.h"
#include "proto/key_files.h"
#include "proto/tls_certificate.h"
#include "proto/tls_channel.h"
#include "prover/agent/agent_core.h"
#include "prover/agent/agent_metrics.h"
#include "prover/agent/agent_rpc_server.h"
#include "prover/agent/round_polling.h"
#include "prover/backends/backend_factory.h"
#include "prover/backends/cpu/host_budget.h"
#include "prover/cli/cli.h"
#include "prover/cli/cli_flags.h"
#include "prover/cli/serve_flags.h"

DEFINE_string(listen, "127.0.0.1:7300", "serve: HOST:PORT to listen on; port 0 picks a free one (printed)");
DEFINE_string(authority_key, "",
              "serve: authority public key file (PREFIX.pub); orders must verify under it (required)");
DEFINE_string(challenger_key, "",
              "serve: challenger public key file (PREFIX.pub); verdicts must verify under it (required)");
DEFINE_string(challenger_cert, "",
              "serve: the challenger's certificate (PREFIX.crt, written by `wipeproof-challenger keygen`); the only "
              "client the agent accepts (TLS 1.3, mutual); must carry the --challenger_key key (required)");
DEFINE_string(node_key, "",
              "serve: this node's secret key file (PREFIX.key, mode 0600); signs reports; required. "
              "bench --what=all: signs the node profile");
DEFINE_string(node_name, "", "serve: this node's name in the challenger's inventory; orders must name it (required)");
DEFINE_uint64(host_budget_bytes, 0,
              "serve: bytes of host memory the agent may fill; 0 = no budget (MemAvailable "
              "less --host_reserve_bytes)");
DEFINE_double(host_budget_gib, 0, "serve: the host budget in GiB (2^30 bytes), instead of --host_budget_bytes");
DEFINE_uint64(host_reserve_bytes, wipeproof::kDefaultHostReserveBytes,
              "serve: bytes of MemAvailable never filled (left to the OS); default 256 MiB");
DEFINE_string(devices, "host,cuda,hip", "serve: backends to use, comma-separated from host, cuda, hip");
DEFINE_int64(clock_skew_us, wipeproof::kDefaultClockSkewUs,
             "serve: microseconds the challenger's clock may differ from ours when checking an order's issue and "
             "expiry times; default 300000000 (5 min)");
DEFINE_uint64(session_timeout_us, wipeproof::kDefaultSessionTimeoutUs,
              "serve: microseconds after an order arrives when an unfinished session is ended and its memory "
              "freed, when the order gives none; also the cap on an order's; default 3600000000 (1 h)");
DEFINE_int64(max_order_lifetime_us, wipeproof::kDefaultMaxOrderLifetimeUs,
             "serve: orders valid longer than this (expiry - issue, microseconds) are refused; default 86400000000 "
             "(24 h)");
DEFINE_uint32(max_connections, static_cast<uint32_t>(wipeproof::kDefaultMaxConnections),
              "serve: connections open at once (a session's round channel is one more, holding its slot while the "
              "session runs); one more evicts the oldest connection that owns no session and runs no call (closed "
              "at once if none); keep the open-file limit (ulimit -n) well above it; default 64");
DEFINE_int64(idle_timeout_s, wipeproof::kDefaultIdleTimeoutUs / 1'000'000,
             "serve: seconds after which a connection that owns no session and makes no call is closed (a "
             "connection that owns a session is left to the session timeout); 0 = never; default 60");
DEFINE_uint32(max_handshakes, static_cast<uint32_t>(wipeproof::kDefaultMaxHandshakes),
              "serve: TLS handshakes (connections not yet authenticated) at once; one more closes the oldest; they "
              "never count against --max_connections; default 16");
DEFINE_string(metrics_listen, "",
              "serve: HOST:PORT to serve Prometheus metrics on (GET /metrics, /healthz; plain HTTP, no "
              "authentication: bind an address only the scraper reaches, e.g. 127.0.0.1:9401 with a local "
              "scraper); port 0 picks a free one (printed); "
              "empty (default) = no metrics");
DEFINE_double(handshake_timeout_s, wipeproof::kDefaultHandshakeTimeoutUs / 1e6,
              "serve: seconds a connection may take to complete its TLS handshake before it is closed; default 10");
DEFINE_string(round_polling, "auto",
              "while a session answers rounds, the agent polls the network without sleeping (one core at 100%, "
              "bounded per session) so a round is read the moment it arrives: on, off, or auto (default: on with "
              "at least 8 hardware threads; with fewer, the polling thread and the others preempt each other and "
              "the slowest rounds get slower: prover/agent/round_polling.h); the round benchmark's agent too");
DEFINE_string(transcript_thread, "auto",
              "each session's rounds are hashed into its transcript on a thread of their own, so the next round "
              "never waits for the hash (a second core busy while rounds run): on, off (hash on the answering "
              "thread after each answer), or auto (default: on with at least 8 hardware threads; with fewer, the "
              "extra thread slows rounds over TCP: prover/agent/session_transcript.h); the round benchmark's agent "
              "too");
DEFINE_double(round_polling_max_s, 60,
              "serve: most seconds of round polling per session phase (its holding rounds, then its proof rounds), "
              "in [0.001, 3600]; then the agent sleeps between that phase's rounds; default 60");

namespace wipeproof {
namespace {

constexpr char kSub[] = "serve";

Status RequireFlag(const std::string& value, const char* name, const char* what) {
  if (!value.empty()) return Status::Ok();
  return InvalidArgumentError(std::string("--") + name + " is required: " + what);
}

}  // namespace

const std::vector<std::string>& ServeFlagNames() {
  static const std::vector<std::string> kNames = {"listen",
                                                  "authority_key",
                                                  "challenger_key",
                                                  "challenger_cert",
                                                  "node_key",
                                                  "node_name",
                                                  "host_budget_bytes",
                                                  "host_budget_gib",
                                                  "host_reserve_bytes",
                                                  "devices",
                                                  "clock_skew_us",
                                                  "session_timeout_us",
                                                  "max_order_lifetime_us",
                                                  "max_connections",
                                                  "idle_timeout_s",
                                                  "max_handshakes",
                                                  "handshake_timeout_s",
                                                  "round_polling",
                                                  "round_polling_max_s",
                                                  "transcript_thread",
                                                  "threads",
                                                  "simd",
                                                  "metrics_listen",
                                                  "progress"};
  return kNames;
}

Status DevicesFromFlag(BackendConfig* config) {
  config->enable_host = config->enable_cuda = config->enable_hip = false;
  std::string list = FLAGS_devices;
  size_t start = 0;
  int named = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    DeviceKind kind;
    if (DeviceKindFromName(item, &kind)) {
      config->Enable(kind);
    } else if (!item.empty()) {
      return InvalidArgumentError("--devices: unknown backend '" + item + "' (use host, cuda, hip)");
    }
    named += !item.empty();
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (named == 0) return InvalidArgumentError("--devices: name at least one of host, cuda, hip");
  return Status::Ok();
}

StatusOr<uint64_t> HostBudgetFromFlags() {
  const bool bytes_set = !gflags::GetCommandLineFlagInfoOrDie("host_budget_bytes").is_default;
  const bool gib_set = !gflags::GetCommandLineFlagInfoOrDie("host_budget_gib").is_default;
  if (bytes_set && gib_set) return InvalidArgumentError("give --host_budget_bytes or --host_budget_gib, not both");
  if (gib_set) {
    if (!(FLAGS_host_budget_gib >= 0) || FLAGS_host_budget_gib > 1e9) {
      return InvalidArgumentError("--host_budget_gib must be >= 0");
    }
    return static_cast<uint64_t>(FLAGS_host_budget_gib * static_cast<double>(uint64_t{1} << 30));
  }
  return static_cast<uint64_t>(FLAGS_host_budget_bytes);
}

std::string HostBudgetFlagText() {
  const bool gib_set = !gflags::GetCommandLineFlagInfoOrDie("host_budget_gib").is_default;
  char gib_text[32];
  std::snprintf(gib_text, sizeof gib_text, "%.10g", FLAGS_host_budget_gib);  // as typed, not 0.10000000000000001
  return gib_set ? std::string("--host_budget_gib=") + gib_text
                 : "--host_budget_bytes=" + std::to_string(FLAGS_host_budget_bytes);
}

Status CheckListenFlags() {
  WP_RETURN_IF_ERROR(CheckHostPortFlag(FLAGS_listen, "--listen", "127.0.0.1:7300"));
  if (!FLAGS_metrics_listen.empty()) WP_RETURN_IF_ERROR(CheckHostPortFlag(FLAGS_metrics_listen, "--metrics_listen"));
  return Status::Ok();
}

int RunServe() {
  // glog INFO carries the phases and timings of every session; show them unless told otherwise.
  if (gflags::GetCommandLineFlagInfoOrDie("minloglevel").is_default) FLAGS_minloglevel = google::GLOG_INFO;

  for (const Status& s : {RequireFlag(FLAGS_node_name, "node_name", "this node's name in the inventory"),
                          RequireFlag(FLAGS_authority_key, "authority_key", "the authority's public key file"),
                          RequireFlag(FLAGS_challenger_key, "challenger_key", "the challenger's public key file"),
                          RequireFlag(FLAGS_challenger_cert, "challenger_cert",
                                      "the challenger's certificate file (PREFIX.crt beside its .pub)"),
                          RequireFlag(FLAGS_node_key, "node_key", "this node's secret key file (keygen writes one)")}) {
    if (!s.ok()) return UsageError(kSub, s.message());
  }
  if (Status s = CheckListenFlags(); !s.ok()) return UsageError(kSub, s.message());
  const std::string listen_host = FLAGS_listen.substr(0, FLAGS_listen.rfind(':'));
  if (FLAGS_clock_skew_us < 0) return UsageError(kSub, "--clock_skew_us must be >= 0");
  if (FLAGS_session_timeout_us == 0) return UsageError(kSub, "--session_timeout_us must be > 0");
  if (FLAGS_max_order_lifetime_us <= 0) return UsageError(kSub, "--max_order_lifetime_us must be > 0");
  if (FLAGS_max_connections == 0) return UsageError(kSub, "--max_connections must be > 0");
  if (FLAGS_idle_timeout_s < 0 || FLAGS_idle_timeout_s > INT64_MAX / 1'000'000) {
    return UsageError(kSub, "--idle_timeout_s must be >= 0 (0: never)");
  }
  if (FLAGS_max_handshakes == 0) return UsageError(kSub, "--max_handshakes must be > 0");
  SpareCoreMode polling_mode;
  if (!SpareCoreModeFromName(FLAGS_round_polling, &polling_mode)) {
    return UsageError(kSub, "--round_polling must be auto, on or off, got '" + FLAGS_round_polling + "'");
  }
  SpareCoreMode transcript_mode;
  if (!SpareCoreModeFromName(FLAGS_transcript_thread, &transcript_mode)) {
    return UsageError(kSub, "--transcript_thread must be auto, on or off, got '" + FLAGS_transcript_thread + "'");
  }
  if (!(FLAGS_round_polling_max_s >= 0.001) || FLAGS_round_polling_max_s > 3600) {
    return UsageError(kSub, "--round_polling_max_s must be in [0.001, 3600]");
  }
  if (!(FLAGS_handshake_timeout_s > 0) || FLAGS_handshake_timeout_s > 3600) {
    return UsageError(kSub, "--handshake_timeout_s must be > 0 and <= 3600");
  }
  BackendConfig backend_config;
  if (Status s = DevicesFromFlag(&backend_config); !s.ok()) return UsageError(kSub, s.message());
  auto budget = HostBudgetFromFlags();
  if (!budget.ok()) return UsageError(kSub, budget.status().message());
  auto threads = ThreadsFromFlag();
  if (!threads.ok()) return UsageError(kSub, threads.status().message());
  auto simd = SimdFromFlag();
  if (!simd.ok()) return UsageError(kSub, simd.status().message());
  auto progress = ParseProgressMode(FLAGS_progress);
  if (!progress.ok()) return UsageError(kSub, progress.status().message());

  AgentConfig config;
  config.fill_progress = *progress;
  auto authority = proto::ReadPublicKeyFile(FLAGS_authority_key);
  if (!authority.ok()) return Failure(kSub, authority.status().WithContext("--authority_key"));
  auto challenger = proto::ReadPublicKeyFile(FLAGS_challenger_key);
  if (!challenger.ok()) return Failure(kSub, challenger.status().WithContext("--challenger_key"));
  auto node_key = proto::ReadSecretKeyFile(FLAGS_node_key);
  if (!node_key.ok()) return Failure(kSub, node_key.status().WithContext("--node_key"));
  // The pinned challenger certificate must be the challenger key's: the TLS handshake then proves
  // the client holds the key whose verdicts this agent accepts and whose orders it takes.
  auto challenger_cert = proto::ReadPinnedCertificate(FLAGS_challenger_cert, *challenger);
  if (!challenger_cert.ok()) {
    return Failure(kSub, challenger_cert.status().WithContext("--challenger_cert (checked against --challenger_key)"));
  }
  auto tls = proto::TlsChannel::Create(proto::TlsChannel::Role::kServer, *node_key, *challenger_cert);
  if (!tls.ok()) return Failure(kSub, tls.status());
  config.authority_key = *authority;
  config.challenger_key = *challenger;
  config.node_key = *node_key;
  config.node_name = FLAGS_node_name;
  config.clock_skew_us = FLAGS_clock_skew_us;
  config.max_order_lifetime_us = FLAGS_max_order_lifetime_us;
  config.session_timeout_us = FLAGS_session_timeout_us;
  config.transcript_thread = SpareCoreEnabled(transcript_mode, UsableHardwareThreads());
  config.host_budget_bytes = *budget;
  config.host_reserve_bytes = FLAGS_host_reserve_bytes;
  config.host_fill_threads = *threads;

  // Signals are taken by the event loop; this must happen before any thread starts (the mask is
  // inherited), so before the backends (GPU runtimes start threads).
  kj::UnixEventPort::captureSignal(SIGINT);
  kj::UnixEventPort::captureSignal(SIGTERM);

  backend_config.host.min_reserve_bytes = FLAGS_host_reserve_bytes;
  backend_config.host.simd = *simd;
  BackendSet backends = CreateBackends(backend_config);
  if (backends.Devices().empty()) {
    std::string why;
    for (const auto& d : backends.disabled) why += "; " + d;
    return Failure(kSub, UnavailableError("no usable device for --devices=" + FLAGS_devices + why));
  }
  std::string device_list;
  bool host_device = false;
  for (const DeviceInfo& d : backends.Devices()) {
    device_list += (device_list.empty() ? "" : ", ") + d.id + " (" + d.name + ", " + FormatBytesHuman(d.total_bytes) +
                   ", " + std::to_string(d.total_bytes) + " bytes)";
    host_device |= d.kind == DeviceKind::kHost;
  }
  // The budget is echoed, and checked against what this process can lock, now rather than at the
  // first order.
  std::fprintf(stderr, "wipeproof-prover serve: devices: %s\n", device_list.c_str());
  if (host_device) {
    const HostBudgetFacts facts = ReadHostBudgetFacts();
    std::fprintf(stderr, "wipeproof-prover serve: %s\n",
                 DescribeHostBudget(*budget, FLAGS_host_reserve_bytes, facts).c_str());
    if (Status s = CheckHostBudget(*budget, FLAGS_host_reserve_bytes, facts, HostBudgetFlagText()); !s.ok()) {
      return Failure(kSub, s);
    }
  }

  kj::AsyncIoContext io = kj::setupAsyncIo();
  MetricsRegistry registry;
  std::optional<AgentMetrics> metrics;
  if (!FLAGS_metrics_listen.empty()) {
    metrics.emplace(registry, config.node_name, WIPEPROOF_VERSION_STRING);
    config.metrics = &*metrics;
  }
  AgentCore core(config, std::move(backends), SystemClock());
  // Metrics are served from a thread of their own: a scrape (or a flood of them) never runs on the
  // event loop that answers rounds.
  std::optional<MetricsHttpThread> metrics_server;
  unsigned metrics_port = 0;
  if (metrics) {
    metrics->CollectFrom(core);
    metrics_server.emplace(registry);
    auto bound = metrics_server->Start(FLAGS_metrics_listen);
    if (!bound.ok()) return Failure(kSub, bound.status());
    metrics_port = *bound;
  }
  AgentRpcServerOptions server_options;
  server_options.max_connections = FLAGS_max_connections;
  server_options.idle_timeout_us = FLAGS_idle_timeout_s * 1'000'000;
  server_options.tls = std::move(tls).value();
  server_options.max_handshakes = FLAGS_max_handshakes;
  server_options.handshake_timeout_us = static_cast<int64_t>(FLAGS_handshake_timeout_s * 1e6);
  AgentRpcServer server(core, *io.provider, server_options);
  unsigned port = 0;
  try {
    port = server.Listen(FLAGS_listen).wait(io.waitScope);
  } catch (const kj::Exception& e) {
    const std::string what = e.getDescription().cStr();
    if (what.find("Address already in use") != std::string::npos) {
      return Failure(kSub, UnavailableError("cannot listen on " + FLAGS_listen +
                                            ": the address is already in use (another process holds the port; "
                                            "stop it or choose another --listen)"));
    }
    return Failure(kSub, UnavailableError("cannot listen on " + FLAGS_listen + ": " + what));
  }
  std::printf("listening on %s:%u\n", listen_host.c_str(), port);
  if (metrics_server) {
    const std::string metrics_host = FLAGS_metrics_listen.substr(0, FLAGS_metrics_listen.rfind(':'));
    std::printf("metrics on %s:%u\n", metrics_host.c_str(), metrics_port);
    LOG(INFO) << "metrics on http://" << metrics_host << ":" << metrics_port << "/metrics";
  }
  std::fflush(stdout);
  LOG(INFO) << "agent for node '" << config.node_name << "' (key id "
            << proto::KeyIdHex(proto::KeyIdOf(config.node_key.public_key)) << ") listening on " << listen_host << ":"
            << port << " (TLS 1.3 as " << server_options.tls->own_name() << ", accepting only "
            << server_options.tls->peer().name << "); devices: " << device_list << "; round polling "
            << (SpareCoreEnabled(polling_mode, UsableHardwareThreads()) ? "on" : "off") << " (" << FLAGS_round_polling
            << "), transcript thread " << (config.transcript_thread ? "on" : "off") << " (" << FLAGS_transcript_thread
            << "; " << UsableHardwareThreads() << " usable hardware threads)";

  siginfo_t signal{};
  RoundPollingOptions polling;
  polling.enabled = SpareCoreEnabled(polling_mode, UsableHardwareThreads());
  polling.max_poll_us = static_cast<int64_t>(FLAGS_round_polling_max_s * 1e6);
  RunAgentEventLoop(io.unixEventPort.onSignal(SIGINT)
                        .exclusiveJoin(io.unixEventPort.onSignal(SIGTERM))
                        .then([&signal](siginfo_t received) { signal = received; }),
                    io.waitScope, io.provider->getTimer(), core, polling);
  LOG(INFO) << "signal " << signal.si_signo << ": stopping; ending any session and freeing its memory";
  core.Shutdown("agent stopping (signal " + std::to_string(signal.si_signo) + ")");
  return kExitOk;
}

// --progress as serve (and doctor, which takes serve's flags) reads it.
constexpr char kServeProgressHelp[] =
    "fill progress lines in the agent's log: auto (default) once a fill runs 2 s, terminal or not (a "
    "service's journal), always from the start, never";

const CliSubcommand& ServeSubcommand() {
  static const CliSubcommand kSubcommand = {"serve",
   "run the prover agent: accept signed wipe orders over TCP, fill, answer rounds",
   "Listens on --listen and serves the ProverAgent RPC (proto/wipe.capnp) until SIGINT/SIGTERM.\n"
   "Accepts an order only if it verifies under --authority_key, names --node_name and this node's\n"
   "key, is unexpired (within --clock_skew_us), has an unseen session id, and plans exactly this\n"
   "node's devices with sizes it can hold; then fills all devices at once, reports, answers rounds\n"
   "and frees all memory after the verdict (--challenger_key), on abort, on disconnect, or after the\n"
   "session timeout. Every connection is TLS 1.3 with both sides authenticated: the agent presents\n"
   "the certificate of --node_key and accepts only the client holding the key of --challenger_cert\n"
   "(which must carry --challenger_key); orders are accepted only from the challenger they name.\n"
   "Prints \"listening on HOST:PORT\" on stdout once bound (port 0: any free port); logs phases and\n"
   "timings on stderr. The node key file must be mode 0600. --metrics_listen=HOST:PORT serves Prometheus\n"
   "metrics on /metrics and /healthz (docs/metrics.md) and prints \"metrics on HOST:PORT\" once bound.\n"
   "--progress logs each device's fill progress (bytes, rate, ETA): auto (default) once a fill runs 2 s,\n"
   "always from the start, never. `doctor` checks a node with the same flags before a wipe.",
   ServeFlagNames(),
   &RunServe,
   {{"node_key",
     "this node's secret key file (PREFIX.key, mode 0600): signs reports and is the agent's TLS identity "
     "(required)"},
    {"progress", kServeProgressHelp}}};
  return kSubcommand;
}

}  // namespace wipeproof
