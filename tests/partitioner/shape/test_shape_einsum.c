/* Einsum: explicit and implicit outputs, ellipsis broadcasting, diagonals and sums, spaces,
 * symbolic dims passing through, and the equations a hostile model could get wrong. */
#include "tests/partitioner/shape/shape_test.h"

static const bd_shape unranked = { .rank = -1 };

static bd_node *einsum(bd_graph *g, const char *eq, bd_value *const *in, size_t n_in)
{
    bd_node *n = tnode(g, "Einsum", in, n_in, 1);
    tattr_str(g, n, "equation", eq);
    return n;
}
#define EINSUM(g, eq, ...) einsum(g, eq, (bd_value *[]){ __VA_ARGS__ }, \
                                  sizeof((bd_value *[]){ __VA_ARGS__ }) / sizeof(bd_value *))

static void test_einsum_explicit_and_implicit(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_FLOAT, S(-1, 4, 5), "batch");
    bd_value *b = tinput(g, "b", BD_DT_FLOAT, S(-1, 5, 6), "batch");
    bd_value *m = tinput(g, "m", BD_DT_FLOAT, S(3, 3), NULL);
    bd_value *v = tinput(g, "v", BD_DT_FLOAT, S(3), NULL);
    bd_node *bmm = EINSUM(g, "bij,bjk->bik", a, b);
    bd_node *tr = EINSUM(g, "ij->ji", m);
    bd_node *diag = EINSUM(g, "ii->i", m);
    bd_node *trace = EINSUM(g, "ii", m);                 /* implicit: no label used once */
    bd_node *sum = EINSUM(g, "ij->", m);
    bd_node *outer = EINSUM(g, "i,j", v, v);               /* implicit: i, j sorted */
    bd_node *implicit = EINSUM(g, "kj,ji", tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL),
                               tinput(g, "y", BD_DT_FLOAT, S(3, 4), NULL));   /* -> ik */
    bd_node *upper = EINSUM(g, "Ab,bc", tinput(g, "p", BD_DT_FLOAT, S(2, 3), NULL),
                            tinput(g, "q", BD_DT_FLOAT, S(3, 4), NULL));      /* A before c */
    bd_node *spaced = EINSUM(g, " b i j , b j k -> b i k ", a, b);
    tinfer(g, false);
    tassert_shape(tout(bmm, 0), S(-1, 4, 6));
    assert_string_equal(tout(bmm, 0)->shape.sym[0], "batch");
    tassert_shape(tout(tr, 0), S(3, 3));
    tassert_shape(tout(diag, 0), S(3));
    tassert_shape(tout(trace, 0), tscalar());
    tassert_shape(tout(sum, 0), tscalar());
    tassert_shape(tout(outer, 0), S(3, 3));
    tassert_shape(tout(implicit, 0), S(4, 2));             /* i (4), k (2): ASCII order */
    tassert_shape(tout(upper, 0), S(2, 4));
    tassert_shape(tout(spaced, 0), S(-1, 4, 6));
    assert_int_equal(tout(bmm, 0)->dtype, BD_DT_FLOAT);
    bd_graph_destroy(g);
}

static void test_einsum_ellipsis_broadcasts(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_FLOAT, S(2, 1, 4, 5), NULL);
    bd_value *b = tinput(g, "b", BD_DT_FLOAT, S(3, 5, 6), NULL);
    bd_value *c = tinput(g, "c", BD_DT_FLOAT, S(-1, 7, 4), "batch");
    bd_node *mm = EINSUM(g, "...ij,...jk->...ik", a, b);
    bd_node *impl = EINSUM(g, "...ij,...jk", a, b);        /* ellipsis dims first, then i, k */
    bd_node *summed = EINSUM(g, "...ij->ij", a);            /* an ellipsis the output lacks */
    bd_node *mid = EINSUM(g, "i...j->j...i", c);
    bd_node *none = EINSUM(g, "...i->...i", tinput(g, "s", BD_DT_FLOAT, S(4), NULL));
    bd_node *u = EINSUM(g, "ij,jk->ik", tinput(g, "u", BD_DT_FLOAT, unranked, NULL),
                        tinput(g, "w", BD_DT_FLOAT, S(5, 6), NULL));
    tinfer(g, false);
    tassert_shape(tout(mm, 0), S(2, 3, 4, 6));
    tassert_shape(tout(impl, 0), S(2, 3, 4, 6));
    tassert_shape(tout(summed, 0), S(4, 5));
    tassert_shape(tout(mid, 0), S(4, 7, -1));
    assert_string_equal(tout(mid, 0)->shape.sym[2], "batch");
    tassert_shape(tout(none, 0), S(4));
    assert_int_equal(tout(u, 0)->shape.rank, -1);
    bd_graph_destroy(g);
}

static void test_einsum_malformed(void **state)
{
    struct { const char *eq; size_t n_in; const char *want; } cases[] = {
        { "ij,jk->ik", 1, "has 2 terms for 1 inputs" },
        { "ij->ik", 1, "output label 'k' is in no input term" },
        { "ij->ii", 1, "output label 'i' is repeated" },
        { "ijk->i", 1, "term 0 has 3 labels for input" },
        { "i1->i", 1, "unexpected character '1'" },
        { "i..j->i", 1, "stray '.'" },
        { "......ij->ij", 1, "second ellipsis" },
        { "ij->i->j", 1, "more than one '->'" },
        { "ij,jk->ik", 2, "label 'j' has size 4 in input" },
        { "ij->i,j", 1, "unexpected character ','" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bd_graph *g = tgraph();
        bd_value *in[2] = { tinput(g, "a", BD_DT_FLOAT, S(2, 3), NULL),
                            tinput(g, "b", BD_DT_FLOAT, S(4, 5), NULL) };
        einsum(g, cases[i].eq, in, cases[i].n_in);
        tinfer_fails(g, false, BD_EMODEL, "Einsum", cases[i].want, NULL);
        bd_graph_destroy(g);
    }
    bd_graph *g = tgraph();
    TNODE(g, "Einsum", 1, tinput(g, "a", BD_DT_FLOAT, S(2), NULL));
    tinfer_fails(g, false, BD_EMODEL, "'equation' is required", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    EINSUM(g, "i,i->i", tinput(g, "a", BD_DT_FLOAT, S(2), NULL),
           tinput(g, "b", BD_DT_DOUBLE, S(2), NULL));
    tinfer_fails(g, false, BD_EMODEL, "input types differ", NULL);
    bd_graph_destroy(g);

    g = tgraph();                                          /* ellipses that do not broadcast */
    EINSUM(g, "...i,...i->...i", tinput(g, "a", BD_DT_FLOAT, S(2, 3), NULL),
           tinput(g, "b", BD_DT_FLOAT, S(4, 3), NULL));
    tinfer_fails(g, false, BD_EMODEL, "the ellipsis dims of input 'b'", NULL);
    bd_graph_destroy(g);

    g = tgraph();                                          /* more labels than any rank */
    EINSUM(g, "abcdefghi->a", tinput(g, "a", BD_DT_FLOAT, unranked, NULL));
    tinfer_fails(g, false, BD_EUNSUPPORTED, "more labels than braid's maximum rank", NULL);
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_einsum_explicit_and_implicit),
        cmocka_unit_test(test_einsum_ellipsis_broadcasts),
        cmocka_unit_test(test_einsum_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
