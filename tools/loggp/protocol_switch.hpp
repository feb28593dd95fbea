#pragma once
// Finds the eager/rendezvous threshold S by asking, per size, whether a send completes before
// its receive is posted (probes.hpp: send_completes_unmatched). Powers of two locate the switch,
// bisection then pins it to the byte. S is reported with LogGOPSim's meaning: the largest size sent eagerly
// (a send of more than S bytes uses rendezvous), which is what the graph engines read.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "probes.hpp"

namespace llamp::loggp {

struct ProtocolProbe {
  std::size_t bytes = 0;
  int completed_unmatched = 0;  // of `reps` tries, how many sends completed with no receive posted
  int tries = 0;
  bool rendezvous = false;  // completed in fewer than half of the tries
};

struct ProtocolSwitch {
  std::vector<ProtocolProbe> probes;  // every size classified, in the order probed
  std::uint64_t S_bytes = 0;          // largest eager size
  bool observed = false;              // false: every size up to the largest probed was eager
  int test_calls = 0;                 // MPI_Test calls a send had to complete in
};

// `sizes` ascending; collective over both ranks.
ProtocolSwitch find_protocol_switch(const ProbeContext& ctx, const std::vector<std::size_t>& sizes, int reps,
                                    int test_calls);

}  // namespace llamp::loggp
