/* The IR's storage: a pool allocator for everything the graph owns, a value table with a
 * name index, and the node list. */
#include "core/ir/graph_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- pool: chunks freed together with the graph ------------------------------------- */

typedef struct pool_chunk {
    struct pool_chunk *next;
    size_t             used, size;
    _Alignas(64) unsigned char data[];
} pool_chunk;

/* A buffer of model bytes the graph owns, and the file it was read from (when known). */
typedef struct graph_buf {
    void       *data;
    size_t      len;
    const char *path;        /* in the pool; NULL when not recorded */
    uint64_t    offset;      /* of DATA's first byte in PATH */
} graph_buf;

struct bd_graph {
    const char  *name;
    pool_chunk  *chunks;
    bd_value   **values;      size_t n_values, cap_values;
    bd_node    **nodes;       size_t n_nodes,  cap_nodes;
    bd_value   **inputs;      size_t n_inputs, cap_inputs;
    bd_value   **outputs;     size_t n_outputs, cap_outputs;
    bd_value   **index;       size_t index_cap;   /* open-addressing name index, power of 2 */
    graph_buf   *bufs;        size_t n_bufs, cap_bufs;   /* model bytes the graph owns */
    int64_t      opset;
    const char  *framework;   /* "onnx" unless a frontend says otherwise */
    const char  *platform;    /* the file format within the framework; NULL = the framework */
    const bd_graph *parent;   /* set on clones: payloads belong to it */
    uint64_t     expanded;    /* bytes charged by bd_graph_charge_expanded */
};

static void *pool_alloc(bd_graph *g, size_t size, size_t align)
{
    /* No size near SIZE_MAX is real; refusing it keeps the arithmetic below from wrapping. */
    if (size > SIZE_MAX / 4)
        return NULL;
    pool_chunk *c = g->chunks;
    if (c) {
        size_t off = (c->used + align - 1) & ~(align - 1);
        if (off + size <= c->size) {
            c->used = off + size;
            return memset(c->data + off, 0, size);
        }
    }
    size_t cap = size + align > 64 * 1024 ? size + align : 64 * 1024;
    c = aligned_alloc(64, (sizeof *c + cap + 63) & ~(size_t)63);
    if (!c)
        return NULL;
    c->next = g->chunks;
    c->size = cap;
    c->used = size;
    g->chunks = c;
    return memset(c->data, 0, size);
}

void *bd_graph_alloc(bd_graph *g, size_t size)
{
    return pool_alloc(g, size ? size : 1, size >= 64 ? 64 : 8);
}

bool bd_graph_charge_expanded(bd_graph *g, uint64_t bytes, uint64_t limit)
{
    if (bytes > limit || g->expanded > limit - bytes)
        return false;
    g->expanded += bytes;
    return true;
}

const char *bd_graph_strdup(bd_graph *g, const char *s, size_t len)
{
    if (!s)
        return NULL;
    if (len == (size_t)-1)
        len = strlen(s);
    char *d = pool_alloc(g, len + 1, 1);
    if (d)
        memcpy(d, s, len);
    return d;
}

/* Grow *ARR (elements of ESIZE) to hold at least NEED entries. */
static int grow(void **arr, size_t *cap, size_t need, size_t esize)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(*arr, ncap * esize);
    if (!p)
        return BD_ENOMEM;
    *arr = p;
    *cap = ncap;
    return 0;
}

/* ---- lifetime -------------------------------------------------------------------------- */

bd_graph *bd_graph_create(const char *name)
{
    bd_graph *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->name = bd_graph_strdup(g, name ? name : "", (size_t)-1);
    if (!g->name) {
        free(g);
        return NULL;
    }
    return g;
}

void bd_graph_destroy(bd_graph *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_bufs; i++)
        free(g->bufs[i].data);
    for (pool_chunk *c = g->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(g->values);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g->index);
    free(g->bufs);
    free(g);
}

int bd_graph_adopt_buffer(bd_graph *g, void *buf)
{
    if (!buf)
        return 0;
    if (grow((void **)&g->bufs, &g->cap_bufs, g->n_bufs + 1, sizeof *g->bufs)) {
        free(buf);
        return BD_ENOMEM;
    }
    g->bufs[g->n_bufs++] = (graph_buf){ .data = buf };
    return 0;
}

int bd_graph_buffer_source(bd_graph *g, const void *buf, size_t len, const char *path,
                           uint64_t offset)
{
    for (size_t i = 0; i < g->n_bufs; i++)
        if (g->bufs[i].data == buf) {
            const char *p = bd_graph_strdup(g, path, (size_t)-1);
            if (!p)
                return BD_ENOMEM;
            g->bufs[i].len = len;
            g->bufs[i].path = p;
            g->bufs[i].offset = offset;
            return 0;
        }
    return BD_ENOTFOUND;
}

