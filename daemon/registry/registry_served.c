/* One loaded model version: reference counted, with its pool of execution contexts. The last
 * release closes the model and every context, on whichever thread releases it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/infer/labels.h"
#include "daemon/registry/registry_served_internal.h"

static atomic_long live_count;

long served_live_count(void) { return atomic_load(&live_count); }

int served_create(const char *name, const char *version, const bd_model_config *mc,
                  int default_queue_limit, bd_model *model, bd_served **out, bd_error *err)
{
    bd_served *s = calloc(1, sizeof *s);
    if (!s) {
        bd_model_close(model);
        return bd_error_set(err, BD_ENOMEM, "model '%s': out of memory", name);
    }
    atomic_init(&s->refs, 1);
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->version, sizeof s->version, "%s", version);
    s->config = *mc;
    s->queue_limit = mc->queue_limit > 0 ? mc->queue_limit : default_queue_limit;
    s->model = model;
    pthread_mutex_init(&s->pool_lock, NULL);
    atomic_fetch_add(&live_count, 1);
    *out = s;
    return 0;
}

int served_load_labels(bd_served *s, const char *model_dir, bd_error *err)
{
    const bd_model_config *mc = &s->config;
    if (mc->n_labels == 0)
        return 0;
    const bd_graph *g = bd_model_graph(s->model);
    size_t n_out = bd_graph_num_outputs(g);
    s->labels = calloc(n_out ? n_out : 1, sizeof *s->labels);
    if (!s->labels)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    for (int i = 0; i < mc->n_labels; i++) {
        size_t o = 0;
        while (o < n_out && strcmp(bd_graph_output(g, o)->name, mc->labels[i].output) != 0)
            o++;
        if (o == n_out)
            return bd_error_set(err, BD_EINVAL, "key 'labels': the model has no output '%s'",
                                mc->labels[i].output);
        int rc = bd_labels_load(model_dir, mc->labels[i].file, &s->labels[o], err);
        if (rc)
            return bd_error_prefix(err, "key 'labels': ");
    }
    return 0;
}

const struct bd_labels *bd_served_labels(const bd_served *s, size_t output)
{
    return s->labels && output < bd_graph_num_outputs(bd_model_graph(s->model)) ? s->labels[output] : NULL;
}

static void served_free(bd_served *s)
{
    if (s->labels)
        for (size_t o = 0; o < bd_graph_num_outputs(bd_model_graph(s->model)); o++)
            bd_labels_free(s->labels[o]);
    free(s->labels);
    for (bd_exec_slot *e = s->pool, *next; e; e = next) {
        next = e->next;
        bd_exec_destroy(e->exec);   /* contexts before the model: they use its plans */
        free(e);
    }
    pthread_mutex_destroy(&s->pool_lock);
    bd_plan_release(s->summary.plan);   /* summarise()'s reference */
    bd_model_close(s->model);
    free(s);
    atomic_fetch_sub(&live_count, 1);
}

void bd_served_retain(bd_served *s) { atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed); }

void bd_served_release(bd_served *s)
{
    if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
        served_free(s);
}

const char *bd_served_name(const bd_served *s)     { return s->name; }
const char *bd_served_version(const bd_served *s)  { return s->version; }
const char *bd_served_platform(const bd_served *s) { return s->config.platform; }
bd_model   *bd_served_model(const bd_served *s)    { return s->model; }
bd_model_stats *bd_served_stats(bd_served *s)      { return &s->stats; }
const bd_partition_summary *bd_served_summary(const bd_served *s) { return &s->summary; }
int         bd_served_queue_limit(const bd_served *s) { return s->queue_limit; }
int         bd_served_max_batch_size(const bd_served *s) { return s->config.max_batch_size; }
const bd_batching_config *bd_served_batching_config(const bd_served *s) { return &s->config.batching; }
bool        bd_served_batches(const bd_served *s) { return s->batching; }

int bd_served_batch_ladder(const bd_served *s, const int **sizes)
{
    *sizes = s->batch_ladder;
    return s->batching ? s->n_batch_ladder : 0;
}

/* Lock held: unlink the idle contexts of plans the model's cache evicted (onto *DROP), so an
 * evicted plan's memory goes with its last context. */
static void drop_evicted_locked(bd_served *s, bd_exec_slot **drop)
{
    for (bd_exec_slot **at = &s->pool; *at;) {
        bd_exec_slot *e = *at;
        if (!e->busy && bd_plan_evicted(e->plan)) {
            *at = e->next;
            e->next = *drop;
            *drop = e;
        } else
            at = &e->next;
    }
}

static void destroy_slots(bd_exec_slot *drop)
{
    for (bd_exec_slot *e = drop, *next; e; e = next) {
        next = e->next;
        bd_exec_destroy(e->exec);    /* releases its plan: the last one frees it */
        free(e);
    }
}

int bd_served_exec_acquire(bd_served *s, const bd_plan *plan, bd_exec **out, bd_error *err)
{
    bd_exec_slot *drop = NULL, *hit = NULL;
    pthread_mutex_lock(&s->pool_lock);
    drop_evicted_locked(s, &drop);
    for (bd_exec_slot *e = s->pool; e && !hit; e = e->next)
        if (!e->busy && e->plan == plan) {
            e->busy = true;
            hit = e;
        }
    pthread_mutex_unlock(&s->pool_lock);
    destroy_slots(drop);
    if (hit) {
        *out = hit->exec;
        return 0;
    }

    /* None free: create one outside the lock (it allocates the arena and kernel contexts). */
    bd_exec_slot *slot = calloc(1, sizeof *slot);
    if (!slot)
        return bd_error_set(err, BD_ENOMEM, "model '%s': out of memory for an execution context", s->name);
    int rc = bd_exec_create(plan, &slot->exec, err);
    if (rc) {
        free(slot);
        return bd_error_prefix(err, "model '%s' version %s: ", s->name, s->version);
    }
    slot->plan = plan;
    slot->busy = true;
    pthread_mutex_lock(&s->pool_lock);
    slot->next = s->pool;
    s->pool = slot;
    pthread_mutex_unlock(&s->pool_lock);
    *out = slot->exec;
    return 0;
}

void bd_served_exec_release(bd_served *s, bd_exec *exec)
{
    if (!exec)
        return;
    bd_exec_slot *drop = NULL;
    pthread_mutex_lock(&s->pool_lock);
    for (bd_exec_slot *e = s->pool; e; e = e->next)
        if (e->exec == exec) {
            e->busy = false;
            break;
        }
    drop_evicted_locked(s, &drop);
    pthread_mutex_unlock(&s->pool_lock);
    destroy_slots(drop);
}
