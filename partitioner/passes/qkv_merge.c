/* The q/k/v merge: MatMuls that read the same tensor with constant weights become one MatMul
 * over the concatenated weights and a Split (see passes.h).
 *
 *   X -> MatMul(Wq) [-> Add(bq)] -> q          X -> MatMul([Wq|Wk|Wv]) [-> Add([bq|bk|bv])]
 *   X -> MatMul(Wk) [-> Add(bk)] -> k    ==>     -> Split(axis -1, [Nq, Nk, Nv]) -> q, k, v
 *   X -> MatMul(Wv) [-> Add(bv)] -> v
 *
 * The merged Add is left for fuse_postops, which makes it the MatMul's bias post-op. */
#include <stdio.h>
#include <string.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

#define QKV_MAX 8

typedef struct member {
    bd_node  *mm;
    bd_node  *add;       /* the bias Add, or NULL */
    bd_value *bias;      /* its constant [N] operand */
    bd_value *out;       /* the tensor the rest of the graph reads (Add's or MatMul's output) */
    int64_t   n;
} member;

static bool f32_const_static(const bd_value *v, int rank)
{
    return v && v->data && v->dtype == BD_DT_FLOAT && v->shape.rank == rank &&
           bd_shape_is_static(&v->shape) &&
           v->nbytes >= (size_t)bd_shape_numel(&v->shape) * sizeof(float);
}

/* MatMul(X, W) with W a constant [K, N], nothing fused yet, that the pass may touch. */
static bool candidate(const bd_node *n, const bd_value *x, int64_t k)
{
    return bd_is_op(n, "MatMul") && bd_fusable(n) && n->n_inputs == 2 && n->n_outputs == 1 &&
           n->n_post == 0 && n->inputs[0] == x && n->inputs[1] != x &&
           f32_const_static(n->inputs[1], 2) && n->inputs[1]->shape.dims[0] == k &&
           x->dtype == BD_DT_FLOAT && x->shape.rank >= 2 && bd_shape_is_static(&x->shape) &&
           x->shape.dims[x->shape.rank - 1] == k;
}

static void find_bias(const bd_graph *g, member *m)
{
    bd_value *y = m->mm->outputs[0];
    bd_node *add = bd_sole_consumer(g, y);
    bd_value *b = add && bd_is_op(add, "Add") && bd_fusable(add) ? bd_other_input(add, y) : NULL;
    if (b && f32_const_static(b, 1) && b->shape.dims[0] == m->n) {
        m->add = add;
        m->bias = b;
        m->out = add->outputs[0];
    } else {
        m->add = NULL;
        m->bias = NULL;
        m->out = y;
    }
}

/* Would TARGET run the merged MatMul and the Split? Asked on probe nodes before rewriting. */
static bool target_takes(const bd_graph *g, const bd_fuse_target *target, const member *ms, size_t n,
                         bd_value *x, int64_t k, int64_t total, int64_t opset)
{
    if (!target)
        return true;
    bd_value w = *ms[0].mm->inputs[1], y = *ms[0].mm->outputs[0];
    int64_t wd[2] = { k, total };
    w.shape = bd_shape_make(2, wd);
    w.nbytes = (size_t)(k * total) * sizeof(float);
    y.shape = x->shape;
    y.shape.dims[y.shape.rank - 1] = total;
    y.shape.sym[y.shape.rank - 1] = NULL;
    y.producer = NULL;
    bd_value *mm_in[] = { x, &w }, *mm_out[] = { &y };
    bd_node mm = { .name = ms[0].mm->name, .op_type = "MatMul", .domain = "", .inputs = mm_in,
                   .n_inputs = 2, .outputs = mm_out, .n_outputs = 1, .backend = -1, .index = -1 };
    if (!bd_fuse_accepts(target, g, &mm))
        return false;
    int64_t sizes[QKV_MAX];
    bd_value *outs[QKV_MAX];
    for (size_t i = 0; i < n; i++) {
        sizes[i] = ms[i].n;
        outs[i] = ms[i].out;
    }
    int64_t nd = (int64_t)n;
    bd_value split = { .name = "split", .dtype = BD_DT_INT64, .shape = bd_shape_make(1, &nd),
                       .data = sizes, .nbytes = n * sizeof *sizes, .index = -1 };
    bd_value *sp_in[] = { &y, &split };
    bd_attr attrs[] = { { .name = "axis", .type = BD_ATTR_INT, .i = -1 },
                        { .name = "split", .type = BD_ATTR_INTS, .ints = sizes, .n = n } };
    bd_node sp = { .name = ms[0].mm->name, .op_type = "Split", .domain = "", .inputs = sp_in,
                   .n_inputs = opset >= 13 ? 2 : 1, .outputs = outs, .n_outputs = n,
                   .attrs = attrs, .n_attrs = opset >= 13 ? 1 : 2, .backend = -1, .index = -1 };
    return bd_fuse_accepts(target, g, &sp);
}

