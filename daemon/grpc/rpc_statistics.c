/* ModelStatistics: Triton's per-version counters, read from the same bd_model_stats the
 * status endpoint shows. Loop thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/inference.pb.h"
#include "daemon/grpc/rpc.h"

static inference_StatisticDuration duration(bd_duration *d)
{
    return (inference_StatisticDuration){ .count = atomic_load(&d->count), .ns = atomic_load(&d->ns) };
}

static void fill(inference_ModelStatistics *out, bd_served *s)
{
    bd_model_stats *st = bd_served_stats(s);
    out->name = (char *)bd_served_name(s);
    out->version = (char *)bd_served_version(s);
    out->last_inference = atomic_load(&st->last_inference_ms);
    out->inference_count = atomic_load(&st->inference_count);
    out->execution_count = atomic_load(&st->execution_count);
    out->has_inference_stats = true;
    inference_InferStatistics *is = &out->inference_stats;
    is->has_success = is->has_fail = is->has_queue = true;
    is->has_compute_input = is->has_compute_infer = is->has_compute_output = true;
    is->has_cache_hit = is->has_cache_miss = true;          /* always empty: no cache */
    is->success = duration(&st->success);
    is->fail = duration(&st->fail);
    is->queue = duration(&st->queue);
    is->compute_input = duration(&st->compute_input);
    is->compute_infer = duration(&st->compute_infer);
    is->compute_output = duration(&st->compute_output);

    /* batch_stats: one entry per batch size run, smallest first (Triton lists them so) */
    size_t n = 0;
    for (size_t i = 0; i < BD_BATCH_STAT_SLOTS; i++)
        n += atomic_load(&st->batch[i].batch_size) != 0;
    inference_InferBatchStatistics *bs = n ? calloc(n, sizeof *bs) : NULL;
    if (!bs)
        return;                                 /* none, or out of memory: listed empty */
    size_t k = 0;
    for (size_t i = 0; i < BD_BATCH_STAT_SLOTS && k < n; i++) {
        bd_batch_stat *b = &st->batch[i];
        uint64_t size = atomic_load(&b->batch_size);
        if (!size)
            continue;
        size_t at = k++;
        while (at > 0 && bs[at - 1].batch_size > size) {      /* insertion sort */
            bs[at] = bs[at - 1];
            at--;
        }
        bs[at] = (inference_InferBatchStatistics){
            .batch_size = size,
            .has_compute_input = true, .compute_input = duration(&b->compute_input),
            .has_compute_infer = true, .compute_infer = duration(&b->compute_infer),
            .has_compute_output = true, .compute_output = duration(&b->compute_output),
        };
    }
    out->batch_stats = bs;
    out->batch_stats_count = (pb_size_t)k;
}

/* Empty name: every loaded model. A name: that model (NOT_FOUND if unknown or the version
 * does not match, UNAVAILABLE if nothing of it is loaded). */
void bd_rpc_model_statistics(bd_call *c)
{
    inference_ModelStatisticsRequest *req =
        BD_CALL_DECODE(c, inference_ModelStatisticsRequest, "ModelStatisticsRequest");
    if (!req)
        return;
    const char *name = req->name ? req->name : "", *version = req->version ? req->version : "";
    bd_registry_entry *e = NULL;
    size_t n = bd_registry_snapshot(bd_call_registry(c), &e);
    inference_ModelStatistics *ms = calloc(n ? n : 1, sizeof *ms);
    if (!ms) {
        bd_registry_snapshot_free(e, n);
        bd_call_fail(c, BD_ENOMEM, "out of memory");
        return;
    }
    size_t k = 0;
    bool known = false;
    for (size_t i = 0; i < n; i++) {
        if (*name && strcmp(e[i].name, name) != 0)
            continue;
        known = true;
        if (!e[i].served || (*version && strcmp(bd_served_version(e[i].served), version) != 0))
            continue;
        fill(&ms[k++], e[i].served);
    }
    char msg[600];
    if (*name && !known) {
        snprintf(msg, sizeof msg, "unknown model '%.300s'", name);
        bd_call_fail(c, BD_ENOTFOUND, msg);
    } else if (*name && k == 0 && *version) {
        snprintf(msg, sizeof msg, "model '%.256s' has no loaded version '%.64s'", name, version);
        bd_call_fail(c, BD_ENOTFOUND, msg);
    } else if (*name && k == 0) {
        snprintf(msg, sizeof msg, "model '%.300s' is not loaded", name);
        bd_call_fail(c, BD_EUNAVAIL, msg);
    } else {
        inference_ModelStatisticsResponse rsp = { .model_stats_count = (pb_size_t)k, .model_stats = ms };
        bd_call_reply(c, inference_ModelStatisticsResponse_fields, &rsp);
    }
    for (size_t i = 0; i < k; i++)
        free(ms[i].batch_stats);
    free(ms);
    bd_registry_snapshot_free(e, n);
}
