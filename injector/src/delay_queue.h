/* Messages held back by the injector, ordered by release time.
 * A binary min-heap on (release_ns, seq): equal release times leave in
 * arrival order, so per-(source, tag, communicator) order is kept. It grows
 * without a fixed capacity. */
#ifndef LLAMP_INJECT_DELAY_QUEUE_H
#define LLAMP_INJECT_DELAY_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What is held: an active message, or the completion of a rendezvous get
 * (the read's data has arrived; completing it completes the receive and
 * sends the ATS). */
enum { LLAMP_HELD_AM = 0, LLAMP_HELD_RNDV_GET = 1 };

typedef struct llamp_delayed_msg {
    uint64_t release_ns; /* arrival + delta L (get: completion + 2 delta L) */
    uint64_t seq;        /* arrival order, breaks ties */
    void *data;          /* AM: transport descriptor or our own copy;
                            get: UCX's completion handle */
    size_t length;
    unsigned am_flags; /* flags to hand back to the UCP handler */
    uint8_t am_id;
    uint8_t owned;         /* 1: data is a malloc'd copy we must free */
    uint8_t kind;          /* LLAMP_HELD_AM or LLAMP_HELD_RNDV_GET */
    uint8_t due_when_seen; /* sent so long ago that it was due on arrival:
                              its release says nothing about our precision */
} llamp_delayed_msg;

typedef struct llamp_delay_queue {
    llamp_delayed_msg *heap;
    size_t size;
    size_t capacity;
    uint64_t next_seq;
} llamp_delay_queue;

void llamp_delay_queue_init(llamp_delay_queue *q);
void llamp_delay_queue_free(llamp_delay_queue *q);

/* Adds msg (its seq is assigned here).  Returns 0, or -1 when out of memory. */
int llamp_delay_queue_push(llamp_delay_queue *q, llamp_delayed_msg msg);

/* Earliest message, or NULL when empty. */
const llamp_delayed_msg *llamp_delay_queue_top(const llamp_delay_queue *q);

/* Removes the earliest message into *out; returns 0, or -1 when empty. */
int llamp_delay_queue_pop(llamp_delay_queue *q, llamp_delayed_msg *out);

#ifdef __cplusplus
}
#endif

#endif
