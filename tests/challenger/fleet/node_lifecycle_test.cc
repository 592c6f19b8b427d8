// The node-lifecycle hooks of a wave run: the drain/resume logic with a fake hook (order of calls,
// resume only on a pass stating a bound unless "on-pass", the failure's reason kept, a failed drain
// means no wipe, a node out of service already left as it is, a stop during the drains sends no
// order) in a real wave over loopback TCP; the inventory's lifecycle fields; the Slurm, Kubernetes
// and command hooks against small scripts standing in for scontrol/squeue, kubectl and an
// operator's hook (the argv they get, the state they read, their stderr in errors, timeouts); the
// shipped stop timeouts against the longest run; and RunProcess itself.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "challenger/fleet/command_lifecycle.h"
#include "challenger/fleet/kubernetes_lifecycle.h"
#include "challenger/fleet/slurm_lifecycle.h"
#include "challenger/fleet/wave_drain.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/fleet/wave_shard.h"
#include "challenger/parameters/parameter_profile.h"
#include "challenger/session/assumptions.h"
#include "challenger/session/session_plan.h"
#include "common/json_fields.h"
#include "common/subprocess.h"
#include "proto/codec.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

// Records every call, in order, as "drain node-a <reason>", "resume node-a", "keep node-b <reason>".
struct CallLog {
  std::mutex mu;
  std::vector<std::string> calls;
  void Add(std::string call) {
    std::lock_guard<std::mutex> lock(mu);
    calls.push_back(std::move(call));
  }
  std::vector<std::string> Calls() {
    std::lock_guard<std::mutex> lock(mu);
    return calls;
  }
};

class FakeLifecycle : public NodeLifecycle {
 public:
  FakeLifecycle(CallLog* log, std::string fail_drain_of = "", std::function<void()> on_drain = {},
                std::string out_of_service = "")
      : log_(log),
        fail_drain_of_(std::move(fail_drain_of)),
        on_drain_(std::move(on_drain)),
        out_of_service_(std::move(out_of_service)) {}
  StatusOr<SchedulerState> ReadState(const std::string& node) override {
    SchedulerState state;
    if (node == out_of_service_) {
      state.in_service = false;
      state.detail = "state IDLE+DRAIN, reason 'fan failure'";
    }
    return state;
  }
  Status Drain(const std::string& node, const std::string& reason) override {
    if (on_drain_) on_drain_();
    log_->Add("drain " + node + " " + reason);
    if (node == fail_drain_of_) return UnavailableError("scontrol: node busy");
    return Status::Ok();
  }
  Status Resume(const std::string& node) override {
    log_->Add("resume " + node);
    return Status::Ok();
  }
  Status KeepDrained(const std::string& node, const std::string& reason) override {
    log_->Add("keep " + node + " " + reason);
    return Status::Ok();
  }
  std::string Describe() const override { return "fake"; }

 private:
  CallLog* log_;
  std::string fail_drain_of_;
  std::function<void()> on_drain_;
  std::string out_of_service_;
};

Profile TcpProfile() {
  Profile p = testing::TestProfile();
  p.rounds = 8;
  p.round_deadline_us = 500'000;
  return p;
}

LifecycleSpec CommandSpec() {
  LifecycleSpec spec;
  spec.kind = LifecycleKind::kCommand;
  spec.command = "unused";
  return spec;
}

// The test profile is uncalibrated: its passes state no bound, so only "on-pass" gives them back.
LifecycleSpec OnPassSpec() {
  LifecycleSpec spec = CommandSpec();
  spec.resume = ResumePolicy::kOnPass;
  return spec;
}

size_t Count(const std::vector<testing::StoredRecord>& records, proto::LedgerRecordKind kind) {
  size_t n = 0;
  for (const auto& r : records) n += r.kind == kind;
  return n;
}

// A real wave over loopback: node-a honest, node-b cheating (blank chunks: wrongLabel). Both are
// drained before any order exists; node-a is resumed, node-b kept drained with its failure.
TEST(WaveLifecycleTest, DrainsEveryMemberFirstAndResumesOnlyThePass) {
  auto a = testing::ServeTestAgent(testing::TestKey(0x33));
  auto b = testing::ServeTestAgent(testing::TestKey(0x44), testing::BlankChunks());
  Inventory inventory = testing::TestInventoryAt(*a, *b);
  inventory.waves[0].lifecycle = OnPassSpec();
  inventory.nodes[1].scheduler_name = "cluster-b";
  testing::MemoryRecordSink sink;
  CallLog log;
  std::vector<size_t> orders_at_drain;
  std::mutex mu;
  TcpSessionOptions options = testing::TcpTestOptions();
  options.lifecycle_factory = [&](const LifecycleSpec& spec) -> std::unique_ptr<NodeLifecycle> {
    EXPECT_EQ(spec.kind, LifecycleKind::kCommand);
    return std::make_unique<FakeLifecycle>(&log, "", [&] {
      std::lock_guard<std::mutex> lock(mu);
      orders_at_drain.push_back(Count(sink.records(), proto::LedgerRecordKind::ORDER));
    });
  };
  CallLog notices;
  options.lifecycle_notice = [&](const std::string& line) { notices.Add(line); };
  auto results = RunWave(inventory, inventory.waves[0], TcpProfile(),
                         SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[0].outcome.ok()) << results[0].outcome.status().ToString();
  ASSERT_TRUE(results[1].outcome.ok()) << results[1].outcome.status().ToString();
  EXPECT_TRUE(results[0].outcome->pass);
  EXPECT_FALSE(results[1].outcome->pass);
  // Every step is reported: two drains begun, two done, one resume, one kept drained.
  std::vector<std::string> lines = notices.Calls();
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[4], "wave wave-1: node node-a passed and was resumed");
  EXPECT_EQ(lines[5].rfind("wave wave-1: node node-b stays drained: wipeproof wave wave-1: wipe FAILED: wrongLabel", 0),
            0u)
      << lines[5];
  EXPECT_EQ(orders_at_drain, (std::vector<size_t>{0, 0}));  // no order before both drains
  EXPECT_EQ(Count(sink.records(), proto::LedgerRecordKind::ORDER), 2u);

  std::vector<std::string> calls = log.Calls();
  ASSERT_EQ(calls.size(), 4u);
  // The two drains run in parallel: either order.
  std::vector<std::string> drains = {calls[0], calls[1]};
  std::sort(drains.begin(), drains.end());
  EXPECT_EQ(drains[0], "drain cluster-b wipeproof wave wave-1: wipe in progress");
  EXPECT_EQ(drains[1], "drain node-a wipeproof wave wave-1: wipe in progress");
  EXPECT_EQ(calls[2], "resume node-a");
  EXPECT_EQ(calls[3].rfind("keep cluster-b wipeproof wave wave-1: wipe FAILED: wrongLabel: ", 0), 0u) << calls[3];
}

// A member whose drain fails is not wiped (no order goes to it), stays drained with why, and the
// others run without it.
// A ledger that loses the receipts: both sessions pass, but a pass whose records did not all reach
// the ledger gives no node back.
class ReceiptLosingSink final : public RecordSink {
 public:
  StatusOr<uint64_t> Append(proto::LedgerRecordKind kind, proto::ByteView record, proto::ByteView session_id) override {
    if (kind == proto::LedgerRecordKind::RECEIPT) return UnavailableError("disk full");
    return inner_.Append(kind, record, session_id);
  }

 private:
  testing::MemoryRecordSink inner_;
};

