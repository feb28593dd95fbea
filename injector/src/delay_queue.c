#include "delay_queue.h"

#include <stdlib.h>

static int earlier(const llamp_delayed_msg *a, const llamp_delayed_msg *b)
{
    return a->release_ns < b->release_ns || (a->release_ns == b->release_ns && a->seq < b->seq);
}

void llamp_delay_queue_init(llamp_delay_queue *q)
{
    q->heap = NULL;
    q->size = 0;
    q->capacity = 0;
    q->next_seq = 0;
}

void llamp_delay_queue_free(llamp_delay_queue *q)
{
    free(q->heap);
    llamp_delay_queue_init(q);
}

int llamp_delay_queue_push(llamp_delay_queue *q, llamp_delayed_msg msg)
{
    if (q->size == q->capacity) {
        size_t capacity = q->capacity ? 2 * q->capacity : 256;
        llamp_delayed_msg *heap = realloc(q->heap, capacity * sizeof(*heap));
        if (heap == NULL) {
            return -1;
        }
        q->heap = heap;
        q->capacity = capacity;
    }
    msg.seq = q->next_seq++;
    size_t i = q->size++;
    /* sift up; with a constant delta L new messages are the latest, so this
     * loop normally ends at once */
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!earlier(&msg, &q->heap[parent])) {
            break;
        }
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = msg;
    return 0;
}

const llamp_delayed_msg *llamp_delay_queue_top(const llamp_delay_queue *q)
{
    return q->size ? &q->heap[0] : NULL;
}

int llamp_delay_queue_pop(llamp_delay_queue *q, llamp_delayed_msg *out)
{
    if (q->size == 0) {
        return -1;
    }
    *out = q->heap[0];
    llamp_delayed_msg last = q->heap[--q->size];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= q->size) {
            break;
        }
        if (child + 1 < q->size && earlier(&q->heap[child + 1], &q->heap[child])) {
            ++child;
        }
        if (!earlier(&q->heap[child], &last)) {
            break;
        }
        q->heap[i] = q->heap[child];
        i = child;
    }
    if (q->size) {
        q->heap[i] = last;
    }
    return 0;
}