bool bd_graph_source_of(const bd_graph *g, const void *p, size_t n, const char **path,
                        uint64_t *offset)
{
    for (; g; g = g->parent)
        for (size_t i = 0; i < g->n_bufs; i++) {
            const graph_buf *b = &g->bufs[i];
            uintptr_t at = (uintptr_t)p, lo = (uintptr_t)b->data;
            if (b->path && at >= lo && at - lo <= b->len && n <= b->len - (at - lo)) {
                *path = b->path;
                *offset = b->offset + (at - lo);
                return true;
            }
        }
    return false;
}

/* ---- name index ------------------------------------------------------------------------ */

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int index_insert(bd_graph *g, bd_value *v);

static int index_rebuild(bd_graph *g, size_t cap)
{
    bd_value **old = g->index;
    size_t old_cap = g->index_cap;
    g->index = calloc(cap, sizeof *g->index);
    if (!g->index) {
        g->index = old;
        return BD_ENOMEM;
    }
    g->index_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i])
            index_insert(g, old[i]);
    free(old);
    return 0;
}

static int index_insert(bd_graph *g, bd_value *v)
{
    if ((g->n_values + 1) * 2 > g->index_cap) {
        int rc = index_rebuild(g, g->index_cap ? g->index_cap * 2 : 64);
        if (rc)
            return rc;
    }
    size_t mask = g->index_cap - 1;
    for (size_t i = hash_name(v->name) & mask;; i = (i + 1) & mask)
        if (!g->index[i]) {
            g->index[i] = v;
            return 0;
        }
}

bd_value *bd_graph_find_value(const bd_graph *g, const char *name)
{
    if (!g->index_cap || !name)
        return NULL;
    size_t mask = g->index_cap - 1;
    for (size_t i = hash_name(name) & mask; g->index[i]; i = (i + 1) & mask)
        if (strcmp(g->index[i]->name, name) == 0)
            return g->index[i];
    return NULL;
}

int bd_graph_rename_value(bd_graph *g, bd_value *v, const char *name, bd_error *err)
{
    if (!name || !*name)
        return bd_error_set(err, BD_EMODEL, "graph '%s': renaming '%s': empty name", g->name, v->name);
    bd_value *other = bd_graph_find_value(g, name);
    if (other == v)
        return 0;
    if (other)
        return bd_error_set(err, BD_EMODEL, "graph '%s': cannot rename '%s' to '%s': a value has "
                            "that name", g->name, v->name, name);
    const char *copy = bd_graph_strdup(g, name, (size_t)-1);
    if (!copy)
        return bd_error_set(err, BD_ENOMEM, "out of memory renaming value '%s'", v->name);
    const char *old = v->name;
    v->name = copy;
    if (index_rebuild(g, g->index_cap)) {       /* the slots hash the names: rehash them all */
        v->name = old;
        return bd_error_set(err, BD_ENOMEM, "out of memory renaming value '%s'", old);
    }
    return 0;
}

/* ---- clone ----------------------------------------------------------------------------- */

bd_graph *bd_graph_clone(const bd_graph *src)
{
    bd_graph *g = bd_graph_create(src->name);
    if (!g)
        return NULL;
    g->opset     = src->opset;
    g->framework = src->framework;
    g->platform  = src->platform;
    g->parent    = src;
    bd_value **vmap = calloc(src->n_values ? src->n_values : 1, sizeof *vmap);
    if (!vmap)
        goto fail;
    for (size_t i = 0; i < src->n_values; i++) {
        bd_value *v = pool_alloc(g, sizeof *v, 8);
        if (!v)
            goto fail;
        *v = *src->values[i];
        v->producer = NULL;
        vmap[i] = v;
        if (grow((void **)&g->values, &g->cap_values, g->n_values + 1, sizeof *g->values) ||
            index_insert(g, v))
            goto fail;
        g->values[g->n_values++] = v;
    }
#define MAPV(x) ((x) ? vmap[(x)->index] : NULL)
    for (size_t i = 0; i < src->n_nodes; i++) {
        const bd_node *sn = src->nodes[i];
        bd_node *n = pool_alloc(g, sizeof *n, 8);
        if (!n)
            goto fail;
        *n = *sn;
        n->cap_attrs = 0;   /* the attribute array is the parent's: copy before appending */
        n->cap_inputs = 0;
        n->inputs  = pool_alloc(g, (sn->n_inputs + 1) * sizeof *n->inputs, 8);
        n->outputs = pool_alloc(g, (sn->n_outputs + 1) * sizeof *n->outputs, 8);
        if (!n->inputs || !n->outputs)
            goto fail;
        for (size_t k = 0; k < sn->n_inputs; k++)
            n->inputs[k] = MAPV(sn->inputs[k]);
        for (size_t k = 0; k < sn->n_outputs; k++) {
            n->outputs[k] = MAPV(sn->outputs[k]);
            n->outputs[k]->producer = n;
        }
        if (grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes))
            goto fail;
        g->nodes[g->n_nodes++] = n;
    }
    if (grow((void **)&g->inputs, &g->cap_inputs, src->n_inputs + 1, sizeof *g->inputs) ||
        grow((void **)&g->outputs, &g->cap_outputs, src->n_outputs + 1, sizeof *g->outputs))
        goto fail;
    for (size_t i = 0; i < src->n_inputs; i++)
        g->inputs[i] = MAPV(src->inputs[i]);
    for (size_t i = 0; i < src->n_outputs; i++)
        g->outputs[i] = MAPV(src->outputs[i]);
    g->n_inputs  = src->n_inputs;
    g->n_outputs = src->n_outputs;