// threat-model: T-RESUME-UNRECORDED
TEST(WaveLifecycleTest, APassThatDidNotReachTheLedgerIsNotResumed) {
  auto a = testing::ServeTestAgent(testing::TestKey(0x33));
  auto b = testing::ServeTestAgent(testing::TestKey(0x44));
  Inventory inventory = testing::TestInventoryAt(*a, *b);
  inventory.waves[0].lifecycle = CommandSpec();
  ReceiptLosingSink sink;
  CallLog log;
  TcpSessionOptions options = testing::TcpTestOptions();
  options.lifecycle_factory = [&](const LifecycleSpec&) -> std::unique_ptr<NodeLifecycle> {
    return std::make_unique<FakeLifecycle>(&log, "", [] {});
  };
  auto results = RunWave(inventory, inventory.waves[0], TcpProfile(),
                         SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    ASSERT_TRUE(r.outcome.ok()) << r.outcome.status().ToString();
    EXPECT_TRUE(r.outcome->pass);
    EXPECT_FALSE(r.outcome->ledger.ok());
  }
  int kept = 0;
  for (const std::string& call : log.Calls()) {
    EXPECT_NE(call.rfind("resume", 0), 0u) << call;
    if (call.rfind("keep", 0) == 0) {
      ++kept;
      EXPECT_NE(call.find("pass not fully recorded"), std::string::npos) << call;
    }
  }
  EXPECT_EQ(kept, 2);
}

// A member left out of the run after planning (its drain failed, or it was out of service) is
// not wiped and may hold the others' labels: the members that ran say their wave was not whole, in
// the order they were sent and in their verdict's wave-complete.
void ExpectWaveNotWhole(const SessionOutcome& outcome) {
  auto order = proto::ParseMessage<proto::WipeOrder>(proto::AsView(outcome.order.payload));
  ASSERT_TRUE(order.ok()) << order.status().ToString();
  EXPECT_TRUE(order->root().getWaveName() == "wave-1");
  EXPECT_FALSE(order->root().getWaveComplete());
  int found = 0;
  for (const AssumptionResult& a : outcome.summary.assumptions) {
    if (a.name != kWaveComplete) continue;
    ++found;
    EXPECT_FALSE(a.held) << a.detail;
    EXPECT_NE(a.detail.find("not every one of wave wave-1's 2 nodes was wiped"), std::string::npos) << a.detail;
  }
  EXPECT_EQ(found, 1);
}

// threat-model: T-MEMBER-LEFT-OUT
TEST(WaveLifecycleTest, AMemberThatCannotBeDrainedIsNotWiped) {
  auto a = testing::ServeTestAgent(testing::TestKey(0x33));
  auto b = testing::ServeTestAgent(testing::TestKey(0x44));
  Inventory inventory = testing::TestInventoryAt(*a, *b);
  inventory.waves[0].lifecycle = OnPassSpec();
  testing::MemoryRecordSink sink;
  CallLog log;
  TcpSessionOptions options = testing::TcpTestOptions();
  options.lifecycle_factory = [&](const LifecycleSpec&) -> std::unique_ptr<NodeLifecycle> {
    return std::make_unique<FakeLifecycle>(&log, "node-b");
  };
  auto results = RunWave(inventory, inventory.waves[0], TcpProfile(),
                         SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[0].outcome.ok()) << results[0].outcome.status().ToString();
  EXPECT_TRUE(results[0].outcome->pass);
  ExpectWaveNotWhole(*results[0].outcome);
  ASSERT_FALSE(results[1].outcome.ok());
  EXPECT_EQ(results[1].outcome.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(results[1].outcome.status().message().find("drain failed: UNAVAILABLE: scontrol: node busy"),
            std::string::npos)
      << results[1].outcome.status().ToString();
  EXPECT_EQ(Count(sink.records(), proto::LedgerRecordKind::ORDER), 1u);
  std::vector<std::string> calls = log.Calls();
  EXPECT_NE(
      std::find(calls.begin(), calls.end(), "keep node-b wipeproof wave wave-1: drain failed: scontrol: node busy"),
      calls.end());
  EXPECT_EQ(calls.back(), "resume node-a");
  EXPECT_EQ(std::count_if(calls.begin(), calls.end(), [](const std::string& c) { return c.rfind("resume", 0) == 0; }),
            1);
}

// threat-model: T-DRAIN-OTHERS
// threat-model: T-MEMBER-LEFT-OUT
// A node drained by its operator (fan failure) is not ours: the wave neither drains it (its reason
// would be overwritten) nor wipes it (its work may still run) nor resumes it; the other runs on.
TEST(WaveLifecycleTest, ANodeOutOfServiceAlreadyIsLeftAsItIs) {
  auto a = testing::ServeTestAgent(testing::TestKey(0x33));
  auto b = testing::ServeTestAgent(testing::TestKey(0x44));
  Inventory inventory = testing::TestInventoryAt(*a, *b);
  inventory.waves[0].lifecycle = OnPassSpec();
  testing::MemoryRecordSink sink;
  CallLog log;
  TcpSessionOptions options = testing::TcpTestOptions();
  options.lifecycle_factory = [&](const LifecycleSpec&) -> std::unique_ptr<NodeLifecycle> {
    return std::make_unique<FakeLifecycle>(&log, "", std::function<void()>{}, "node-b");
  };
  auto results = RunWave(inventory, inventory.waves[0], TcpProfile(),
                         SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[0].outcome.ok()) << results[0].outcome.status().ToString();
  EXPECT_TRUE(results[0].outcome->pass);
  ExpectWaveNotWhole(*results[0].outcome);
  ASSERT_FALSE(results[1].outcome.ok());
  EXPECT_EQ(results[1].outcome.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(results[1].outcome.status().message(),
            "not wiped: out of service already (fake node node-b: state IDLE+DRAIN, reason 'fan failure'); not "
            "drained or resumed by this wave");
  EXPECT_EQ(Count(sink.records(), proto::LedgerRecordKind::ORDER), 1u);
  EXPECT_EQ(Count(sink.records(), proto::LedgerRecordKind::WAVE_VERDICT), 1u);  // naming node-b's missing verdict
  EXPECT_EQ(log.Calls(),
            (std::vector<std::string>{"drain node-a wipeproof wave wave-1: wipe in progress", "resume node-a"}));
  // A run in which no member is wiped signs no wave verdict (it would name no member's verdict).
  inventory.waves[0].nodes = {"node-b"};
  testing::MemoryRecordSink empty_run;
  auto skipped = RunWave(inventory, inventory.waves[0], TcpProfile(),
                         SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, empty_run, options);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].outcome.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(empty_run.records().empty());
}

// threat-model: T-RESUME-UNBOUNDED
// Both members pass, but the uncalibrated profile states no bound: by default neither is given
// back, each kept drained with why; "on-pass" gives both back.
TEST(WaveLifecycleTest, APassWithoutABoundIsResumedOnlyUnderOnPass) {
  for (ResumePolicy policy : {ResumePolicy::kOnBound, ResumePolicy::kOnPass}) {
    auto a = testing::ServeTestAgent(testing::TestKey(0x33));
    auto b = testing::ServeTestAgent(testing::TestKey(0x44));
    Inventory inventory = testing::TestInventoryAt(*a, *b);
    inventory.waves[0].lifecycle = CommandSpec();
    inventory.waves[0].lifecycle->resume = policy;
    testing::MemoryRecordSink sink;
    CallLog log;
    TcpSessionOptions options = testing::TcpTestOptions();
    options.lifecycle_factory = [&](const LifecycleSpec&) -> std::unique_ptr<NodeLifecycle> {
      return std::make_unique<FakeLifecycle>(&log);
    };
    auto results = RunWave(inventory, inventory.waves[0], TcpProfile(),
                           SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results) {
      ASSERT_TRUE(r.outcome.ok()) << r.outcome.status().ToString();
      EXPECT_TRUE(r.outcome->pass);
      EXPECT_FALSE(r.outcome->summary.bound_stated);
    }
    std::vector<std::string> calls = log.Calls();
    ASSERT_EQ(calls.size(), 4u);
    std::vector<std::string> ends = {calls[2], calls[3]};
    std::sort(ends.begin(), ends.end());
    if (policy == ResumePolicy::kOnPass) {
      EXPECT_EQ(ends, (std::vector<std::string>{"resume node-a", "resume node-b"}));
    } else {
      EXPECT_EQ(ends[0].rfind("keep node-a wipeproof wave wave-1: wipe FAILED: no bound stated: no bound: ", 0), 0u)
          << ends[0];
      EXPECT_EQ(ends[1].rfind("keep node-b wipeproof wave wave-1: wipe FAILED: no bound stated: no bound: ", 0), 0u)
          << ends[1];
    }
  }
}

// threat-model: T-STOP-MID-DRAIN
// serve stopped (SIGTERM) while the nodes drain: no order goes out after the stop, the nodes taken
// are given back (nothing was wiped), each result says so, and no wave verdict is written.
TEST(WaveLifecycleTest, AStopDuringTheDrainSendsNoOrderAndGivesTheNodesBack) {
  auto a = testing::ServeTestAgent(testing::TestKey(0x33));
  auto b = testing::ServeTestAgent(testing::TestKey(0x44));
  Inventory inventory = testing::TestInventoryAt(*a, *b);
  inventory.waves[0].lifecycle = CommandSpec();
  testing::MemoryRecordSink sink;
  CallLog log;
  std::atomic<bool> stop{false};
  TcpSessionOptions options = testing::TcpTestOptions();
  options.stop = &stop;
  options.lifecycle_factory = [&](const LifecycleSpec&) -> std::unique_ptr<NodeLifecycle> {
    return std::make_unique<FakeLifecycle>(&log, "", [&] { stop.store(true); });
  };
  auto results = RunWave(inventory, inventory.waves[0], TcpProfile(),
                         SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    ASSERT_FALSE(r.outcome.ok());
    EXPECT_EQ(r.outcome.status().message(),
              "not wiped: the challenger is stopping: the run was abandoned after the drain, before any order");
  }
  EXPECT_EQ(sink.records().size(), 0u);  // no order, no wave verdict
  std::vector<std::string> calls = log.Calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[2], "resume node-a");
  EXPECT_EQ(calls[3], "resume node-b");
}

