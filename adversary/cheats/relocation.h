// Adversary 3: keeps some chunks' labels in memory the order did not put them in, so that the
// planned memory they leave is free for something else, and answers them from there.
//   RelocateToHost (DeviationKind::kRelocate): moves the last Deviation::relocate_chunks chunks of
//     the last planned device to host memory: outside the plan when host is not planned (room:
//     Deviation::host_free_bytes), else into the planned host region's spare capacity, overwriting
//     as many of the host's own chunks as there is no room for (those answer zeros).
//   RelocateToReserve (DeviationKind::kRelocateToReserve, 3c): moves relocate_chunks contiguous
//     chunks of device 0 into the allowed reserve (capacity - planned) of device 1, as many as fit:
//     every label answers, while device 0 keeps that much of its memory unwiped.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "adversary/cheats/cheat.h"
#include "adversary/deviation.h"

namespace wipeproof::adversary {

// What both relocations share: the moved chunks' labels, and answering from them.
class Relocation : public Cheat {
 public:
  bool AnswerUnstoredLabel(size_t d, uint64_t g, uint8_t* out) override;
  void OnSessionEnd() override { moved_.clear(); }

 protected:
  Relocation(const Deviation& deviation, CheatTools tools) : deviation_(deviation), tools_(tools) {}
  // Copies chunk `c` of device `from` to other memory (device `to`'s, when it is a planned device:
  // < devices) and marks it kRelocated.
  void Move(size_t from, uint64_t c, size_t to);

  const Deviation& deviation_;
  CheatTools tools_;

 private:
  std::map<std::pair<size_t, uint64_t>, std::vector<uint8_t>> moved_;  // (device, chunk) -> its labels
};

class RelocateToHost final : public Relocation {
 public:
  RelocateToHost(const Deviation& deviation, CheatTools tools) : Relocation(deviation, tools) {}
  void OnFilled() override;
};

class RelocateToReserve final : public Relocation {
 public:
  RelocateToReserve(const Deviation& deviation, CheatTools tools) : Relocation(deviation, tools) {}
  void OnFilled() override;
};

}  // namespace wipeproof::adversary
