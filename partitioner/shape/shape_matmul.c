/* MatMul (numpy semantics: 1-D promotion, broadcast batch dims), Gemm and Det. */
#include "partitioner/shape/shape_rules.h"

/* K of both operands must agree when both are known. */
static int check_k(const bd_node *n, const bd_value *a, int64_t ka, const bd_value *b, int64_t kb,
                   bd_error *err)
{
    if (ka >= 0 && kb >= 0 && ka != kb) {
        char sa[96], sb[96];
        return shp_fail(err, n, "inner dimensions differ: '%s' %s has K=%lld, '%s' %s has K=%lld",
                        a->name, shp_str(&a->shape, sa, sizeof sa), (long long)ka,
                        b->name, shp_str(&b->shape, sb, sizeof sb), (long long)kb);
    }
    return 0;
}

int shp_matmul(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *a = shp_in(n, 0), *b = shp_in(n, 1);
    int dtype = a->dtype != BD_DT_UNDEFINED ? a->dtype : b->dtype;
    if (!shp_ranked(a) || !shp_ranked(b)) {
        shp_set_unknown(n->outputs[0], dtype);
        return 0;
    }
    const bd_shape *as = &a->shape, *bs = &b->shape;
    if (as->rank < 1 || bs->rank < 1)
        return shp_fail(err, n, "MatMul operands must have rank >= 1 (got %d and %d)",
                        as->rank, bs->rank);
    /* Promote 1-D operands to matrices: [K] -> [1,K] on the left, [K,1] on the right. */
    bd_shape pa = shp_dynamic(0), pb = shp_dynamic(0);
    if (as->rank == 1) {
        pa.rank = 2;
        pa.dims[0] = 1;
        pa.dims[1] = as->dims[0];
    } else {
        pa = *as;
    }
    if (bs->rank == 1) {
        pb.rank = 2;
        pb.dims[0] = bs->dims[0];
        pb.dims[1] = 1;
    } else {
        pb = *bs;
    }
    if ((rc = check_k(n, a, pa.dims[pa.rank - 1], b, pb.dims[pb.rank - 2], err)))
        return rc;
    bd_shape ba = pa, bb = pb, s;
    ba.rank -= 2;
    bb.rank -= 2;
    if ((rc = shp_broadcast(n, &ba, &bb, &s, err)))
        return rc;
    if (as->rank > 1) {
        s.dims[s.rank] = pa.dims[pa.rank - 2];
        s.sym[s.rank++] = pa.sym[pa.rank - 2];
    }
    if (bs->rank > 1) {
        s.dims[s.rank] = pb.dims[pb.rank - 1];
        s.sym[s.rank++] = pb.sym[pb.rank - 1];
    }
    shp_set(n->outputs[0], dtype, &s);
    return 0;
}

/* Y = alpha * op(A) op(B) + beta * C, A and B 2-D, C unidirectionally broadcast to [M,N]. */
int shp_gemm(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *a = shp_in(n, 0), *b = shp_in(n, 1), *c = shp_in(n, 2);
    int64_t ta, tb;
    if ((rc = shp_attr_int(n, "transA", 0, &ta, err)) ||
        (rc = shp_attr_int(n, "transB", 0, &tb, err)))
        return rc;
    int dtype = a->dtype != BD_DT_UNDEFINED ? a->dtype : b->dtype;
    if (!shp_ranked(a) || !shp_ranked(b)) {
        shp_set_rank(n->outputs[0], dtype, 2);   /* Gemm is always 2-D */
        return 0;
    }
    if (a->shape.rank != 2 || b->shape.rank != 2)
        return shp_fail(err, n, "Gemm operands must be 2-D (got rank %d and %d)",
                        a->shape.rank, b->shape.rank);
    int am = ta ? 1 : 0, bn = tb ? 0 : 1;
    if ((rc = check_k(n, a, a->shape.dims[1 - am], b, b->shape.dims[1 - bn], err)))
        return rc;
    bd_shape s = shp_dynamic(2);
    s.dims[0] = a->shape.dims[am];
    s.sym[0]  = a->shape.sym[am];
    s.dims[1] = b->shape.dims[bn];
    s.sym[1]  = b->shape.sym[bn];
    if (shp_ranked(c)) {
        if (c->shape.rank > 2)
            return shp_fail(err, n, "C '%s' must have rank <= 2, got %d", c->name, c->shape.rank);
        for (int i = 0; i < c->shape.rank; i++) {
            int64_t dc = c->shape.dims[i], dy = s.dims[2 - c->shape.rank + i];
            if (dc >= 0 && dy >= 0 && dc != 1 && dc != dy) {
                char sc[96], sy[96];
                return shp_fail(err, n, "C '%s' %s does not broadcast to the result %s", c->name,
                                shp_str(&c->shape, sc, sizeof sc), shp_str(&s, sy, sizeof sy));
            }
        }
    }
    shp_set(n->outputs[0], dtype, &s);
    return 0;
}

/* Det(X [..., M, M]): the batch dims [...]. */
int shp_det(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    bd_value *x = shp_in(n, 0);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    const bd_shape *xs = &x->shape;
    int r = xs->rank;
    if (r < 2)
        return shp_fail(err, n, "input '%s' must have rank >= 2 ([..., M, M]), got %d", x->name, r);
    if (xs->dims[r - 1] >= 0 && xs->dims[r - 2] >= 0 && xs->dims[r - 1] != xs->dims[r - 2])
        return shp_fail(err, n, "input '%s' holds %lld x %lld matrices, not square ones", x->name,
                        (long long)xs->dims[r - 2], (long long)xs->dims[r - 1]);
    bd_shape s = *xs;
    s.rank = r - 2;
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}
