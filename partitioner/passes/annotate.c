/* Annotation: each node gets the first backend that accepts it, and a reason from every
 * backend it passed over; plus the user's forcing (fallback_ops, engine). */
#include <stdio.h>
#include <string.h>

#include "partitioner/passes/partition.h"

const char *bd_reason_name(bd_reason r)
{
    switch (r) {
    case BD_REASON_OP:        return "unsupported op";
    case BD_REASON_ATTRIBUTE: return "attribute";
    case BD_REASON_DTYPE:     return "dtype";
    case BD_REASON_DYNAMIC:   return "dynamic shape";
    case BD_REASON_FORCED:    return "forced";
    case BD_REASON_COST:      return "cost";
    case BD_REASON_REFERENCE: return "reference kernel";
    case BD_REASON_NONE:      break;
    }
    return "";
}

static bool engine_auto(const char *e)
{
    return !e || !e[0] || strcmp(e, "auto") == 0;
}

/* The names of BACKENDS, ", name" each, into BUF. */
static void known_names(const bd_backend *const *backends, size_t nb, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t b = 0; b < nb && used < size; b++)
        used += (size_t)snprintf(buf + used, size - used, ", %s", backends[b]->name);
}

int bd_place_engines(const bd_placement_opts *opts, const bd_backend *const *backends, size_t nb,
                     unsigned *allowed, bd_error *err)
{
    *allowed = nb >= 32 ? ~0u : (1u << nb) - 1;
    if (!opts || engine_auto(opts->engine))
        return 0;
    *allowed = 0;
    for (const char *p = opts->engine; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t n = strcspn(p, ",");
        while (n && p[n - 1] == ' ')
            n--;
        if (!n)
            break;
        size_t b = 0;
        while (b < nb && !(strlen(backends[b]->name) == n && !strncmp(backends[b]->name, p, n)))
            b++;
        if (b == nb || b >= 32) {
            char known[128];
            known_names(backends, nb, known, sizeof known);
            return bd_error_set(err, BD_EINVAL, "engine '%.*s' is not a backend (known: auto%s)",
                                (int)n, p, known);
        }
        *allowed |= 1u << b;
        p += strcspn(p, ",");
    }
    if (!*allowed)
        return bd_error_set(err, BD_EINVAL, "engine '%s' names no backend", opts->engine);
    /* "native" is braid's own execution: its kernels and its control flow (runtime/control.c),
     * every engine of that kind */
    for (size_t b = 0; b < nb && b < 32; b++)
        if ((*allowed & (1u << b)) && backends[b]->kind == BD_ENGINE_NATIVE &&
            strcmp(backends[b]->name, "native") == 0)
            for (size_t k = 0; k < nb && k < 32; k++)
                if (backends[k]->kind == BD_ENGINE_NATIVE)
                    *allowed |= 1u << k;
    return 0;
}

bool bd_place_op_listed(const char *list, const char *op)
{
    size_t n = strlen(op);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = p;
        while (*end && *end != ',')
            end++;
        const char *last = end;
        while (last > p && last[-1] == ' ')
            last--;
        if ((size_t)(last - p) == n && n && strncmp(p, op, n) == 0)
            return true;
        p = end;
    }
    return false;
}

static bool fast_path(const bd_backend *b)
{
    return b->kind == BD_ENGINE_FAST_PATH;
}

const char *bd_place_fallback_ops(const bd_placement_opts *opts, const bd_backend *const *backends,
                                  size_t nb, unsigned allowed)
{
    for (size_t b = 0; opts && b < nb && b < 32; b++)
        if ((allowed & (1u << b)) && backends[b]->kind == BD_ENGINE_FALLBACK)
            return opts->fallback_ops;
    return NULL;
}

bool bd_place_forced_fallback(const bd_placement_opts *opts, const bd_node *n)
{
    return opts && bd_place_op_listed(opts->fallback_ops, n->op_type);
}

size_t bd_place_pin(bd_graph *g, const bd_placement_opts *opts)
{
    size_t pinned = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *n = bd_graph_node(g, i);
        bool off = bd_place_forced_fallback(opts, n);
        n->backend = off ? BD_BACKEND_PINNED : -1;
        pinned += off;
    }
    return pinned;
}

/* The first non-constant value N reads or writes whose shape is not static, or NULL. */
static const bd_value *dynamic_value(const bd_node *n)
{
    for (size_t k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] && !n->inputs[k]->data && !bd_shape_is_static(&n->inputs[k]->shape))
            return n->inputs[k];
    for (size_t k = 0; k < n->n_outputs; k++)
        if (!bd_shape_is_static(&n->outputs[k]->shape))
            return n->outputs[k];
    return NULL;
}

/* Sort a backend's free-text refusal into a reason (dynamic shapes are caught before). */
static bd_reason classify(const char *why)
{
    if (strncmp(why, "op ", 3) == 0 || strstr(why, "not supported by"))
        return BD_REASON_OP;
    if (strstr(why, "FP32") || strstr(why, "dtype") || strstr(why, "data type") || strstr(why, "element type"))
        return BD_REASON_DTYPE;
    if (strstr(why, "reference kernel"))
        return BD_REASON_REFERENCE;
    return BD_REASON_ATTRIBUTE;
}

/* A preferred fallback (prefer_fallback_ops) that takes N, or -1; the engines passed over get
 * reason "cost". */
