/*
 * The cache-line hand-off probe, written once for llamp-coreprobe (core_probe.cpp) and the
 * runtime timer's probe inside a job (runtime_timer.c): two parties, on two CPUs, pass a counter
 * back and forth through one cache line (release store, acquire spin). One warm-up block (a vCPU
 * that was idle takes time to run), then `blocks` timed blocks of `round_trips` round trips; a
 * block's one-way time is its time / (2 x round trips). The median block is the figure: it
 * ignores the blocks a preemption spoils. docs/campaign.md, "Core hand-off".
 */
#ifndef LLAMP_HAND_OFF_H
#define LLAMP_HAND_OFF_H

#include <stdint.h>

#ifdef __cplusplus
#define LLAMP_HAND_OFF_ALIGN alignas(128)
extern "C" {
#else
#define LLAMP_HAND_OFF_ALIGN _Alignas(128)
#endif

/* One line; place it alone in 128 bytes and outside any stack (CPUs fetch lines in adjacent pairs,
 * and a neighbour a party writes would be timed too: a line on the pinging thread's stack measured
 * 50 ns where a static one measures 27 ns). Zero it before a probe. */
typedef struct llamp_hand_off_line {
  LLAMP_HAND_OFF_ALIGN int64_t counter; /* accessed atomically only */
} llamp_hand_off_line;

/* The pinging party. Fills block_ns[0..blocks) with the sorted one-way time per block and returns
 * the median, or returns -1 when the other party does not answer within timeout_ns. */
double llamp_hand_off_ping(llamp_hand_off_line *line, int blocks, int round_trips, int64_t timeout_ns,
                           double *block_ns);

/* The answering party: blocks + 1 blocks of round_trips answers; -1 when the pinging party stops
 * for timeout_ns, else 0. */
int llamp_hand_off_pong(llamp_hand_off_line *line, int blocks, int round_trips, int64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif
