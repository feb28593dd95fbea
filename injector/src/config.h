/* Injector settings read from the environment once, in MPI_Init. */
#ifndef LLAMP_INJECT_CONFIG_H
#define LLAMP_INJECT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

typedef struct llamp_inject_config {
    int64_t delta_ns;        /* LLAMP_DELTA_L; 0 = injection off */
    int stats;               /* LLAMP_INJECT_STATS=1 */
    int64_t watch_period_ns; /* LLAMP_INJECT_WATCH_PERIOD, see docs/injector.md */
    int arrival_at_send;     /* LLAMP_INJECT_ARRIVAL=sent (1, default) or seen (0) */
} llamp_inject_config;

/* Parses the four variables from getenv-like lookup; 0 or -1 + message. */
int llamp_inject_config_parse(const char *delta_l, const char *stats, const char *watch_period,
                              const char *arrival, llamp_inject_config *out, char *err,
                              size_t err_len);

/* The process-wide settings set by llamp_inject_configure(). */
const llamp_inject_config *llamp_inject_settings(void);

#endif
