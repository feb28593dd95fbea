#include "duration.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* One hour: longer injected latencies are certainly a typo (e.g. a value
 * meant in ns given without a suffix, which means us). */
#define LLAMP_MAX_DURATION_NS (3600LL * 1000000000LL)

/* Fraction digits are kept to 10^-12 of the unit: below 1 ns even in seconds. */
#define LLAMP_FRACTION_ONE 1000000000000ULL

/* Integer arithmetic only: this runs in MPI_Init of every patched-MPICH run.
 * The parse in long double it replaces put the process's x87 unit in use,
 * and app_halo3d then ran ~5 % slower at LLAMP_DELTA_L=0ns than without the
 * variable on the 2-vCPU VM (docs/injector.md, "x87 state").  A run at
 * ΔL = 0 must be the run without the variable. */
int llamp_parse_duration_ns(const char *text, int64_t *ns, char *err, size_t err_len)
{
    const char *p = text;
    /* the number is whole + fraction / LLAMP_FRACTION_ONE units */
    unsigned long long whole = 0, fraction = 0, place = LLAMP_FRACTION_ONE;
    int digits = 0, too_long = 0;
    unsigned long long unit_ns;

    if (text == NULL || *text == '\0') {
        snprintf(err, err_len, "empty duration");
        return -1;
    }
    while (isdigit((unsigned char)*p)) {
        if (whole > (unsigned long long)LLAMP_MAX_DURATION_NS) {
            too_long = 1; /* even in ns; stop growing before it overflows */
        } else {
            whole = whole * 10 + (unsigned long long)(*p - '0');
        }
        ++digits;
        ++p;
    }
    if (*p == '.') {
        ++p;
        while (isdigit((unsigned char)*p)) {
            if (place > 1) {
                place /= 10;
                fraction += place * (unsigned long long)(*p - '0');
            }
            ++digits;
            ++p;
        }
    }
    if (digits == 0) {
        snprintf(err, err_len, "'%s' does not start with a non-negative number", text);
        return -1;
    }
    if (*p == '\0' || strcmp(p, "us") == 0) {
        unit_ns = 1000ULL;
    } else if (strcmp(p, "ns") == 0) {
        unit_ns = 1ULL;
    } else if (strcmp(p, "ms") == 0) {
        unit_ns = 1000000ULL;
    } else if (strcmp(p, "s") == 0) {
        unit_ns = 1000000000ULL;
    } else {
        snprintf(err, err_len, "'%s' has unknown unit '%s' (use ns, us, ms or s; none means us)",
                 text, p);
        return -1;
    }
    /* bound whole first, so whole * unit_ns cannot overflow; fraction * unit_ns reaches 1e21,
     * past 64 bits, hence the 128-bit product (rounded half up) */
    if (!too_long && whole <= (unsigned long long)LLAMP_MAX_DURATION_NS / unit_ns) {
        unsigned long long total =
            whole * unit_ns +
            (unsigned long long)(((unsigned __int128)fraction * unit_ns + LLAMP_FRACTION_ONE / 2) /
                                 LLAMP_FRACTION_ONE);
        if (total <= (unsigned long long)LLAMP_MAX_DURATION_NS) {
            *ns = (int64_t)total;
            return 0;
        }
    }
    snprintf(err, err_len, "'%s' is longer than one hour", text);
    return -1;
}
