/* MergeComposite: the pattern table of each kind of engine, and the order its patterns run in. */

#include "partitioner/passes/passes.h"

static int fold_batchnorm(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    (void)target;      /* the folded Conv is a plain ONNX Conv: any engine runs it */
    return bd_pass_fold_batchnorm(g, err);
}

static int fuse_postops(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    return bd_pass_fuse_postops(g, target->backend, err);   /* anchors keep their op type */
}

/* The fast path: make each activation's quantize-dequantize pair one node, drop no-op arithmetic (it hides patterns), fold BN (it makes Conv anchors)
 * and zero Pads into the Convs after them,
 * build the big composites (GELU, layer norm, q/k/v) and move Reshapes out of the way before
 * post-op fusion, which then absorbs their bias adds and activations. */
static const bd_composite k_fast_path[] = {
    { "qlinear",        bd_pass_qlinear },
    { "qdq",            bd_pass_qdq },
    { "identity_arith", bd_pass_identity_arith },
    { "fold_batchnorm", fold_batchnorm },
    { "fold_pad",       bd_pass_fold_pad },
    { "gelu",           bd_pass_gelu },
    { "swish",          bd_pass_swish },
    { "channel_shuffle", bd_pass_channel_shuffle },
    { "where_mask",     bd_pass_where_mask },
    { "layernorm",      bd_pass_layernorm },
    { "qkv_merge",      bd_pass_qkv_merge },
    { "dynquant",       bd_pass_dynquant },
    { "sink_reshape",   bd_pass_sink_reshape },
    { "fuse_postops",   fuse_postops },
};

static const struct {
    bd_engine_kind      kind;
    const bd_composite *patterns;
    size_t              n;
} k_tables[] = {
    { BD_ENGINE_FAST_PATH, k_fast_path, sizeof k_fast_path / sizeof k_fast_path[0] },
};

const bd_composite *bd_composites_for(bd_engine_kind kind, size_t *n)
{
    for (size_t i = 0; i < sizeof k_tables / sizeof k_tables[0]; i++)
        if (k_tables[i].kind == kind) {
            *n = k_tables[i].n;
            return k_tables[i].patterns;
        }
    *n = 0;
    return NULL;
}

int bd_passes_run(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    size_t n;
    const bd_composite *pats = bd_composites_for(target->backend->kind, &n);
    for (size_t i = 0; i < n; i++) {
        int rc = pats[i].run(g, target, err);
        if (rc < 0)
            return bd_error_prefix(err, "pass %s: ", pats[i].name);
    }
    return bd_graph_validate(g, err);
}
