#include "duration.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* One hour: longer injected latencies are certainly a typo (e.g. a value
 * meant in ns given without a suffix, which means us). */
#define LLAMP_MAX_DURATION_NS (3600LL * 1000000000LL)

int llamp_parse_duration_ns(const char *text, int64_t *ns, char *err, size_t err_len)
{
    const char *p = text;
    long double value = 0.0L;
    long double scale = 1.0L;
    int digits = 0;

    if (text == NULL || *text == '\0') {
        snprintf(err, err_len, "empty duration");
        return -1;
    }
    while (isdigit((unsigned char)*p)) {
        value = value * 10.0L + (*p - '0');
        ++digits;
        ++p;
    }
    if (*p == '.') {
        ++p;
        long double place = 0.1L;
        while (isdigit((unsigned char)*p)) {
            value += place * (*p - '0');
            place /= 10.0L;
            ++digits;
            ++p;
        }
    }
    if (digits == 0) {
        snprintf(err, err_len, "'%s' does not start with a non-negative number", text);
        return -1;
    }
    if (*p == '\0' || strcmp(p, "us") == 0) {
        scale = 1e3L;
    } else if (strcmp(p, "ns") == 0) {
        scale = 1.0L;
    } else if (strcmp(p, "ms") == 0) {
        scale = 1e6L;
    } else if (strcmp(p, "s") == 0) {
        scale = 1e9L;
    } else {
        snprintf(err, err_len, "'%s' has unknown unit '%s' (use ns, us, ms or s; none means us)",
                 text, p);
        return -1;
    }
    long double total = value * scale + 0.5L;
    if (total > (long double)LLAMP_MAX_DURATION_NS) {
        snprintf(err, err_len, "'%s' is longer than one hour", text);
        return -1;
    }
    *ns = (int64_t)total;
    return 0;
}
