/* ModelStatistics: per model/version counters and cumulative durations. */
#include <stdlib.h>

#include "client/client_internal.h"
#include "proto/inference.pb.h"

void braid_statistics_free(braid_statistics *stats)
{
    if (!stats)
        return;
    for (size_t i = 0; i < stats->n_models; i++) {
        free(stats->models[i].name);
        free(stats->models[i].version);
    }
    free(stats->models);
    free(stats);
}

static braid_duration duration(const inference_StatisticDuration *d)
{
    return (braid_duration){ .count = d->count, .ns = d->ns };
}

braid_status braid_model_statistics(braid_client *c, const char *model, const char *version,
                                    braid_statistics **out, char *err, size_t errlen)
{
    if (!c || !out)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_statistics: client and OUT are required");
    inference_ModelStatisticsRequest req = { .name = (char *)model, .version = (char *)version };
    inference_ModelStatisticsResponse resp = inference_ModelStatisticsResponse_init_zero;
    braid_status rc = bc_simple(c, BC_MODEL_STATISTICS, inference_ModelStatisticsRequest_fields, &req,
                                inference_ModelStatisticsResponse_fields, &resp, err, errlen);
    if (rc == BRAID_OK) {
        braid_statistics *stats = calloc(1, sizeof *stats);
        bool ok = stats != NULL;
        if (ok && resp.model_stats_count)
            ok = (stats->models = calloc(resp.model_stats_count, sizeof *stats->models)) != NULL;
        for (pb_size_t i = 0; ok && i < resp.model_stats_count; i++) {
            const inference_ModelStatistics *m = &resp.model_stats[i];
            const inference_InferStatistics *s = &m->inference_stats;   /* zeroed when absent */
            braid_model_stats *o = &stats->models[stats->n_models++];
            ok = (o->name = bc_strdup(m->name)) && (o->version = bc_strdup(m->version));
            o->last_inference_ms = m->last_inference;
            o->inference_count = m->inference_count;
            o->execution_count = m->execution_count;
            o->success = duration(&s->success);
            o->fail = duration(&s->fail);
            o->queue = duration(&s->queue);
            o->compute_input = duration(&s->compute_input);
            o->compute_infer = duration(&s->compute_infer);
            o->compute_output = duration(&s->compute_output);
        }
        if (ok) {
            *out = stats;
        } else {
            braid_statistics_free(stats);
            rc = bc_fail(err, errlen, BRAID_E_NOMEM, "out of memory");
        }
    }
    pb_release(inference_ModelStatisticsResponse_fields, &resp);
    return rc;
}
