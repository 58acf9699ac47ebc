/* A zero Pad of the spatial axes read only by a Conv, MaxPool or AveragePool whose own padding
 * is explicit or VALID folds into that node's pads: the kernel pads inside itself (oneDNN takes
 * asymmetric pads) instead of a step that first copies the whole tensor into a larger one.
 * Keras pads this way before every stride-2 depthwise convolution of MobileNetV2 and
 * EfficientNet (ZeroPadding2D, then padding='valid': 4.8 MB copied at MobileNetV2's first)
 * and before ResNet50's 7x7 stem and its first max pooling (3.2 MB copied, 0.3 ms of 56).
 * A pooling treats its own pads differently from zeros, so it folds only where the result is
 * the same:
 *   - MaxPool ignores padded positions. Over an input that is never negative (a Relu's) with
 *     every window holding one real element (pads smaller than the kernel, no ceil_mode),
 *     the zeros never win, so ignoring them changes nothing.
 *   - AveragePool with count_include_pad=1 averages over padded zeros, which is the Pad: it
 *     folds when its own pads are counted too (count_include_pad=1) or there are none.
 * The folded node is made only when the fast path accepts it: the TensorFlow engine cannot
 * take it any more (below). */
#include <string.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

/* N's amounts as ONNX [begin..., end...] over RANK axes into PADS; false unless N pads with a
 * constant zero by constant, non-negative amounts on every axis (no `axes` input). */
static bool zero_pad_amounts(const bd_node *n, int rank, int64_t *pads)
{
    if (strcmp(bd_node_attr_string(n, "mode", "constant"), "constant") || bd_node_input(n, 3))
        return false;
    const bd_value *amounts = bd_node_input(n, 1), *fill = bd_node_input(n, 2);
    size_t want = 2 * (size_t)rank;
    if (amounts) {                                      /* opset >= 11: an input */
        if (!amounts->data || amounts->dtype != BD_DT_INT64 || amounts->shape.rank != 1 ||
            amounts->shape.dims[0] != (int64_t)want || amounts->nbytes < want * sizeof *pads)
            return false;
        memcpy(pads, amounts->data, want * sizeof *pads);
    } else {                                            /* before: attributes */
        const int64_t *attr = NULL;
        if (bd_node_attr_ints(n, "pads", &attr) != want || bd_node_attr_float(n, "value", 0.0f) != 0.0f)
            return false;
        memcpy(pads, attr, want * sizeof *pads);
    }
    float v;
    if (fill && (!bd_const_scalar(fill, &v) || v != 0.0f))
        return false;
    for (size_t i = 0; i < want; i++)
        if (pads[i] < 0)
            return false;
    return true;
}

/* Replace READER's padding attributes by explicit PADS (SPATIAL begins, then ends), and with
 * INCLUDE_PAD its count_include_pad by 1. */
static int set_pads(bd_graph *g, bd_node *reader, const int64_t *pads, int spatial, bool include_pad,
                    bd_error *err)
{
    int64_t *kept = bd_graph_alloc(g, 2 * (size_t)spatial * sizeof *kept);
    bd_attr *old = bd_graph_alloc(g, (reader->n_attrs ? reader->n_attrs : 1) * sizeof *old);
    if (!kept || !old)
        return bd_error_set(err, BD_ENOMEM, "out of memory folding a Pad into '%s'", reader->name);
    memcpy(kept, pads, 2 * (size_t)spatial * sizeof *kept);
    size_t n_old = reader->n_attrs;
    if (n_old)
        memcpy(old, reader->attrs, n_old * sizeof *old);
    reader->attrs = NULL;                 /* a fresh array: the old one may be shared */
    reader->n_attrs = reader->cap_attrs = 0;
    int rc = 0;
    for (size_t a = 0; a < n_old && !rc; a++)
        if (strcmp(old[a].name, "pads") && strcmp(old[a].name, "auto_pad") &&
            (!include_pad || strcmp(old[a].name, "count_include_pad")))
            rc = bd_node_add_attr(g, reader, &old[a], err);
    if (!rc)
        rc = bd_node_add_attr(g, reader, &(bd_attr){ .name = "pads", .type = BD_ATTR_INTS,
                                                     .ints = kept, .n = 2 * (size_t)spatial }, err);
    if (!rc && include_pad)
        rc = bd_node_add_attr(g, reader, &(bd_attr){ .name = "count_include_pad",
                                                     .type = BD_ATTR_INT, .i = 1 }, err);
    return rc;
}

/* True if X is never negative: a Relu's output. */
static bool never_negative(const bd_value *x)
{
    return x->producer && bd_is_op(x->producer, "Relu") && bd_fusable(x->producer);
}

/* Whether POOL, read through a zero Pad of X, may take MERGED (its own pads plus the Pad's) as
 * its own: the cases in the comment at the top; *INCLUDE_PAD says to set count_include_pad. */
