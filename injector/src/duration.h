/* Parsing of durations such as "10us" for the injector's environment. */
#ifndef LLAMP_INJECT_DURATION_H
#define LLAMP_INJECT_DURATION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parses "<number>[ns|us|ms|s]"; a plain number means microseconds.  The
 * number is a non-negative decimal (fraction allowed), the result is rounded
 * to whole ns and must fit 1 hour.  Returns 0, or -1 with a reason in err. */
int llamp_parse_duration_ns(const char *text, int64_t *ns, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif
