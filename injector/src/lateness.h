/* Samples of (actual release - target release) for LLAMP_INJECT_STATS. */
#ifndef LLAMP_INJECT_LATENESS_H
#define LLAMP_INJECT_LATENESS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct llamp_lateness {
    int64_t *samples;
    size_t size;
    size_t capacity;
    uint64_t dropped; /* samples not kept (memory cap or allocation failure) */
    uint64_t count;   /* every sample, kept or not */
    int64_t total_ns; /* their sum: the release delay the injector added beyond delta L */
} llamp_lateness;

void llamp_lateness_init(llamp_lateness *l);
void llamp_lateness_free(llamp_lateness *l);
void llamp_lateness_add(llamp_lateness *l, int64_t lateness_ns);

/* q in [0,1] (nearest rank); sorts the samples.  0 when there are none. */
int64_t llamp_lateness_quantile(llamp_lateness *l, double q);

/* Mean over every sample (kept or not); 0 when there are none. */
int64_t llamp_lateness_mean(const llamp_lateness *l);

#ifdef __cplusplus
}
#endif

#endif