static int rewrite(bd_graph *g, member *ms, size_t n, bd_value *x, int64_t k, int64_t total,
                   bool with_bias, bd_error *err)
{
    const char *base = ms[0].mm->name;
    int64_t wd[2] = { k, total }, nd = (int64_t)n;
    bd_shape ws = bd_shape_make(2, wd), bs = bd_shape_make(1, &total), ss = bd_shape_make(1, &nd);
    bd_shape ys = x->shape;
    ys.dims[ys.rank - 1] = total;
    ys.sym[ys.rank - 1] = NULL;
    void *wp, *bp = NULL, *sp;
    bd_value *w = bd_pass_new_const(g, base, "_qkv_weight", BD_DT_FLOAT, &ws, sizeof(float), &wp, err);
    bd_value *b = w && with_bias ? bd_pass_new_const(g, base, "_qkv_bias", BD_DT_FLOAT, &bs, sizeof(float), &bp, err) : NULL;
    bd_value *sizes = w && (b || !with_bias) ? bd_pass_new_const(g, base, "_qkv_split", BD_DT_INT64, &ss, sizeof(int64_t), &sp, err) : NULL;
    bd_value *mm_out = sizes ? bd_pass_new_value(g, base, "_qkv", BD_DT_FLOAT, &ys, err) : NULL;
    bd_value *y = mm_out && with_bias ? bd_pass_new_value(g, base, "_qkv_biased", BD_DT_FLOAT, &ys, err) : mm_out;
    if (!y)
        return err && err->code ? err->code : BD_ENOMEM;
    /* weights [K, N0 | N1 | ...] row by row; biases side by side */
    float *wc = wp, *bc = bp;
    int64_t *sz = sp, col = 0;
    for (size_t i = 0; i < n; i++) {
        const float *wi = ms[i].mm->inputs[1]->data;
        for (int64_t r = 0; r < k; r++)
            memcpy(wc + r * total + col, wi + r * ms[i].n, (size_t)ms[i].n * sizeof(float));
        if (with_bias)
            memcpy(bc + col, ms[i].bias->data, (size_t)ms[i].n * sizeof(float));
        sz[i] = ms[i].n;
        col += ms[i].n;
    }
    char names[3][256];
    snprintf(names[0], sizeof names[0], "%s", base);
    snprintf(names[1], sizeof names[1], "%s_qkv_bias", base);
    snprintf(names[2], sizeof names[2], "%s_qkv_split", base);
    bd_value *outs[QKV_MAX];
    for (size_t i = 0; i < n; i++) {
        outs[i] = ms[i].out;
        if (ms[i].add)
            bd_graph_remove_node(g, ms[i].add);
        bd_graph_remove_node(g, ms[i].mm);
    }
    bd_node *mm, *add = NULL, *split;
    int rc = bd_graph_add_node(g, names[0], "MatMul", "", (bd_value *[]){ x, w }, 2, &mm_out, 1, &mm, err);
    if (rc == 0 && with_bias)
        rc = bd_graph_add_node(g, names[1], "Add", "", (bd_value *[]){ mm_out, b }, 2, &y, 1, &add, err);
    bool input_form = bd_graph_opset(g) >= 13;     /* Split's sizes: an input from opset 13 */
    if (rc == 0)
        rc = bd_graph_add_node(g, names[2], "Split", "", (bd_value *[]){ y, sizes },
                               input_form ? 2 : 1, outs, n, &split, err);
    if (rc == 0)
        rc = bd_node_add_attr(g, split, &(bd_attr){ .name = "axis", .type = BD_ATTR_INT, .i = -1 }, err);
    if (rc == 0 && !input_form)
        rc = bd_node_add_attr(g, split, &(bd_attr){ .name = "split", .type = BD_ATTR_INTS,
                                                    .ints = sizes->data, .n = n }, err);
    if (rc)
        return rc;
    mm->composite = "MatMul*qkv";
    split->composite = "Split*qkv";
    return bd_graph_toposort(g, err);
}

int bd_pass_qkv_merge(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *first = bd_graph_node(g, i);
        bd_value *x = first->n_inputs ? first->inputs[0] : NULL;
        if (!x || !first->inputs[1] || first->inputs[1]->shape.rank != 2)
            continue;
        int64_t k = first->inputs[1]->shape.dims[0];
        if (!candidate(first, x, k))
            continue;
        member ms[QKV_MAX];
        size_t n = 0, biased = 0;
        int64_t total = 0;
        for (size_t j = i; j < bd_graph_num_nodes(g) && n < QKV_MAX; j++) {
            bd_node *c = bd_graph_node(g, j);
            if (!candidate(c, x, k))
                continue;
            ms[n] = (member){ .mm = c, .n = c->inputs[1]->shape.dims[1] };
            find_bias(g, &ms[n]);
            biased += ms[n].add != NULL;
            total += ms[n].n;
            n++;
        }
        if (n < 2)
            continue;
        bool with_bias = biased == n;
        for (size_t m = 0; m < n && !with_bias; m++) {   /* mixed: keep every Add outside */
            ms[m].add = NULL;
            ms[m].bias = NULL;
            ms[m].out = ms[m].mm->outputs[0];
        }
        if (!target_takes(g, target, ms, n, x, k, total, bd_graph_opset(g)))
            continue;
        int rc = rewrite(g, ms, n, x, k, total, with_bias, err);
        if (rc)
            return rc;
        rewrites++;
        i = (size_t)-1;   /* node order changed: rescan */
    }
    return rewrites;
}