SessionOutcome BoundedPass() {
  SessionOutcome o;
  o.pass = true;
  o.summary.bound_stated = true;
  o.summary.statement = "at most 0 bytes of node n1 not wiped";
  o.summary.assumptions = {{"host-memory-in-plan", true, "planned"}, {"no-nvme-in-reach", true, "declared"}};
  return o;
}

TEST(MemberEndTest, ResumesOnlyARecordedPassWithABoundAndItsAssumptionsHeld) {
  EXPECT_TRUE(MemberEndOf(BoundedPass(), ResumePolicy::kOnBound).pass);

  SessionOutcome unheld = BoundedPass();
  unheld.summary.assumptions[1].held = false;
  unheld.summary.assumptions[1].detail = "unknown: the inventory does not declare it";
  MemberEnd end = MemberEndOf(unheld, ResumePolicy::kOnBound);
  EXPECT_FALSE(end.pass);
  EXPECT_EQ(end.reason, "assumption no-nvme-in-reach not held: unknown: the inventory does not declare it");
  EXPECT_TRUE(MemberEndOf(unheld, ResumePolicy::kOnPass).pass);

  SessionOutcome unbounded = BoundedPass();
  unbounded.summary.bound_stated = false;
  unbounded.summary.statement = "no bound: parameters not calibrated (profile p)";
  end = MemberEndOf(unbounded, ResumePolicy::kOnBound);
  EXPECT_FALSE(end.pass);
  EXPECT_EQ(end.reason, "no bound stated: no bound: parameters not calibrated (profile p)");

  // The assumptions wipeproof never establishes (physical-binding; no-uncovered-memory on a GPU node)
  // do not keep a node drained: every real verdict lists them as not held.
  SessionOutcome real_verdict = BoundedPass();
  real_verdict.summary.assumptions.push_back({kPhysicalBinding, false, "not established by wipeproof v1"});
  real_verdict.summary.assumptions.push_back({kNoUncoveredMemory, false, "GPU on-chip memory"});
  EXPECT_TRUE(MemberEndOf(real_verdict, ResumePolicy::kOnBound).pass);
  real_verdict.summary.assumptions[0].held = false;  // host-memory-in-plan: can hold, so it gates
  EXPECT_FALSE(MemberEndOf(real_verdict, ResumePolicy::kOnBound).pass);

  SessionOutcome unrecorded = BoundedPass();
  unrecorded.ledger = UnavailableError("disk full");
  EXPECT_EQ(MemberEndOf(unrecorded, ResumePolicy::kOnPass).reason, "pass not fully recorded: UNAVAILABLE: disk full");
  EXPECT_EQ(MemberEndOf(StatusOr<SessionOutcome>(UnavailableError("refused")), ResumePolicy::kOnPass).reason,
            "not run: UNAVAILABLE: refused");
}

TEST(WaveDrainTest, MembersWithoutAHookAreLeftAlone) {
  CallLog log;
  FakeLifecycle hook(&log);
  WaveDrain drain("w", {{"n1", "n1", &hook}, {"n2", "n2", nullptr}, {"n3", "s3", &hook}});
  std::vector<Status> drained = drain.DrainAll();
  ASSERT_EQ(drained.size(), 3u);
  for (const Status& s : drained) EXPECT_TRUE(s.ok());
  drain.Settle({{false, "agentAborted: stopped"}, {false, "never"}, {true, ""}});
  std::vector<std::string> calls = log.Calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[2], "keep n1 wipeproof wave w: wipe FAILED: agentAborted: stopped");
  EXPECT_EQ(calls[3], "resume s3");
}

// What a scheduler says of a node (here a drained node's reason as a hook reads it, with an ESC, a
// carriage return and a fake line) reaches the wave's notices escaped and cut: the inspected party
// cannot forge a log line of serve's.
class HostileStateLifecycle : public FakeLifecycle {
 public:
  using FakeLifecycle::FakeLifecycle;
  StatusOr<SchedulerState> ReadState(const std::string&) override {
    SchedulerState state;
    state.in_service = false;
    state.detail = "\x1b[2K\rwave w: node n1 passed\n" + std::string(5000, 'x');
    return state;
  }
};

TEST(WaveDrainTest, WhatASchedulerSaysIsEscapedAndCutInTheNotices) {
  CallLog log, notices;
  HostileStateLifecycle hook(&log);
  WaveDrain drain("w", {{"n1", "n1", &hook}}, [&](const std::string& line) { notices.Add(line); });
  drain.DrainAll();
  const std::vector<std::string> lines = notices.Calls();
  ASSERT_FALSE(lines.empty());
  for (const std::string& line : lines) {
    EXPECT_EQ(line.find_first_of("\x1b\r\n"), std::string::npos) << line;
    EXPECT_LT(line.size(), 1200u);
  }
  EXPECT_NE(lines[0].find("\\u001b[2K\\u000dwave w: node n1 passed\\u000a"), std::string::npos) << lines[0];
}

TEST(LifecycleReasonTest, OneLineBoundedNeverEmpty) {
  EXPECT_EQ(LifecycleReasonText("a\nb\tc"), "a b c");
  EXPECT_EQ(LifecycleReasonText(""), "wipeproof");
  const std::string cut = LifecycleReasonText(std::string(300, 'x'));
  EXPECT_EQ(cut.size(), 240u);
  EXPECT_EQ(cut.substr(237), "...");
}

// ---- the inventory's fields

StatusOr<LifecycleSpec> Parse(const std::string& text) {
  auto json = ParseJsonText(text, "test");
  if (!json.ok()) return json.status();
  return ParseLifecycleSpec(*json, "nodes[0].lifecycle", "/etc/wipeproof");
}