static bool pool_may_fold(const bd_node *pool, const bd_value *x, const int64_t *own, size_t n_own,
                          const int64_t *merged, int spatial, bool *include_pad)
{
    const int64_t *k = NULL, *d = NULL;
    *include_pad = false;
    if (bd_node_attr_int(pool, "ceil_mode", 0) ||
        bd_node_attr_ints(pool, "kernel_shape", &k) != (size_t)spatial)
        return false;
    if (bd_is_op(pool, "AveragePool")) {
        bool counted = bd_node_attr_int(pool, "count_include_pad", 0) != 0;
        for (size_t i = 0; i < n_own && !counted; i++)
            if (own[i])
                return false;                    /* its own pads are not averaged over */
        *include_pad = !counted;
        return true;
    }
    if (pool->n_outputs != 1 || !never_negative(x))
        return false;                            /* MaxPool: no Indices output; zeros never win */
    size_t nd = bd_node_attr_ints(pool, "dilations", &d);
    for (int i = 0; i < spatial; i++)
        if ((nd && (nd != (size_t)spatial || d[i] != 1)) || merged[i] >= k[i] ||
            merged[spatial + i] >= k[i])
            return false;                        /* a window wholly in the padding */
    return true;
}

/* Fold PAD into the Conv or pooling reading it; 1 if done, 0 if the pair does not qualify or
 * TARGET would not run the result. */
static int fold_one(bd_graph *g, const bd_fuse_target *target, bd_node *pad, bd_error *err)
{
    bd_value *x = bd_node_input(pad, 0), *y = pad->n_outputs == 1 ? pad->outputs[0] : NULL;
    bd_node *reader = y ? bd_sole_consumer(g, y) : NULL;
    bool pool = reader && (bd_is_op(reader, "MaxPool") || bd_is_op(reader, "AveragePool"));
    if (!x || !reader || !(pool || bd_is_op(reader, "Conv")) || reader->inputs[0] != y ||
        !bd_fusable(pad) || !bd_fusable(reader) || x->shape.rank < 3 || x->shape.rank > BD_MAX_RANK)
        return 0;
    int rank = x->shape.rank, spatial = rank - 2;
    bool last = strcmp(bd_node_attr_string(reader, "data_format", "NCHW"), "NHWC") == 0;
    int first = last ? 1 : 2;                    /* the first spatial axis */
    int64_t pads[2 * BD_MAX_RANK];
    if (!zero_pad_amounts(pad, rank, pads))
        return 0;
    for (int ax = 0; ax < rank; ax++)            /* batch and channels stay as they are */
        if ((ax < first || ax >= first + spatial) && (pads[ax] || pads[rank + ax]))
            return 0;
    const char *ap = bd_node_attr_string(reader, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID") && ap[0])
        return 0;                                /* SAME_*: its amounts depend on the size */
    const int64_t *own = NULL;
    size_t n_own = strcmp(ap, "VALID") ? bd_node_attr_ints(reader, "pads", &own) : 0;
    if (n_own && n_own != 2 * (size_t)spatial)
        return 0;
    int64_t merged[2 * BD_MAX_RANK];
    for (int i = 0; i < spatial; i++)            /* the model's numbers: never overflow */
        if (__builtin_add_overflow(pads[first + i], n_own ? own[i] : 0, &merged[i]) ||
            __builtin_add_overflow(pads[rank + first + i], n_own ? own[spatial + i] : 0,
                                   &merged[spatial + i]))
            return 0;
    bool include_pad = false;
    if (pool && !pool_may_fold(reader, x, own, n_own, merged, spatial, &include_pad))
        return 0;
    /* What is changed, to put back if the target declines the result. The TensorFlow NodeDef
     * the node came from (its origin) still says padding='VALID' and reads the Pad: it no
     * longer describes the node, so the TensorFlow engine must not re-serialize it. */
    bd_attr *attrs = reader->attrs;
    size_t n_attrs = reader->n_attrs, cap_attrs = reader->cap_attrs, origin_len = reader->origin_len;
    const void *origin = reader->origin;
    int rc = set_pads(g, reader, merged, spatial, include_pad, err);
    if (rc)
        return rc;
    reader->inputs[0] = x;
    reader->origin = NULL;
    reader->origin_len = 0;
    if (!bd_fuse_accepts(target, g, reader)) {
        reader->attrs = attrs;
        reader->n_attrs = n_attrs;
        reader->cap_attrs = cap_attrs;
        reader->origin = origin;
        reader->origin_len = origin_len;
        reader->inputs[0] = y;
        return 0;
    }
    bd_graph_remove_node(g, pad);
    return 1;
}

int bd_pass_fold_pad(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g);) {
        bd_node *n = bd_graph_node(g, i);
        int rc = bd_is_op(n, "Pad") ? fold_one(g, target, n, err) : 0;
        if (rc < 0)
            return rc;
        rewrites += rc;
        i += rc ? 0 : 1;                         /* a removed node shifts the next one here */
    }
    return rewrites;
}
