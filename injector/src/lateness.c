#include "lateness.h"

#include <math.h>
#include <stdlib.h>

/* 16 Mi samples = 128 MiB at most; beyond that statistics use the first ones */
#define LLAMP_LATENESS_MAX_SAMPLES (16u << 20)

void llamp_lateness_init(llamp_lateness *l)
{
    l->samples = NULL;
    l->size = 0;
    l->capacity = 0;
    l->dropped = 0;
    l->count = 0;
    l->total_ns = 0;
}

void llamp_lateness_free(llamp_lateness *l)
{
    free(l->samples);
    llamp_lateness_init(l);
}

void llamp_lateness_add(llamp_lateness *l, int64_t lateness_ns)
{
    ++l->count;
    l->total_ns += lateness_ns;
    if (l->size == l->capacity) {
        size_t capacity = l->capacity ? 2 * l->capacity : 4096;
        int64_t *samples = NULL;
        if (capacity <= LLAMP_LATENESS_MAX_SAMPLES) {
            samples = realloc(l->samples, capacity * sizeof(*samples));
        }
        if (samples == NULL) {
            ++l->dropped;
            return;
        }
        l->samples = samples;
        l->capacity = capacity;
    }
    l->samples[l->size++] = lateness_ns;
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t llamp_lateness_quantile(llamp_lateness *l, double q)
{
    if (l->size == 0) {
        return 0;
    }
    qsort(l->samples, l->size, sizeof(*l->samples), compare_i64);
    size_t rank = (size_t)ceil(q * (double)l->size);
    if (rank < 1) {
        rank = 1;
    }
    if (rank > l->size) {
        rank = l->size;
    }
    return l->samples[rank - 1];
}

int64_t llamp_lateness_mean(const llamp_lateness *l)
{
    return l->count ? l->total_ns / (int64_t)l->count : 0;
}
