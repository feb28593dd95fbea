#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "llamp_inject.h"

/* While the application itself polls UCX (it is inside MPI), the thread
 * leaves arrivals to it and wakes when it has not polled for this long: the
 * bound on how late an arrival just after the application left MPI is
 * stamped.  Shorter costs the polling application a timer syscall more
 * often (every half period); see docs/injector.md. */
#define LLAMP_DEFAULT_WATCH_PERIOD_NS 200000

static llamp_inject_config settings = {0, 0, LLAMP_DEFAULT_WATCH_PERIOD_NS, 1};

int llamp_inject_config_parse(const char *delta_l, const char *stats, const char *watch_period,
                              const char *arrival, llamp_inject_config *out, char *err,
                              size_t err_len)
{
    char why[160];
    llamp_inject_config c = {0, 0, LLAMP_DEFAULT_WATCH_PERIOD_NS, 1};

    if (delta_l != NULL && *delta_l != '\0' &&
        llamp_parse_duration_ns(delta_l, &c.delta_ns, why, sizeof(why)) != 0) {
        snprintf(err, err_len,
                 "LLAMP_DELTA_L=%s is not a duration: %s (examples: 10us, 1.5ms, 800ns, 10 = 10us)",
                 delta_l, why);
        return -1;
    }
    if (stats != NULL && *stats != '\0') {
        if (strcmp(stats, "1") == 0) {
            c.stats = 1;
        } else if (strcmp(stats, "0") != 0) {
            snprintf(err, err_len, "LLAMP_INJECT_STATS=%s: use 1 (print statistics) or 0", stats);
            return -1;
        }
    }
    if (watch_period != NULL && *watch_period != '\0') {
        if (llamp_parse_duration_ns(watch_period, &c.watch_period_ns, why, sizeof(why)) != 0) {
            snprintf(err, err_len, "LLAMP_INJECT_WATCH_PERIOD=%s is not a duration: %s",
                     watch_period, why);
            return -1;
        }
        if (c.watch_period_ns < 1000) {
            snprintf(err, err_len, "LLAMP_INJECT_WATCH_PERIOD=%s is below 1us", watch_period);
            return -1;
        }
    }
    if (arrival != NULL && *arrival != '\0') {
        /* "seen": ignore the senders' stamps and take the arrival when this
         * process (or its thread) first polls the message, as injectors
         * without a common clock must; for comparisons and clusters */
        if (strcmp(arrival, "sent") == 0) {
            c.arrival_at_send = 1;
        } else if (strcmp(arrival, "seen") == 0) {
            c.arrival_at_send = 0;
        } else {
            snprintf(err, err_len, "LLAMP_INJECT_ARRIVAL=%s: use sent (default) or seen", arrival);
            return -1;
        }
    }
    *out = c;
    return 0;
}

int llamp_inject_configure(char *err, size_t err_len)
{
    return llamp_inject_config_parse(getenv("LLAMP_DELTA_L"), getenv("LLAMP_INJECT_STATS"),
                                     getenv("LLAMP_INJECT_WATCH_PERIOD"),
                                     getenv("LLAMP_INJECT_ARRIVAL"), &settings, err, err_len);
}

int llamp_inject_active(void)
{
    return settings.delta_ns > 0;
}

int64_t llamp_inject_delta_ns(void)
{
    return settings.delta_ns;
}

const llamp_inject_config *llamp_inject_settings(void)
{
    return &settings;
}
