/* Emitting IR for the TensorFlow node being mapped: temporaries, constants and nodes named
 * after it. The op mappers (tf_ops.c) build their IR through these; tf_translate.c owns the
 * walk that calls them. */
#include "partitioner/tf/tf_emit.h"

#include <stdio.h>
#include <string.h>

/* "<node>:<suffix>", made unique in G. */
static const char *temp_name(bd_graph *g, const char *node, const char *suffix, char *buf,
                             size_t size)
{
    snprintf(buf, size, "%s:%s", node, suffix);
    for (int k = 2; bd_graph_find_value(g, buf) && k < 1000; k++)
        snprintf(buf, size, "%s:%s_%d", node, suffix, k);
    return buf;
}

bd_value *tf_emit_temp(tf_mapctx *m, const char *suffix, bd_error *err)
{
    char buf[512];
    bd_value *v = NULL;
    bd_graph_add_value(m->g, temp_name(m->g, m->v->name, suffix, buf, sizeof buf),
                       BD_DT_UNDEFINED, NULL, &v, err);
    return v;
}

bd_value *tf_emit_const(tf_mapctx *m, const char *suffix, int dtype, const bd_shape *shape,
                        const void *data, size_t nbytes, bd_error *err)
{
    char buf[512];
    bd_value *v = NULL;
    void *p = bd_graph_alloc(m->g, nbytes ? nbytes : 1);
    if (!p) {
        bd_error_set(err, BD_ENOMEM, "node '%s': out of memory", m->v->name);
        return NULL;
    }
    if (nbytes)
        memcpy(p, data, nbytes);
    if (bd_graph_add_value(m->g, temp_name(m->g, m->v->name, suffix, buf, sizeof buf), dtype,
                           shape, &v, err))
        return NULL;
    v->data = p;
    v->nbytes = nbytes;
    return v;
}

int tf_emit_node(tf_mapctx *m, const char *suffix, const char *op, bd_value *const *in,
                 size_t n_in, bd_value *out, bd_node **node, bd_error *err)
{
    return tf_emit_node_n(m, suffix, op, in, n_in, &out, 1, node, err);
}

int tf_emit_node_n(tf_mapctx *m, const char *suffix, const char *op, bd_value *const *in,
                   size_t n_in, bd_value *const *out, size_t n_out, bd_node **node, bd_error *err)
{
    /* Named after the TensorFlow node when it makes the node's result, else after its first
     * output (value names are unique, so node names are too); SUFFIX is then implied. */
    (void)suffix;
    const char *name = n_out && out[0] && out[0] != m->out ? out[0]->name : m->v->name;
    return bd_graph_add_node(m->g, name, op, "", in, n_in, out, n_out, node, err);
}