#undef MAPV
    free(vmap);
    return g;
fail:
    free(vmap);
    bd_graph_destroy(g);
    return NULL;
}

/* ---- reading --------------------------------------------------------------------------- */

const char *bd_graph_name(const bd_graph *g)               { return g->name; }
size_t      bd_graph_num_nodes(const bd_graph *g)          { return g->n_nodes; }
bd_node    *bd_graph_node(const bd_graph *g, size_t i)     { return i < g->n_nodes ? g->nodes[i] : NULL; }
size_t      bd_graph_num_values(const bd_graph *g)         { return g->n_values; }
bd_value   *bd_graph_value(const bd_graph *g, size_t i)    { return i < g->n_values ? g->values[i] : NULL; }
size_t      bd_graph_num_inputs(const bd_graph *g)         { return g->n_inputs; }
bd_value   *bd_graph_input(const bd_graph *g, size_t i)    { return i < g->n_inputs ? g->inputs[i] : NULL; }
size_t      bd_graph_num_outputs(const bd_graph *g)        { return g->n_outputs; }
bd_value   *bd_graph_output(const bd_graph *g, size_t i)   { return i < g->n_outputs ? g->outputs[i] : NULL; }
int64_t     bd_graph_opset(const bd_graph *g)              { return g->opset; }
const char *bd_graph_framework(const bd_graph *g)          { return g->framework ? g->framework : "onnx"; }
void        bd_graph_set_framework(bd_graph *g, const char *fw) { g->framework = fw; }
const char *bd_graph_platform(const bd_graph *g)           { return g->platform ? g->platform : bd_graph_framework(g); }
void        bd_graph_set_platform(bd_graph *g, const char *platform) { g->platform = platform; }
void        bd_graph_set_opset(bd_graph *g, int64_t opset) { g->opset = opset; }

size_t bd_graph_use_count(const bd_graph *g, const bd_value *v)
{
    size_t uses = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i]->n_inputs; k++)
            uses += g->nodes[i]->inputs[k] == v;
    for (size_t i = 0; i < g->n_outputs; i++)
        uses += g->outputs[i] == v;
    return uses;
}

/* ---- attributes ------------------------------------------------------------------------ */

