// What the authority's signed inventory declares of a node's compute (challenger/fleet/inventory.h
// reads it: the node's cpu_compressions_per_s plus its devices' models' label_rates): the fastest
// rate at which the whole node can compute labels, which turns the work a fill provably did into
// time (compute_statement.h).
//
// Units: BLAKE3 compressions per second. Thread-safety: a value.
#pragma once

#include <string>

namespace wipeproof {

struct DeclaredCompute {
  double compressions_per_s = 0;  // the node's CPUs plus every non-host device; 0 when not declared
  std::string problem;            // why not, naming what is missing ("" when declared)
};

}  // namespace wipeproof
