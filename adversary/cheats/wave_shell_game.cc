#include "adversary/cheats/wave_shell_game.h"

#include "adversary/cheats/chunk_drops.h"

namespace wipeproof::adversary {

void WaveShellGame::OnRoundDone(const Challenge& /*asked*/, proto::RoundAnswer::Reader /*answer*/) {
  if (++rounds_answered_ != deviation_.round) return;
  DropRandomChunks(tools_.held, deviation_.hidden_fraction, ChunkState::kHidden, tools_.rng);
  if (deviation_.on_drop) deviation_.on_drop();
}

}  // namespace wipeproof::adversary