static int preferred_fallback(bd_graph *g, bd_node *n, const bd_backend *const *backends, size_t nb,
                              unsigned allowed, bd_node_place *pl)
{
    char why[sizeof pl->why[0]];
    for (size_t b = 0; b < nb && b < BD_PLACE_MAX_BACKENDS; b++) {
        if (!(allowed & (1u << b)) || backends[b]->kind != BD_ENGINE_FALLBACK ||
            !backends[b]->supports(g, n, why, sizeof why))
            continue;
        for (size_t k = 0; k < nb && k < BD_PLACE_MAX_BACKENDS; k++)
            if (k != b && (allowed & (1u << k)) && backends[k]->kind != BD_ENGINE_FALLBACK) {
                pl->reason[k] = BD_REASON_COST;
                snprintf(pl->why[k], sizeof pl->why[k], "%s runs %s faster here (prefer_fallback_ops)",
                         backends[b]->name, n->op_type);
            }
        return (int)b;
    }
    return -1;
}

static void place_node(bd_graph *g, bd_node *n, const bd_backend *const *backends, size_t nb,
                       const bd_placement_opts *opts, unsigned allowed, bd_node_place *pl)
{
    bool pinned = n->backend == BD_BACKEND_PINNED ||
                  bd_place_op_listed(bd_place_fallback_ops(opts, backends, nb, allowed), n->op_type);
    memset(pl, 0, sizeof *pl);
    pl->backend = -1;
    if (!pinned && opts && bd_place_op_listed(opts->prefer_fallback_ops, n->op_type) &&
        (pl->backend = preferred_fallback(g, n, backends, nb, allowed, pl)) >= 0) {
        n->backend = pl->backend;
        return;
    }
    memset(pl, 0, sizeof *pl);
    pl->backend = -1;
    for (size_t b = 0; b < nb && b < BD_PLACE_MAX_BACKENDS; b++) {
        const bd_value *dyn;
        if (!(allowed & (1u << b))) {
            pl->reason[b] = BD_REASON_FORCED;
            if (__builtin_popcount(allowed) == 1)
                snprintf(pl->why[b], sizeof pl->why[b], "engine %s runs the whole model",
                         backends[__builtin_ctz(allowed)]->name);
            else
                snprintf(pl->why[b], sizeof pl->why[b], "not among the engines '%s'", opts->engine);
        } else if (backends[b]->kind != BD_ENGINE_FALLBACK && pinned) {
            pl->reason[b] = BD_REASON_FORCED;
            snprintf(pl->why[b], sizeof pl->why[b], "op %s is in fallback_ops", n->op_type);
        } else if (fast_path(backends[b]) && (dyn = dynamic_value(n))) {
            char s[64];
            pl->reason[b] = BD_REASON_DYNAMIC;
            snprintf(pl->why[b], sizeof pl->why[b], "'%s' has shape %s until run time", dyn->name,
                     bd_shape_str(&dyn->shape, s, sizeof s));
        } else if (backends[b]->supports(g, n, pl->why[b], sizeof pl->why[b])) {
            pl->why[b][0] = '\0';
            pl->backend = (int)b;
            break;
        } else {
            if (!pl->why[b][0])
                snprintf(pl->why[b], sizeof pl->why[b], "not supported");
            pl->reason[b] = classify(pl->why[b]);
        }
    }
    n->backend = pl->backend;
}

/* Append OP to the comma list OPS (of USED bytes) unless it is there already. A name that
 * does not fit whole is never cut: the list ends with ", ..." instead (USED = SIZE: full). */
static void add_op(char *ops, size_t size, size_t *used, const char *op)
{
    static const char more[] = ", ...";
    if (*used >= size)
        return;
    for (const char *p = ops; (p = strstr(p, op)) != NULL; p++)
        if ((p == ops || p[-1] == ' ') && (p[strlen(op)] == ',' || p[strlen(op)] == '\0'))
            return;
    size_t need = (*used ? 2 : 0) + strlen(op);
    if (*used + need + sizeof more <= size) {
        *used += (size_t)snprintf(ops + *used, size - *used, "%s%s", *used ? ", " : "", op);
        return;
    }
    snprintf(ops + *used, size - *used, "%s", *used ? more : "...");
    *used = size;
}

int bd_annotate(bd_graph *g, const bd_backend *const *backends, size_t nb,
                const bd_placement_opts *opts, bd_node_place *places, bd_error *err)
{
    unsigned allowed;
    int rc = bd_place_engines(opts, backends, nb, &allowed, err);
    if (rc)
        return rc;
    char   report[BD_ERROR_MSG_MAX] = "", ops[160] = "";
    size_t used = 0, ops_used = 0, missing = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *n = bd_graph_node(g, i);
        bd_node_place *pl = &places[n->index];
        place_node(g, n, backends, nb, opts, allowed, pl);
        if (pl->backend >= 0)
            continue;
        add_op(ops, sizeof ops, &ops_used, n->op_type);
        if (missing++ >= 2 || used >= sizeof report)
            continue;
        used += (size_t)snprintf(report + used, sizeof report - used, "%snode '%s' (%s):",
                                 missing > 1 ? "; " : "", n->name, n->op_type);
        bool first = true;
        for (size_t b = 0; b < nb && b < BD_PLACE_MAX_BACKENDS && used < sizeof report; b++) {
            /* a native engine without the op adds nothing: the report names the op already */
            if (backends[b]->kind == BD_ENGINE_NATIVE && pl->reason[b] == BD_REASON_OP)
                continue;
            used += (size_t)snprintf(report + used, sizeof report - used, "%s %s: %s",
                                     first ? "" : ",", backends[b]->name, pl->why[b]);
            first = false;
        }
    }
    if (missing)
        return bd_error_set(err, BD_EUNSUPPORTED, "%zu node(s) have no backend (ops %s): %s%s",
                            missing, ops, report, missing > 2 ? "; ..." : "");
    return 0;
}
