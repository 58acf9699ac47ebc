/* The metrics primitives: lock-free histogram/duration updates and the two clocks every
 * timestamp in the daemon comes from. Rendering (/metrics, /v2/status) lives elsewhere. */
#include "daemon/stats/metrics.h"

#include <time.h>

const double bd_hist_bounds_s[BD_HIST_BUCKETS - 1] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};

/* Bucket bounds in integer nanoseconds, so observing never touches floating point. */
static const uint64_t bounds_ns[BD_HIST_BUCKETS - 1] = {
    500000ull, 1000000ull, 2500000ull, 5000000ull, 10000000ull, 25000000ull, 50000000ull,
    100000000ull, 250000000ull, 500000000ull, 1000000000ull, 2500000000ull, 5000000000ull,
    10000000000ull,
};

void bd_histogram_observe(bd_histogram *h, uint64_t ns)
{
    size_t b = 0;
    while (b < BD_HIST_BUCKETS - 1 && ns > bounds_ns[b])
        b++;
    atomic_fetch_add_explicit(&h->bucket[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

void bd_duration_add(bd_duration *d, uint64_t ns)
{
    atomic_fetch_add_explicit(&d->ns, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&d->count, 1, memory_order_relaxed);
}

bool bd_batch_stat_add(bd_model_stats *st, uint64_t batch_size, uint64_t input_ns, uint64_t infer_ns,
                       uint64_t output_ns)
{
    if (batch_size == 0)
        return false;
    for (size_t i = 0; i < BD_BATCH_STAT_SLOTS; i++) {       /* open addressing by the size */
        bd_batch_stat *b = &st->batch[(batch_size + i) % BD_BATCH_STAT_SLOTS];
        uint64_t have = atomic_load_explicit(&b->batch_size, memory_order_acquire);
        if (have == 0 && atomic_compare_exchange_strong(&b->batch_size, &have, batch_size))
            have = batch_size;
        if (have != batch_size)
            continue;
        bd_duration_add(&b->compute_input, input_ns);
        bd_duration_add(&b->compute_infer, infer_ns);
        bd_duration_add(&b->compute_output, output_ns);
        return true;
    }
    return false;
}

uint64_t bd_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t bd_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000ull + (uint64_t)ts.tv_nsec / 1000000ull;
}

const char *bd_fail_reason_name(bd_fail_reason r)
{
    static const char *const names[BD_FAIL_REASONS] = {
        [BD_FAIL_INVALID]     = "invalid",
        [BD_FAIL_NOT_FOUND]   = "not_found",
        [BD_FAIL_UNAVAILABLE] = "unavailable",
        [BD_FAIL_QUEUE_FULL]  = "queue_full",
        [BD_FAIL_DEADLINE]    = "deadline",
        [BD_FAIL_CANCELLED]   = "cancelled",
        [BD_FAIL_INTERNAL]    = "internal",
    };
    return (unsigned)r < BD_FAIL_REASONS ? names[r] : "unknown";
}

bd_triton_reason bd_fail_reason_triton(bd_fail_reason r)
{
    /* As Triton's core classifies them: a request its scheduler turns away (queue full,
     * timeout expired) is REJECTED; a cancelled one CANCELED; a failed execution BACKEND;
     * anything found wrong before scheduling (input checks) OTHER. */
    switch (r) {
    case BD_FAIL_QUEUE_FULL:
    case BD_FAIL_DEADLINE:  return BD_TRITON_REJECTED;
    case BD_FAIL_CANCELLED: return BD_TRITON_CANCELED;
    case BD_FAIL_INTERNAL:  return BD_TRITON_BACKEND;
    default:                return BD_TRITON_OTHER;
    }
}

const char *bd_triton_reason_name(bd_triton_reason r)
{
    static const char *const names[BD_TRITON_REASONS] = {
        [BD_TRITON_REJECTED] = "REJECTED",
        [BD_TRITON_CANCELED] = "CANCELED",
        [BD_TRITON_BACKEND]  = "BACKEND",
        [BD_TRITON_OTHER]    = "OTHER",
    };
    return (unsigned)r < BD_TRITON_REASONS ? names[r] : "OTHER";
}
