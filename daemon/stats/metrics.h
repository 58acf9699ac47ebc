/* Counters and latency histograms, updated lock-free from any thread (C11 atomics) and read
 * by the status endpoint (/metrics, /v2/status) and the ModelStatistics RPC.
 *
 * One bd_model_stats per loaded model version (owned by the registry entry), one
 * bd_server_stats per process. Durations are nanoseconds. */
#ifndef BD_DAEMON_STATS_METRICS_H
#define BD_DAEMON_STATS_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Latency histogram with fixed bucket upper bounds (seconds, Prometheus convention):
 * 0.0005 0.001 0.0025 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 +Inf. */
#define BD_HIST_BUCKETS 15
extern const double bd_hist_bounds_s[BD_HIST_BUCKETS - 1];

typedef struct bd_histogram {
    _Atomic uint64_t bucket[BD_HIST_BUCKETS];   /* non-cumulative counts */
    _Atomic uint64_t count;
    _Atomic uint64_t sum_ns;
} bd_histogram;

/* A Triton-style duration statistic: how many, and their total time. */
typedef struct bd_duration {
    _Atomic uint64_t count;
    _Atomic uint64_t ns;
} bd_duration;

/* Why a request failed; one counter each. */
typedef enum bd_fail_reason {
    BD_FAIL_INVALID = 0,      /* INVALID_ARGUMENT */
    BD_FAIL_NOT_FOUND,
    BD_FAIL_UNAVAILABLE,
    BD_FAIL_QUEUE_FULL,       /* RESOURCE_EXHAUSTED */
    BD_FAIL_DEADLINE,         /* DEADLINE_EXCEEDED */
    BD_FAIL_CANCELLED,
    BD_FAIL_INTERNAL,         /* a backend failed */
    BD_FAIL_REASONS
} bd_fail_reason;

/* Names as they appear in metric labels ("invalid", "queue_full", ...). */
const char *bd_fail_reason_name(bd_fail_reason r);

/* Triton's failure reasons (the `reason` label of nv_inference_request_failure), in the
 * order /metrics lists them. */
typedef enum bd_triton_reason {
    BD_TRITON_REJECTED = 0,   /* queue full, deadline passed before the run */
    BD_TRITON_CANCELED,
    BD_TRITON_BACKEND,        /* the model's execution failed */
    BD_TRITON_OTHER,          /* everything else (bad input, model gone, shutting down) */
    BD_TRITON_REASONS
} bd_triton_reason;

/* The Triton reason braid's reason R is counted under, and its label ("REJECTED", ...). */
bd_triton_reason bd_fail_reason_triton(bd_fail_reason r);
const char      *bd_triton_reason_name(bd_triton_reason r);

#define BD_MAX_BACKENDS 8     /* per-backend time: index = position in runtime/engines.c */

/* Triton's batch_stats: per batch size a plan ran with, the durations of those runs. A fixed
 * table (a slot is claimed once, lock-free); sizes past BD_BATCH_STAT_SLOTS distinct ones are
 * not listed (their runs still count in execution_count). */
#define BD_BATCH_STAT_SLOTS 128
typedef struct bd_batch_stat {
    _Atomic uint64_t batch_size;         /* 0 = a free slot */
    bd_duration      compute_input, compute_infer, compute_output;
} bd_batch_stat;

typedef struct bd_model_stats {
    /* Triton's InferStatistics */
    bd_duration success, fail, queue, compute_input, compute_infer, compute_output;
    _Atomic uint64_t inference_count;    /* inferences (batch size summed) */
    _Atomic uint64_t execution_count;    /* model executions */
    _Atomic uint64_t last_inference_ms;  /* wall-clock ms since the epoch of the last one */
    /* Prometheus extras */
    bd_histogram     queue_hist, compute_hist, total_hist;
    _Atomic uint64_t failures[BD_FAIL_REASONS];
    _Atomic int64_t  in_flight;          /* running on a worker now */
    _Atomic int64_t  queued;             /* waiting in the model's queue */
    _Atomic uint64_t backend_ns[BD_MAX_BACKENDS];
    /* Output bytes sent to client shared memory: written there by the run itself, or
     * copied there after it (misaligned, overlapping, data-dependent, or batched). */
    _Atomic uint64_t shm_out_in_place_bytes, shm_out_copied_bytes;
    bd_batch_stat    batch[BD_BATCH_STAT_SLOTS];
} bd_model_stats;

typedef struct bd_server_stats {
    _Atomic uint64_t rpc_total;          /* every RPC received */
    _Atomic uint64_t rpc_unimplemented;
    _Atomic uint64_t loads_ok, loads_failed, unloads;
    uint64_t         start_ms;           /* wall-clock ms since the epoch at start-up */
} bd_server_stats;

/* Record one observation of NS nanoseconds. */
void bd_histogram_observe(bd_histogram *h, uint64_t ns);
void bd_duration_add(bd_duration *d, uint64_t ns);
/* Count one plan run of BATCH_SIZE (>= 1) rows in ST's batch_stats; false when the table has
 * no slot left for a new size. */
bool bd_batch_stat_add(bd_model_stats *st, uint64_t batch_size, uint64_t input_ns, uint64_t infer_ns,
                       uint64_t output_ns);
/* Monotonic clock in ns, and wall clock in ms since the epoch. */
uint64_t bd_now_ns(void);
uint64_t bd_wall_ms(void);

#endif