TEST(LifecycleSpecTest, ParsesEachKindAndRefusesMistakes) {
  auto slurm = Parse(R"({"kind": "slurm", "grace_s": 30, "poll_s": 0.5, "bin_dir": "/usr/bin"})");
  ASSERT_TRUE(slurm.ok()) << slurm.status().ToString();
  EXPECT_EQ(slurm->kind, LifecycleKind::kSlurm);
  EXPECT_EQ(slurm->grace_s, 30);
  EXPECT_EQ(slurm->poll_s, 0.5);
  auto command = Parse(R"({"kind": "command", "command": "hooks/drain.sh"})");
  ASSERT_TRUE(command.ok());
  EXPECT_EQ(command->command, "/etc/wipeproof/hooks/drain.sh");  // relative to the inventory
  EXPECT_EQ(Parse(R"({"kind": "command", "command": "drain-hook"})")->command, "drain-hook");  // PATH
  EXPECT_EQ(Parse(R"({"kind": "kubernetes", "kubeconfig": "kube.conf"})")->kubeconfig, "/etc/wipeproof/kube.conf");
  auto token = Parse(R"({"kind": "slurm", "slurm_conf": "slurm-client.conf", "token_file": "/run/wp/slurm.jwt"})");
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(token->slurm_conf, "/etc/wipeproof/slurm-client.conf");
  EXPECT_EQ(token->token_file, "/run/wp/slurm.jwt");
  EXPECT_EQ(Parse(R"({"kind": "kubernetes", "token_file": "t"})").status().message(),
            "nodes[0].lifecycle.token_file: not used by kind 'kubernetes'");

  EXPECT_EQ(Parse(R"({"kind": "slurm"})")->resume, ResumePolicy::kOnBound);  // strict by default
  EXPECT_EQ(Parse(R"({"kind": "slurm", "resume": "on-pass"})")->resume, ResumePolicy::kOnPass);
  EXPECT_EQ(Parse(R"({"kind": "slurm", "resume": "always"})").status().message(),
            "nodes[0].lifecycle.resume: want \"on-bound\" or \"on-pass\", got 'always'");
  EXPECT_EQ(Parse(R"({"kind": "pbs"})").status().message(),
            "nodes[0].lifecycle.kind: want \"slurm\", \"kubernetes\", \"command\" or \"none\", got 'pbs'");
  EXPECT_EQ(Parse(R"({"kind": "command"})").status().message(),
            "nodes[0].lifecycle.command: missing (the hook's executable)");
  EXPECT_EQ(Parse(R"({"kind": "slurm", "grace_s": -1})").status().message(),
            "nodes[0].lifecycle.grace_s: must be in [0, 86400], got -1");
  EXPECT_EQ(Parse(R"({"kind": "kubernetes", "poll_s": 1})").status().message(),
            "nodes[0].lifecycle.poll_s: not used by kind 'kubernetes'");
  EXPECT_EQ(Parse(R"({"kind": "none", "grace_s": 1})").status().message(),
            "nodes[0].lifecycle: kind 'none' takes no other field");
  EXPECT_NE(Parse(R"({"kind": "slurm", "graces": 1})").status().message().find("unknown field 'graces'"),
            std::string::npos);
}

TEST(LifecycleSpecTest, ANodesOwnOverridesItsWavesAndNoneTurnsItOff) {
  const std::string keys = std::string("\"public_key\": \"") + std::string(64, '0') + "\"";
  auto inventory = ParseInventoryJson(R"({"nodes": [
      {"name": "a", "address": "h:1", )" + keys +
                                          R"(, "devices": [{"selector": "host", "model": "m", "capacity_bytes": 1}]},
      {"name": "b", "address": "h:1", )" + keys +
                                          R"(, "scheduler_name": "b.cluster",
       "lifecycle": {"kind": "command", "command": "/bin/true"},
       "devices": [{"selector": "host", "model": "m", "capacity_bytes": 1}]},
      {"name": "c", "address": "h:1", )" + keys +
                                          R"(, "lifecycle": {"kind": "none"},
       "devices": [{"selector": "host", "model": "m", "capacity_bytes": 1}]},
      {"name": "d", "address": "h:1", )" + keys +
                                          R"(, "devices": [{"selector": "host", "model": "m", "capacity_bytes": 1}]}],
    "waves": [{"name": "w", "nodes": ["a", "b", "c"], "period_s": 60, "complete": true,
               "lifecycle": {"kind": "slurm", "grace_s": 5}}],
    "reserves": {"m": 0}})",
                                      "");
  ASSERT_TRUE(inventory.ok()) << inventory.status().ToString();
  ASSERT_TRUE(inventory->LifecycleOf("a").has_value());
  EXPECT_EQ(inventory->LifecycleOf("a")->kind, LifecycleKind::kSlurm);
  EXPECT_EQ(inventory->LifecycleOf("a")->grace_s, 5);
  EXPECT_EQ(inventory->LifecycleOf("b")->kind, LifecycleKind::kCommand);
  EXPECT_EQ(inventory->FindNode("b")->scheduler_name, "b.cluster");
  EXPECT_EQ(inventory->FindNode("a")->scheduler_name, "a");
  EXPECT_FALSE(inventory->LifecycleOf("c").has_value());
  EXPECT_FALSE(inventory->LifecycleOf("d").has_value());
}

// A scheduler name is one node of the scheduler: two inventory nodes on it (a pass of one would
// resume the other's failed wipe), a host list or an option are refused.
// threat-model: T-SCHEDULER-NAME
TEST(LifecycleSpecTest, SchedulerNamesAreUniqueSingleHostsAndNeverOptions) {
  const std::string keys = std::string("\"public_key\": \"") + std::string(64, '0') + "\"";
  auto parse = [&](const std::string& a_sched, const std::string& b_sched) {
    return ParseInventoryJson(R"({"nodes": [
      {"name": "a", "address": "h:1", )" +
                                  keys + a_sched +
                                  R"(, "devices": [{"selector": "host", "model": "m", "capacity_bytes": 1}]},
      {"name": "b", "address": "h:1", )" +
                                  keys + b_sched +
                                  R"(, "devices": [{"selector": "host", "model": "m", "capacity_bytes": 1}]}],
      "reserves": {"m": 0}})",
                              "");
  };
  EXPECT_TRUE(parse(R"(, "scheduler_name": "gpu-01.rack_2")", "").ok());
  EXPECT_NE(parse(R"(, "scheduler_name": "host1")", R"(, "scheduler_name": "host1")")
                .status()
                .message()
                .find("nodes[1].scheduler_name: 'host1' is another node's scheduler name (or name) too"),
            std::string::npos);
  EXPECT_FALSE(parse("", R"(, "scheduler_name": "a")").ok());  // node a's own name
  EXPECT_NE(parse(R"(, "scheduler_name": "gpu[01-64]")", "").status().message().find("not a host list"),
            std::string::npos);
  EXPECT_FALSE(parse(R"(, "scheduler_name": "a,b")", "").ok());
  EXPECT_NE(parse(R"(, "scheduler_name": "--selector=x")", "").status().message().find("character other than"),
            std::string::npos);
  EXPECT_NE(parse(R"(, "scheduler_name": "-x")", "").status().message().find("starts with '-'"), std::string::npos);
}

// ---- the hooks against scripts

class ScriptDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/wp-lifecycle-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  // Writes an executable shell script `name` in the folder.
  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    chmod(path.c_str(), 0755);
    return path;
  }
  std::string Read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::string dir_;
};

using CommandLifecycleTest = ScriptDir;

TEST_F(CommandLifecycleTest, RunsTheHookWithActionNodeAndReason) {
  LifecycleSpec spec = CommandSpec();
  spec.command = Script("hook", "echo \"$@\" >> \"$(dirname \"$0\")/calls\"\n");
  CommandLifecycle hook(spec);
  EXPECT_TRUE(hook.Drain("n1", "wipe in progress").ok());
  EXPECT_TRUE(hook.Resume("n1").ok());
  EXPECT_TRUE(hook.KeepDrained("n2", "wipe FAILED: lateRound").ok());
  EXPECT_EQ(Read("calls"), "drain n1 wipe in progress\nresume n1\nfail n2 wipe FAILED: lateRound\n");
}