const bd_attr *bd_node_attr(const bd_node *n, const char *name)
{
    for (size_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

int64_t bd_node_attr_int(const bd_node *n, const char *name, int64_t dflt)
{
    const bd_attr *a = bd_node_attr(n, name);
    return a && a->type == BD_ATTR_INT ? a->i : dflt;
}

float bd_node_attr_float(const bd_node *n, const char *name, float dflt)
{
    const bd_attr *a = bd_node_attr(n, name);
    return a && a->type == BD_ATTR_FLOAT ? a->f : dflt;
}

const char *bd_node_attr_string(const bd_node *n, const char *name, const char *dflt)
{
    const bd_attr *a = bd_node_attr(n, name);
    return a && a->type == BD_ATTR_STRING ? a->s : dflt;
}

size_t bd_node_attr_ints(const bd_node *n, const char *name, const int64_t **out)
{
    const bd_attr *a = bd_node_attr(n, name);
    if (!a || a->type != BD_ATTR_INTS) {
        *out = NULL;
        return 0;
    }
    *out = a->ints;
    return a->n;
}

bd_value *bd_node_input(const bd_node *n, size_t i)
{
    return i < n->n_inputs ? n->inputs[i] : NULL;
}

bool bd_node_moves_values(const bd_node *n)
{
    static const char *const ops[] = { "Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                       "MaxPool", "Identity" };
    if ((n->domain && n->domain[0]) || n->n_outputs != 1 || n->n_inputs < 1 || !n->inputs[0])
        return false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(n->op_type, ops[i]))
            return true;
    return false;
}

/* ---- building -------------------------------------------------------------------------- */

int bd_graph_add_value(bd_graph *g, const char *name, int dtype, const bd_shape *shape,
                       bd_value **out, bd_error *err)
{
    if (!name || !*name)
        return bd_error_set(err, BD_EMODEL, "graph '%s': a value has an empty name", g->name);
    if (bd_graph_find_value(g, name))
        return bd_error_set(err, BD_EMODEL, "graph '%s': duplicate value name '%s'", g->name, name);
    if (g->n_values >= BD_MAX_VALUES)
        return bd_error_set(err, BD_EMODEL, "graph '%s' has more than %d values (braid's limit)",
                            g->name, BD_MAX_VALUES);
    bd_value *v = pool_alloc(g, sizeof *v, 8);
    if (!v || grow((void **)&g->values, &g->cap_values, g->n_values + 1, sizeof *g->values))
        return bd_error_set(err, BD_ENOMEM, "out of memory adding value '%s'", name);
    v->name = bd_graph_strdup(g, name, (size_t)-1);
    if (!v->name || index_insert(g, v))
        return bd_error_set(err, BD_ENOMEM, "out of memory adding value '%s'", name);
    v->dtype = dtype;
    if (shape)
        v->shape = *shape;
    else
        v->shape.rank = -1;
    v->index = (int)g->n_values;
    g->values[g->n_values++] = v;
    if (out)
        *out = v;
    return 0;
}

bd_value *bd_graph_get_or_add_value(bd_graph *g, const char *name, bd_error *err)
{
    bd_value *v = bd_graph_find_value(g, name);
    if (!v && bd_graph_add_value(g, name, BD_DT_UNDEFINED, NULL, &v, err) != 0)
        return NULL;
    return v;
}

static int append_value(bd_graph *g, bd_value ***arr, size_t *n, size_t *cap, bd_value *v,
                        bd_error *err)
{
    if (grow((void **)arr, cap, *n + 1, sizeof **arr))
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    (*arr)[(*n)++] = v;
    return 0;
}

int bd_graph_mark_input(bd_graph *g, bd_value *v, bd_error *err)
{
    v->is_input = true;
    return append_value(g, &g->inputs, &g->n_inputs, &g->cap_inputs, v, err);
}

int bd_graph_mark_output(bd_graph *g, bd_value *v, bd_error *err)
{
    v->is_output = true;
    return append_value(g, &g->outputs, &g->n_outputs, &g->cap_outputs, v, err);
}

int bd_graph_add_node(bd_graph *g, const char *name, const char *op_type, const char *domain,
                      bd_value *const *inputs, size_t n_inputs,
                      bd_value *const *outputs, size_t n_outputs,
                      bd_node **out, bd_error *err)
{
    for (size_t k = 0; k < n_outputs; k++) {
        if (!outputs[k])
            return bd_error_set(err, BD_EMODEL, "node '%s' (%s): output %zu is missing",
                                name, op_type, k);
        if (outputs[k]->producer)
            return bd_error_set(err, BD_EMODEL,
                                "value '%s' is produced twice: by node '%s' and node '%s'",
                                outputs[k]->name, outputs[k]->producer->name, name);
        if (outputs[k]->data || outputs[k]->is_input)
            return bd_error_set(err, BD_EMODEL,
                                "node '%s' (%s) writes '%s', which is a graph input or initializer",
                                name, op_type, outputs[k]->name);
    }
    if (g->n_nodes >= BD_MAX_NODES)
        return bd_error_set(err, BD_EMODEL, "graph '%s' has more than %d nodes (braid's limit)",
                            g->name, BD_MAX_NODES);
    bd_node *n = pool_alloc(g, sizeof *n, 8);
    if (!n || grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes))
        return bd_error_set(err, BD_ENOMEM, "out of memory adding node '%s'", name);
    n->name    = bd_graph_strdup(g, name, (size_t)-1);
    n->op_type = bd_graph_strdup(g, op_type, (size_t)-1);
    n->domain  = bd_graph_strdup(g, domain ? domain : "", (size_t)-1);
    n->inputs  = pool_alloc(g, (n_inputs + 1) * sizeof *n->inputs, 8);
    n->outputs = pool_alloc(g, (n_outputs + 1) * sizeof *n->outputs, 8);
    if (!n->name || !n->op_type || !n->domain || !n->inputs || !n->outputs)
        return bd_error_set(err, BD_ENOMEM, "out of memory adding node '%s'", name);
    if (n_inputs)
        memcpy(n->inputs, inputs, n_inputs * sizeof *inputs);
    if (n_outputs)
        memcpy(n->outputs, outputs, n_outputs * sizeof *outputs);
    n->n_inputs  = n_inputs;
    n->n_outputs = n_outputs;
    n->backend   = -1;
    for (size_t k = 0; k < n_outputs; k++)
        outputs[k]->producer = n;
    n->index = (int)g->n_nodes;
    g->nodes[g->n_nodes++] = n;
    if (out)
        *out = n;
    return 0;
}

int bd_node_add_attr(bd_graph *g, bd_node *n, const bd_attr *a, bd_error *err)
{
    if (!a->name)
        return bd_error_set(err, BD_EMODEL, "node '%s': attribute without a name", n->name);
    if (n->n_attrs >= n->cap_attrs || !n->attrs) {
        /* Doubling: a node with many attributes costs linear time and pool space (the old
         * arrays stay in the pool: at most as much again). */
        size_t cap = n->n_attrs < 4 ? 8 : n->n_attrs * 2;
        if (cap > SIZE_MAX / sizeof(bd_attr))
            return bd_error_set(err, BD_ENOMEM, "node '%s': too many attributes", n->name);
        bd_attr *attrs = pool_alloc(g, cap * sizeof *attrs, 8);
        if (!attrs)
            return bd_error_set(err, BD_ENOMEM, "out of memory adding attribute to '%s'", n->name);
        if (n->n_attrs)
            memcpy(attrs, n->attrs, n->n_attrs * sizeof *attrs);
        n->attrs = attrs;
        n->cap_attrs = cap;
    }
    n->attrs[n->n_attrs++] = *a;
    return 0;
}

int bd_node_append_input(bd_graph *g, bd_node *n, bd_value *input, bd_error *err)
{
    if (n->n_inputs >= INT32_MAX)
        return bd_error_set(err, BD_EMODEL, "node '%s': too many inputs", n->name);
    if (n->n_inputs + 1 >= n->cap_inputs) {
        /* Doubling, as for attributes: many appended inputs cost linear time and space. The
         * array keeps one spare NULL entry past the end, as bd_graph_add_node makes it. */
        size_t cap = n->n_inputs < 4 ? 8 : 2 * (n->n_inputs + 1);
        bd_value **in = pool_alloc(g, cap * sizeof *in, 8);
        if (!in)
            return bd_error_set(err, BD_ENOMEM, "out of memory extending node '%s'", n->name);
        if (n->n_inputs)
            memcpy(in, n->inputs, n->n_inputs * sizeof *in);
        n->inputs = in;
        n->cap_inputs = cap;
    }
    n->inputs[n->n_inputs] = input;
    return (int)n->n_inputs++;
}

void bd_graph_replace_uses(bd_graph *g, bd_value *old_v, bd_value *new_v)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i]->n_inputs; k++)
            if (g->nodes[i]->inputs[k] == old_v)
                g->nodes[i]->inputs[k] = new_v;
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == old_v) {
            g->outputs[i] = new_v;
            new_v->is_output = true;
            old_v->is_output = false;
        }
}

void bd_graph_remove_node(bd_graph *g, bd_node *n)
{
    size_t at = g->n_nodes;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i] == n)
            at = i;
    if (at == g->n_nodes)
        return;
    for (size_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k]->producer == n)
            n->outputs[k]->producer = NULL;
    memmove(&g->nodes[at], &g->nodes[at + 1], (g->n_nodes - at - 1) * sizeof *g->nodes);
    g->n_nodes--;
    for (size_t i = at; i < g->n_nodes; i++)
        g->nodes[i]->index = (int)i;
}

void bd_node_set_output(bd_node *n, size_t i, bd_value *out)
{
    if (i >= n->n_outputs)
        return;
    if (n->outputs[i]->producer == n)
        n->outputs[i]->producer = NULL;
    n->outputs[i] = out;
    out->producer = n;
}

/* validate.c reorders nodes after a topological sort. */
void graph_set_node_order(bd_graph *g, bd_node **order)
{
    memcpy(g->nodes, order, g->n_nodes * sizeof *order);
    for (size_t i = 0; i < g->n_nodes; i++)
        g->nodes[i]->index = (int)i;
}
