#include "adversary/cheats/make_cheat.h"

#include "adversary/cheats/answer_cheats.h"
#include "adversary/cheats/borrower.h"
#include "adversary/cheats/connection_faults.h"
#include "adversary/cheats/dedup.h"
#include "adversary/cheats/disconnect_on_hidden.h"
#include "adversary/cheats/early_fill_report.h"
#include "adversary/cheats/fill_message_faults.h"
#include "adversary/cheats/hidden_chunks.h"
#include "adversary/cheats/hostile_texts.h"
#include "adversary/cheats/partial_chunk_probe.h"
#include "adversary/cheats/relocation.h"
#include "adversary/cheats/timing_faults.h"
#include "adversary/cheats/transcript_cheats.h"
#include "adversary/cheats/under_fill.h"
#include "adversary/cheats/wave_shell_game.h"
#include "adversary/cheats/wrong_key_material.h"

namespace wipeproof::adversary {

namespace {

class NoCheat final : public Cheat {};

}  // namespace

std::unique_ptr<Cheat> MakeCheat(const Deviation& deviation, CheatTools tools) {
  switch (deviation.kind) {
    case DeviationKind::kNone:
      return std::make_unique<NoCheat>();
    case DeviationKind::kHideChunks:
      return std::make_unique<HideChunks>(deviation, tools);
    case DeviationKind::kRelocate:
      return std::make_unique<RelocateToHost>(deviation, tools);
    case DeviationKind::kRelocateToReserve:
      return std::make_unique<RelocateToReserve>(deviation, tools);
    case DeviationKind::kUnderfillHeldByOthers:
      return std::make_unique<UnderFill>(deviation, tools, UnderFill::Excuse::kHeldByOthers);
    case DeviationKind::kUnderfillInflatedReserve:
      return std::make_unique<UnderFill>(deviation, tools, UnderFill::Excuse::kLargerReserve);
    case DeviationKind::kDedup:
      return std::make_unique<Dedup>(deviation, tools);
    case DeviationKind::kWrongSeed:
      return std::make_unique<WrongSeed>();
    case DeviationKind::kWrongFormat:
      return std::make_unique<WrongFormat>();
    case DeviationKind::kWrongChunkLabels:
      return std::make_unique<WrongChunkLabels>();
    case DeviationKind::kReplayAnswer:
      return std::make_unique<ReplayAnswer>();
    case DeviationKind::kOtherRoundIndices:
      return std::make_unique<AnswerOtherRoundIndices>();
    case DeviationKind::kReorderedAnswer:
      return std::make_unique<ReorderAnswer>();
    case DeviationKind::kShortAnswer:
      return std::make_unique<ShortenAnswer>();
    case DeviationKind::kReusedTranscriptSignature:
      return std::make_unique<ReuseTranscriptSignature>(tools);
    case DeviationKind::kEarlyFillReport:
      return std::make_unique<EarlyFillReport>(deviation, tools);
    case DeviationKind::kDisconnectOnHidden:
      return std::make_unique<DisconnectOnHidden>(deviation, tools);
    case DeviationKind::kDropAfterRounds:
      return std::make_unique<WaveShellGame>(deviation, tools);
    case DeviationKind::kBorrowBetweenRounds:
      return std::make_unique<Borrower>(deviation, tools);
    case DeviationKind::kWithholdNotice:
      return std::make_unique<WithholdLastNotice>();
    case DeviationKind::kLateNoticeDiffers:
      return std::make_unique<LateDifferingNotice>();
    case DeviationKind::kPartialChunkProbe:
      return std::make_unique<PartialChunkProbe>(tools);
    case DeviationKind::kWrongRoundIndex:
      return std::make_unique<MislabelRoundIndex>();
    case DeviationKind::kTamperedReport:
      return std::make_unique<TamperReport>();
    case DeviationKind::kTranscriptMismatch:
      return std::make_unique<FlipTranscriptDigest>();
    case DeviationKind::kLateFill:
      return std::make_unique<LateFill>(deviation, tools);
    case DeviationKind::kLateRound:
      return std::make_unique<LateRound>(deviation, tools);
    case DeviationKind::kRefuseOrder:
      return std::make_unique<RefuseOrder>(deviation);
    case DeviationKind::kAlwaysBusy:
      return std::make_unique<AlwaysBusy>();
    case DeviationKind::kDisconnectMidFill:
      return std::make_unique<DisconnectMidFill>(deviation);
    case DeviationKind::kBusyAfterRefusedRound:
      return std::make_unique<BusyAfterRefusedRound>();
    case DeviationKind::kHugeRefusal:
      return std::make_unique<HugeOrderRefusal>(deviation, HugeOrderRefusal::Form::kStatus);
    case DeviationKind::kHugeException:
      return std::make_unique<HugeOrderRefusal>(deviation, HugeOrderRefusal::Form::kException);
    case DeviationKind::kHugeDisconnect:
      return std::make_unique<HugeOrderRefusal>(deviation, HugeOrderRefusal::Form::kDisconnect);
    case DeviationKind::kHugeRoundError:
      return std::make_unique<HugeRoundError>(deviation);
    case DeviationKind::kHugeFinishError:
      return std::make_unique<HugeFinishError>(deviation);
  }
  return std::make_unique<NoCheat>();
}

}  // namespace wipeproof::adversary