// The hook runs as the challenger's user, beside its keys: a hook file, or its folder, that another
// user could change is refused at every action (it never runs), and so is one another user owns.
// threat-model: T-HOOK-WRITABLE
TEST_F(CommandLifecycleTest, AHookOthersCouldChangeIsRefused) {
  LifecycleSpec spec = CommandSpec();
  spec.command = Script("hook", "echo \"$@\" >> \"$(dirname \"$0\")/calls\"\necho in-service\n");
  CommandLifecycle hook(spec);
  ASSERT_TRUE(hook.ReadState("n1").ok());
  ASSERT_EQ(chmod(spec.command.c_str(), 0775), 0);
  auto state = hook.ReadState("n1");
  EXPECT_EQ(state.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(state.status().message(), "command hook " + spec.command +
                                          " is writable by group or others (mode 0775): the challenger's user runs "
                                          "or reads it; chmod go-w");
  EXPECT_EQ(hook.Drain("n1", "wipe in progress").code(), StatusCode::kPermissionDenied);
  ASSERT_EQ(chmod(spec.command.c_str(), 0755), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  const Status folder = hook.Resume("n1");
  EXPECT_EQ(folder.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(folder.message().find("folder " + dir_ + " is writable by group or others (mode 0777)"), std::string::npos)
      << folder.message();
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  EXPECT_TRUE(hook.Resume("n1").ok());
  EXPECT_EQ(Read("calls"), "state n1\nresume n1\n");  // the refused actions never ran
  // A folder above the hook's that others may write is refused unless it is sticky (as /tmp); so is
  // a link whose target lies below such a folder.
  const std::string open_dir = dir_ + "/open", inner = open_dir + "/inner";
  ASSERT_EQ(mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(mkdir(inner.c_str(), 0700), 0);
  LifecycleSpec deep = CommandSpec();
  deep.command = inner + "/hook";
  std::ofstream(deep.command) << "#!/bin/sh\necho in-service\n";
  ASSERT_EQ(chmod(deep.command.c_str(), 0755), 0);
  ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);
  CommandLifecycle deep_hook(deep);
  const Status above = deep_hook.ReadState("n1").status();
  EXPECT_EQ(above.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(above.message().find("folder " + open_dir + " is writable by group or others (mode 0777)"),
            std::string::npos)
      << above.message();
  LifecycleSpec linked = CommandSpec();
  linked.command = dir_ + "/link";
  ASSERT_EQ(symlink(deep.command.c_str(), linked.command.c_str()), 0);
  EXPECT_EQ(CommandLifecycle(linked).ReadState("n1").status().code(), StatusCode::kPermissionDenied);
  ASSERT_EQ(chmod(open_dir.c_str(), 01777), 0);  // sticky: others cannot rename inner
  EXPECT_TRUE(deep_hook.ReadState("n1").ok());
  EXPECT_TRUE(CommandLifecycle(linked).ReadState("n1").ok());
  if (geteuid() == 0) {  // only root can give the file away
    ASSERT_EQ(chown(spec.command.c_str(), 65534, 65534), 0);
    const Status foreign = hook.Resume("n1");
    EXPECT_EQ(foreign.code(), StatusCode::kPermissionDenied);
    EXPECT_NE(foreign.message().find("is owned by uid 65534"), std::string::npos) << foreign.message();
  }
}

TEST_F(CommandLifecycleTest, StateIsInServiceOutOfServiceOrAnError) {
  LifecycleSpec spec = CommandSpec();
  spec.command = Script("hook",
                        "case \"$2\" in n1) echo in-service;; n2) echo 'out-of-service rack power work';;"
                        " n3) echo out-of-service;; *) echo maybe;; esac\n");
  CommandLifecycle hook(spec);
  EXPECT_TRUE(hook.ReadState("n1")->in_service);
  EXPECT_FALSE(hook.ReadState("n2")->in_service);
  EXPECT_EQ(hook.ReadState("n2")->detail, "out of service: rack power work");
  EXPECT_EQ(hook.ReadState("n3")->detail, "out of service");
  EXPECT_EQ(hook.ReadState("n4").status().message(),
            "'" + spec.command + " state n4' printed neither 'in-service' nor 'out-of-service': 'maybe'");
}

// A hook that predates `state` (exits 2 on an unknown action): the node's state is unknown, so the
// wave leaves it alone: no drain, no fail, no wipe.
TEST_F(CommandLifecycleTest, AHookWithoutStateLeavesTheNodeAlone) {
  LifecycleSpec spec = CommandSpec();
  spec.command =
      Script("hook",
             "echo \"$@\" >> \"$(dirname \"$0\")/calls\"\n"
             "case \"$1\" in drain|resume|fail) exit 0;; *) echo \"unknown action $1\" >&2; exit 2;; esac\n");
  CommandLifecycle hook(spec);
  WaveDrain drain("w", {{"n1", "n1", &hook}}, [](const std::string&) {});
  std::vector<Status> drained = drain.DrainAll();
  ASSERT_EQ(drained.size(), 1u);
  EXPECT_EQ(drained[0].code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(drained[0].message(), "not wiped: its state could not be read (command " + spec.command +
                                      " node n1): UNAVAILABLE: '" + spec.command +
                                      " state n1' exited with status 2: unknown action state; left as it is");
  drain.Settle({{false, "not run: ..."}});
  EXPECT_EQ(Read("calls"), "state n1\n");
}

TEST_F(CommandLifecycleTest, AFailingHookIsAnErrorWithItsStderr) {
  LifecycleSpec spec = CommandSpec();
  spec.command = Script("hook", "echo 'node n1 is running job 42' >&2\nexit 3\n");
  Status s = CommandLifecycle(spec).Drain("n1", "r");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "'" + spec.command + " drain n1 r' exited with status 3: node n1 is running job 42");
  spec.command = dir_ + "/missing";
  EXPECT_EQ(CommandLifecycle(spec).Resume("n1").code(), StatusCode::kNotFound);
}

TEST_F(CommandLifecycleTest, AHookThatHangsIsKilledAtItsTimeout) {
  LifecycleSpec spec = CommandSpec();
  spec.command = Script("hook", "echo started >&2\nsleep 30\n");
  spec.command_timeout_s = 1;
  Status s = CommandLifecycle(spec).Resume("n1");
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
  EXPECT_NE(s.message().find("stderr: started"), std::string::npos) << s.ToString();
}

using SlurmLifecycleTest = ScriptDir;

TEST(SlurmNodeStateTest, DrainDownAndNotRespondingAreOutOfService) {
  auto drained = ParseSlurmNodeState(
      "NodeName=c1 Arch=x86_64 CoresPerSocket=8 State=IDLE+DRAIN ThreadsPerCore=1 Reason=fan failure "
      "[root@2026-12-01T10:00:00]\n");
  ASSERT_TRUE(drained.ok()) << drained.status().ToString();
  EXPECT_FALSE(drained->in_service);
  EXPECT_EQ(drained->detail, "state IDLE+DRAIN, reason 'fan failure [root@2026-12-01T10:00:00]'");
  EXPECT_FALSE(ParseSlurmNodeState("NodeName=c1 State=DOWN Reason=x")->in_service);
  EXPECT_FALSE(ParseSlurmNodeState("NodeName=c1 State=MIXED*")->in_service);
  EXPECT_FALSE(ParseSlurmNodeState("NodeName=c1 State=ALLOCATED+MAINT")->in_service);
  auto idle = ParseSlurmNodeState("NodeName=c1 State=IDLE ThreadsPerCore=1 Reason=(null)");
  ASSERT_TRUE(idle.ok());
  EXPECT_TRUE(idle->in_service);
  EXPECT_EQ(idle->detail, "state IDLE");
  EXPECT_TRUE(ParseSlurmNodeState("NodeName=c1 State=MIXED+PLANNED")->in_service);
  // Free text after the node's State= cannot make it look drained (a comment anyone may set).
  auto commented = ParseSlurmNodeState("NodeName=c1 State=MIXED ThreadsPerCore=1 Comment=x State=DRAIN Reason=y State=DOWN");
  ASSERT_TRUE(commented.ok());
  EXPECT_TRUE(commented->in_service);
  EXPECT_EQ(commented->detail.rfind("state MIXED", 0), 0u) << commented->detail;
  EXPECT_EQ(ParseSlurmNodeState("Node c1 not found").status().code(), StatusCode::kUnavailable);
}

// Through the stand-in scontrol: a node drained by its operator is read and nothing else is done
// to it, whatever its wipe comes to; an idle one is drained.
TEST_F(SlurmLifecycleTest, ADrainedNodeIsOnlyRead) {
  Script("scontrol",
         "d=$(dirname \"$0\"); echo \"scontrol $*\" >> \"$d/calls\"\n"
         "[ \"$2\" = show ] && [ \"$4\" = c1 ] && echo 'NodeName=c1 State=IDLE+DRAIN Reason=fan failure'\n"
         "[ \"$2\" = show ] && [ \"$4\" = c2 ] && echo 'NodeName=c2 State=IDLE Reason=(null)'\nexit 0\n");
  Script("squeue", "exit 0\n");
  LifecycleSpec spec;
  spec.kind = LifecycleKind::kSlurm;
  spec.bin_dir = dir_;
  spec.poll_s = 0.1;
  SlurmLifecycle slurm(spec);
  WaveDrain drain("w", {{"n1", "c1", &slurm}, {"n2", "c2", &slurm}}, [](const std::string&) {});
  std::vector<Status> drained = drain.DrainAll();
  ASSERT_EQ(drained.size(), 2u);
  EXPECT_EQ(drained[0].message(),
            "not wiped: out of service already (slurm node c1: state IDLE+DRAIN, reason 'fan failure'); not drained "
            "or resumed by this wave");
  EXPECT_TRUE(drained[1].ok());
  drain.Settle({{true, ""}, {true, ""}});
  std::string calls = Read("calls");
  EXPECT_NE(calls.find("scontrol -o show node c1\n"), std::string::npos);
  EXPECT_EQ(calls.find("nodename=c1"), std::string::npos) << calls;  // never drained, resumed, reason set
  EXPECT_NE(calls.find("scontrol update nodename=c2 state=drain reason=wipeproof wave w: wipe in progress\n"),
            std::string::npos);
  EXPECT_NE(calls.find("scontrol update nodename=c2 state=resume\n"), std::string::npos);
}

// squeue reports job 7 on the node for its first two calls, then nothing: the drain waits.
TEST_F(SlurmLifecycleTest, DrainSetsTheReasonAndWaitsForRunningJobs) {
  Script("scontrol", "echo \"scontrol $*\" >> \"$(dirname \"$0\")/calls\"\n");
  Script("squeue",
         "d=$(dirname \"$0\"); echo \"squeue $*\" >> \"$d/calls\"; n=$(cat \"$d/n\" 2>/dev/null || echo 0)\n"
         "echo $((n+1)) > \"$d/n\"; [ \"$n\" -lt 2 ] && echo 7; exit 0\n");
  LifecycleSpec spec;
  spec.kind = LifecycleKind::kSlurm;
  spec.bin_dir = dir_;
  spec.poll_s = 0.1;
  SlurmLifecycle slurm(spec);
  ASSERT_TRUE(slurm.Drain("c1", "wipeproof wave w: wipe in progress").ok());
  ASSERT_TRUE(slurm.Resume("c1").ok());
  ASSERT_TRUE(slurm.KeepDrained("c1", "wipe FAILED: wrongLabel").ok());
  const std::string squeue = "squeue -h -w c1 -t RUNNING,COMPLETING,CONFIGURING,SUSPENDED -o %A\n";
  EXPECT_EQ(Read("calls"), "scontrol update nodename=c1 state=drain reason=wipeproof wave w: wipe in progress\n" +
                               squeue + squeue + squeue +
                               "scontrol update nodename=c1 state=resume\n"
                               "scontrol update nodename=c1 state=drain reason=wipe FAILED: wrongLabel\n");
}

// Past the grace period the jobs still running are requeued.
TEST_F(SlurmLifecycleTest, JobsStillRunningAfterTheGracePeriodAreRequeued) {
  Script("scontrol",
         "d=$(dirname \"$0\"); echo \"scontrol $*\" >> \"$d/calls\"; [ \"$1\" = requeue ] && touch \"$d/requeued\"\n"
         "exit 0\n");
  Script("squeue", "[ -e \"$(dirname \"$0\")/requeued\" ] || printf '7\\n9\\n'\n");
  LifecycleSpec spec;
  spec.kind = LifecycleKind::kSlurm;
  spec.bin_dir = dir_;
  spec.grace_s = 0;
  spec.poll_s = 0.1;
  ASSERT_TRUE(SlurmLifecycle(spec).Drain("c1", "r").ok());
  EXPECT_EQ(Read("calls"), "scontrol update nodename=c1 state=drain reason=r\nscontrol requeue 7,9\n");
}

TEST_F(SlurmLifecycleTest, AFailingScontrolIsAnErrorWithItsStderr) {
  Script("scontrol", "echo 'slurm_update error: Invalid node name specified' >&2; exit 1\n");
  LifecycleSpec spec;
  spec.kind = LifecycleKind::kSlurm;
  spec.bin_dir = dir_;
  Status s = SlurmLifecycle(spec).Drain("nope", "r");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("exited with status 1: slurm_update error: Invalid node name specified"),
            std::string::npos)
      << s.ToString();
}

// The least-privilege path: no munge key, a token instead. Every tool gets SLURM_CONF and SLURM_JWT
// (the token read again for each command, `scontrol token`'s "SLURM_JWT=" prefix taken off); a token
// file group or others can read is refused before any tool runs.
// threat-model: T-SLURM-MUNGE-KEY
TEST_F(SlurmLifecycleTest, ATokenAndClientConfigurationReachEveryTool) {
  const std::string record = "echo \"$(basename \"$0\") jwt=$SLURM_JWT conf=$SLURM_CONF\" >> \"$(dirname \"$0\")/calls\"\n";
  Script("scontrol", record + "[ \"$2\" = show ] && echo 'NodeName=c1 State=IDLE Reason=(null)'\nexit 0\n");
  Script("squeue", record + "exit 0\n");
  const std::string token = dir_ + "/slurm.jwt";
  std::ofstream(token) << "SLURM_JWT=eyJhbGciOiJIUzI1NiJ9.first.sig\n";
  ASSERT_EQ(::chmod(token.c_str(), 0600), 0);
  LifecycleSpec spec;
  spec.kind = LifecycleKind::kSlurm;
  spec.bin_dir = dir_;
  spec.poll_s = 0.1;
  spec.slurm_conf = dir_ + "/client.conf";
  spec.token_file = token;
  SlurmLifecycle slurm(spec);
  ASSERT_TRUE(slurm.ReadState("c1").ok());
  std::ofstream(token) << "eyJhbGciOiJIUzI1NiJ9.refreshed.sig";  // the controller's refresh job
  ASSERT_TRUE(slurm.Drain("c1", "r").ok());
  const std::string conf = " conf=" + dir_ + "/client.conf\n";
  EXPECT_EQ(Read("calls"), "scontrol jwt=eyJhbGciOiJIUzI1NiJ9.first.sig" + conf +
                               "scontrol jwt=eyJhbGciOiJIUzI1NiJ9.refreshed.sig" + conf +
                               "squeue jwt=eyJhbGciOiJIUzI1NiJ9.refreshed.sig" + conf);
  ASSERT_EQ(::chmod(token.c_str(), 0644), 0);
  Status readable = slurm.Resume("c1");
  EXPECT_EQ(readable.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(readable.message().find("group or others can read or write it: it is a credential"), std::string::npos)
      << readable.ToString();
  // A symbolic link in its place (to a file the service's user may read) is refused, not followed.
  ASSERT_EQ(::chmod(token.c_str(), 0600), 0);
  ASSERT_EQ(::rename(token.c_str(), (token + ".real").c_str()), 0);
  ASSERT_EQ(::symlink((token + ".real").c_str(), token.c_str()), 0);
  Status linked = slurm.Resume("c1");
  EXPECT_EQ(linked.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(linked.message().find("a symbolic link"), std::string::npos) << linked.ToString();
  // A FIFO in its place fails at once instead of blocking the wave.
  ASSERT_EQ(::unlink(token.c_str()), 0);
  ASSERT_EQ(::mkfifo(token.c_str(), 0600), 0);
  EXPECT_EQ(slurm.Resume("c1").code(), StatusCode::kInvalidArgument);
  ASSERT_EQ(::unlink(token.c_str()), 0);
  EXPECT_EQ(slurm.Resume("c1").code(), StatusCode::kNotFound);
  EXPECT_EQ(Read("calls").find("state=resume"), std::string::npos);  // no tool ran without its token
}

// scontrol from a lifecycle's bin_dir and slurm_conf run or are read with the challenger's rights:
// one another user could change is refused before any tool runs.
// threat-model: T-HOOK-WRITABLE
TEST_F(SlurmLifecycleTest, ToolsAndConfigurationOthersCouldChangeAreRefused) {
  Script("scontrol", "echo called >> \"$(dirname \"$0\")/calls\"\necho 'NodeName=c1 State=IDLE Reason=(null)'\n");
  const std::string conf = dir_ + "/slurm.conf";
  std::ofstream(conf) << "ClusterName=test\n";
  ASSERT_EQ(::chmod(conf.c_str(), 0644), 0);
  LifecycleSpec spec;
  spec.kind = LifecycleKind::kSlurm;
  spec.bin_dir = dir_;
  spec.slurm_conf = conf;
  SlurmLifecycle slurm(spec);
  ASSERT_TRUE(slurm.ReadState("c1").ok());
  ASSERT_EQ(::chmod((dir_ + "/scontrol").c_str(), 0777), 0);
  const Status tool = slurm.ReadState("c1").status();
  EXPECT_EQ(tool.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(tool.message().find("slurm bin_dir's " + dir_ + "/scontrol is writable by group or others (mode 0777)"),
            std::string::npos)
      << tool.ToString();
  ASSERT_EQ(::chmod((dir_ + "/scontrol").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(conf.c_str(), 0664), 0);
  const Status config = slurm.ReadState("c1").status();
  EXPECT_EQ(config.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(config.message().find("slurm_conf " + conf + " is writable by group or others (mode 0664)"),
            std::string::npos)
      << config.ToString();
  EXPECT_EQ(Read("calls"), "called\n");  // the refused reads never ran scontrol
}

using KubernetesLifecycleTest = ScriptDir;

TEST(KubernetesNodeStateTest, CordonedAnnotatedOrNotReadyIsOutOfService) {
  EXPECT_TRUE(ParseKubernetesNodeState("\n\nnvidia.com/gpu \n").in_service);
  EXPECT_EQ(ParseKubernetesNodeState("\n\n").detail, "schedulable");
  SchedulerState cordoned = ParseKubernetesNodeState("true\n\nnode.kubernetes.io/unschedulable \n");
  EXPECT_FALSE(cordoned.in_service);
  EXPECT_EQ(cordoned.detail, "cordoned (spec.unschedulable), taint node.kubernetes.io/unschedulable");
  SchedulerState ours = ParseKubernetesNodeState("true\nwipeproof wave w: wipe FAILED: lateFill\n\n");
  EXPECT_FALSE(ours.in_service);
  EXPECT_EQ(ours.detail,
            "cordoned (spec.unschedulable), wipeproof.io/drain-reason 'wipeproof wave w: wipe FAILED: lateFill'");
  // The annotation alone (a node uncordoned by hand keeps it) takes nothing out of service.
  SchedulerState stale = ParseKubernetesNodeState("\nwipeproof wave w: wipe FAILED: lateFill\n\n");
  EXPECT_TRUE(stale.in_service);
  EXPECT_EQ(stale.detail, "schedulable");
  EXPECT_FALSE(ParseKubernetesNodeState("\n\nnode.kubernetes.io/not-ready \n").in_service);
}

TEST_F(KubernetesLifecycleTest, ReadsTheNodesStateThroughKubectl) {
  // printf, not echo: sh's echo would turn the jsonpath's "\n" into a newline.
  Script("kubectl", "printf '%s\\n' \"kubectl $*\" >> \"$(dirname \"$0\")/calls\"\nprintf 'true\\n\\n'\n");
  LifecycleSpec spec;
  spec.kind = LifecycleKind::kKubernetes;
  spec.bin_dir = dir_;
  auto state = KubernetesLifecycle(spec).ReadState("gpu-1");
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_FALSE(state->in_service);
  EXPECT_EQ(state->detail, "cordoned (spec.unschedulable)");
  EXPECT_EQ(Read("calls"),
            "kubectl get node gpu-1 -o jsonpath={.spec.unschedulable}{\"\\n\"}"
            "{.metadata.annotations.wipeproof\\.io/drain-reason}{\"\\n\"}"
            "{range .spec.taints[*]}{.key}{\" \"}{end}\n");
}

// A kubeconfig runs code as the challenger's user (its `exec` users): one another user could change
// is refused before kubectl runs.
// threat-model: T-HOOK-WRITABLE
TEST_F(KubernetesLifecycleTest, AKubeconfigOthersCouldChangeIsRefused) {
  Script("kubectl", "echo called >> \"$(dirname \"$0\")/calls\"\nprintf '\\n\\n\\n'\n");
  const std::string kubeconfig = dir_ + "/kubeconfig";
  std::ofstream(kubeconfig) << "apiVersion: v1\n";
  ASSERT_EQ(::chmod(kubeconfig.c_str(), 0600), 0);
  LifecycleSpec spec;
  spec.kind = LifecycleKind::kKubernetes;
  spec.bin_dir = dir_;
  spec.kubeconfig = kubeconfig;
  KubernetesLifecycle kube(spec);
  auto first = kube.ReadState("gpu-1");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(::chmod(kubeconfig.c_str(), 0660), 0);
  const Status refused = kube.ReadState("gpu-1").status();
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(refused.message().find("kubeconfig " + kubeconfig + " is writable by group or others (mode 0660)"),
            std::string::npos)
      << refused.ToString();
  EXPECT_EQ(Read("calls"), "called\n");
}

TEST_F(KubernetesLifecycleTest, CordonsDrainsAndUncordonsThroughKubectl) {
  Script("kubectl", "echo \"kubectl $*\" >> \"$(dirname \"$0\")/calls\"\n");
  LifecycleSpec spec;
  spec.kind = LifecycleKind::kKubernetes;
  spec.bin_dir = dir_;
  spec.kubeconfig = "/etc/wipeproof/kubeconfig";
  spec.grace_s = 300;
  KubernetesLifecycle k8s(spec);
  ASSERT_TRUE(k8s.Drain("gpu-1", "wipe in progress").ok());
  ASSERT_TRUE(k8s.Resume("gpu-1").ok());
  ASSERT_TRUE(k8s.KeepDrained("gpu-1", "wipe FAILED: lateFill").ok());
  const std::string k = "kubectl --kubeconfig /etc/wipeproof/kubeconfig ";
  EXPECT_EQ(Read("calls"), k + "annotate node gpu-1 --overwrite wipeproof.io/drain-reason=wipe in progress\n" + k +
                               "drain gpu-1 --ignore-daemonsets --delete-emptydir-data --timeout=300s\n" + k +
                               "uncordon gpu-1\n" + k + "annotate node gpu-1 wipeproof.io/drain-reason-\n" + k +
                               "cordon gpu-1\n" + k +
                               "annotate node gpu-1 --overwrite wipeproof.io/drain-reason=wipe FAILED: lateFill\n");
}

// ---- stop timeouts

TEST(LifecycleLongestTest, EachKindsStepsAtTheirLongest) {
  LifecycleSpec spec;
  spec.grace_s = 600;
  spec.poll_s = 2;
  spec.command_timeout_s = 60;
  EXPECT_EQ(LifecycleLongestS(spec), 0);  // kind none
  spec.kind = LifecycleKind::kSlurm;
  EXPECT_EQ(LifecycleLongestS(spec), 600 + 60 + 2 + 5 * 60);
  spec.kind = LifecycleKind::kKubernetes;
  EXPECT_EQ(LifecycleLongestS(spec), 600 + 5 * 60);
  spec.kind = LifecycleKind::kCommand;
  EXPECT_EQ(LifecycleLongestS(spec), 600 + 3 * 60);
}

std::string SourceFile(const std::string& path) {
  std::ifstream in(std::string(WIPEPROOF_SOURCE_DIR) + "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The number after `key` in `text` ("TimeoutStopSec=55min", "terminationGracePeriodSeconds: 3300")
// in seconds: a bare number is seconds, "min" and "s" as systemd reads them; -1 when absent.
double SecondsAfter(const std::string& text, const std::string& key) {
  const size_t at = text.find("\n" + key);
  if (at == std::string::npos) {
    const size_t indented = text.find(key);
    if (indented == std::string::npos) return -1;
    return SecondsAfter("\n" + text.substr(indented), key);
  }
  size_t i = at + 1 + key.size();
  while (i < text.size() && (text[i] == ' ' || text[i] == '=' || text[i] == ':')) ++i;
  size_t end = i;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  const double n = std::stod(text.substr(i, end - i));
  if (text.compare(end, 3, "min") == 0) return n * 60;
  return n;
}

// The longest run of the shipped example (deploy/config/inventory.json: one 16 GiB node, Slurm,
// grace 600 s, the built-in profile): drain, the session timeout at its largest R' = 2R, resume.
// The challenger's systemd TimeoutStopSec and its StatefulSet's terminationGracePeriodSeconds must
// cover it (or a stop kills serve mid-run: orders without verdicts, nodes left drained "in
// progress"), and are no more than 10 minutes above it.
TEST(StopTimeoutTest, TheShippedStopTimeoutsCoverTheShippedLongestRun) {
  std::string text = SourceFile("deploy/config/inventory.json");
  ASSERT_FALSE(text.empty());
  auto json = nlohmann::json::parse(text);
  for (auto& node : json["nodes"]) {  // the key files are the operator's: a stand-in key
    node.erase("public_key_file");
    node.erase("certificate_file");
    node["public_key"] = std::string(64, '0');
  }
  auto inventory = ParseInventoryJson(json.dump(), "");
  ASSERT_TRUE(inventory.ok()) << inventory.status().ToString();
  TcpSessionOptions options = testing::TcpTestOptions();
  double longest_s = 0;
  for (const Wave& wave : inventory->waves) {
    WavePlans plans = PlanWave(*inventory, wave, DefaultProfile(), *options.clock);
    ASSERT_TRUE(plans.whole);
    double session_s = 0, lifecycle_s = 0;
    for (size_t i = 0; i < plans.plans.size(); ++i) {
      const SessionPlan& plan = *plans.plans[i];
      session_s = std::max(session_s, SessionTimeoutUs(plan, 2 * plan.profile.rounds) / 1e6);
      auto lifecycle = inventory->LifecycleOf(wave.nodes[i]);
      if (lifecycle) lifecycle_s = std::max(lifecycle_s, LifecycleLongestS(*lifecycle));
    }
    longest_s = std::max(longest_s, session_s + lifecycle_s);
  }
  // The figure docs/operations.md "Stopping serve" works through: Slurm 600 + 60 + 2 + 5 x 60 = 962 s,
  // session 2318.8 (fill 2108 s and its tenth) + 64 x 1.05 + 16 x 11.05 + 60 = 2622.8 s.
  EXPECT_NEAR(longest_s, 3584.8, 0.5);
  const double systemd_s = SecondsAfter(SourceFile("deploy/systemd/wipeproof-challenger.service"), "TimeoutStopSec");
  const double kubernetes_s = SecondsAfter(
      SourceFile("deploy/kubernetes/authority-cluster/challenger-statefulset.yaml"), "terminationGracePeriodSeconds");
  for (double stop_s : {systemd_s, kubernetes_s}) {
    EXPECT_GE(stop_s, longest_s);
    EXPECT_LE(stop_s, longest_s + 600);
  }
}

// ---- sharding waves over challengers

TEST(WaveShardTest, EveryWaveHasExactlyOneShard) {
  Inventory inventory;
  for (int k = 0; k < 7; ++k) inventory.waves.push_back(Wave{"w" + std::to_string(k), {}, 60, 0, true});
  std::vector<int> owners(7, 0);
  for (uint32_t i = 0; i < 3; ++i) {
    auto shard = ParseWaveShard(std::to_string(i) + "/3");
    ASSERT_TRUE(shard.ok());
    for (const Wave* w : WavesOfShard(inventory, *shard)) ++owners[std::stoi(w->name.substr(1))];
  }
  EXPECT_EQ(owners, std::vector<int>(7, 1));
  auto second = WavesOfShard(inventory, *ParseWaveShard("1/3"));
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0]->name, "w1");
  EXPECT_EQ(second[1]->name, "w4");
  EXPECT_EQ(WavesOfShard(inventory, *ParseWaveShard("")).size(), 7u);
  for (const char* bad : {"3/3", "1", "a/2", "0/0", "-1/2", "0/2000"}) {
    EXPECT_EQ(ParseWaveShard(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

// ---- RunProcess

TEST(RunProcessTest, ExitCodeOutputAndErrors) {
  auto r = RunProcess({"/bin/sh", "-c", "echo out; echo err >&2; exit 5"}, 10'000'000);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 5);
  EXPECT_EQ(r->stdout_text, "out\n");
  EXPECT_EQ(r->stderr_text, "err\n");
  EXPECT_EQ(RunProcess({}, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RunProcess({"wipeproof-no-such-program"}, 1'000'000).status().code(), StatusCode::kNotFound);
  // No shell: the argument is one argv entry, never interpreted.
  auto echo = RunProcessChecked({"/bin/echo", "a; rm -rf x", "$HOME"}, 10'000'000);
  ASSERT_TRUE(echo.ok());
  EXPECT_EQ(*echo, "a; rm -rf x $HOME\n");
  // Output past the cap is dropped, and the program is not blocked by it.
  auto big = RunProcess({"/bin/sh", "-c", "head -c 200000 /dev/zero"}, 10'000'000);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->stdout_text.size(), kMaxProcessOutputBytes);
  EXPECT_EQ(big->exit_code, 0);
}

TEST(RunProcessTest, EnvironmentEntriesAreAddedOrReplaceTheirName) {
  ASSERT_EQ(::setenv("WP_TEST_REPLACED", "parent", 1), 0);
  auto r = RunProcessChecked({"/bin/sh", "-c", "printf '%s|%s|%s' \"$WP_TEST_ADDED\" \"$WP_TEST_REPLACED\" \"$HOME\""},
                             10'000'000, {"WP_TEST_ADDED=a b", "WP_TEST_REPLACED=child"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, std::string("a b|child|") + (std::getenv("HOME") ? std::getenv("HOME") : ""));
  EXPECT_EQ(RunProcess({"/bin/true"}, 10'000'000, {"NO_EQUALS"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RunProcess({"/bin/true"}, 10'000'000, {"=x"}).status().code(), StatusCode::kInvalidArgument);
  ::unsetenv("WP_TEST_REPLACED");
}

}  // namespace
}  // namespace wipeproof
