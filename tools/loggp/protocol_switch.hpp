#pragma once
// Finds the eager/rendezvous threshold S by asking, per size, whether MPI_Send waits for a late
// receiver (probes.hpp: send_wait_increase). Powers of two locate the switch, bisection then
// pins it to the byte. S is reported with LogGOPSim's meaning: the largest size sent eagerly
// (a send of more than S bytes uses rendezvous), which is what the graph engines read.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "probes.hpp"

namespace llamp::loggp {

struct ProtocolProbe {
  std::size_t bytes = 0;
  double send_wait_increase_ns = 0;  // growth of the send time when the receiver is later
  bool rendezvous = false;
};

struct ProtocolSwitch {
  std::vector<ProtocolProbe> probes;  // every size classified, in the order probed
  std::uint64_t S_bytes = 0;          // largest eager size
  bool observed = false;              // false: every size up to the largest probed was eager
  double extra_delay_ns = 0;          // how much later the receiver came in the second variant
};

// `sizes` ascending; collective over both ranks. A size counts as rendezvous when its send time
// grows by more than half of `extra_delay_ns`.
ProtocolSwitch find_protocol_switch(const ProbeContext& ctx, const std::vector<std::size_t>& sizes,
                                    int reps, double extra_delay_ns);

}  // namespace llamp::loggp
