/* Placement passes on small hand-built graphs with fake backends: annotation (first backend
 * wins, reasons, forcing, dynamic shapes), region merging (chains, diamonds that would form a
 * cycle), partitioning (order, boundary tensors) and the cost rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "partitioner/passes/partition.h"
#include "tests/lib/tl_graph.h"

/* "fast" runs everything but ops starting with 'X' (and only static shapes, as oneDNN);
 * "slow" runs everything but braid composites and ops named "Weird". */
static bool fast_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->op_type[0] == 'X') {
        snprintf(why, len, "op %s is not supported by fast", n->op_type);
        return false;
    }
    if (!strcmp(n->op_type, "Strided")) {
        snprintf(why, len, "attribute strides unsupported");
        return false;
    }
    if (!strcmp(n->op_type, "Int")) {
        snprintf(why, len, "input is not FP32");
        return false;
    }
    return true;
}

static bool slow_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (!strcmp(n->domain, "braid") || !strcmp(n->op_type, "Weird")) {
        snprintf(why, len, "slow cannot run %s", n->op_type);
        return false;
    }
    return true;
}

static const bd_backend fast = { .name = "fast", .kind = BD_ENGINE_FAST_PATH, .supports = fast_supports };
static const bd_backend slow = { .name = "slow", .kind = BD_ENGINE_FALLBACK, .supports = slow_supports };
static const bd_backend *const backends[] = { &fast, &slow };
#define NB 2

/* A [1, n] float tensor. */
static bd_value *tensor(bd_graph *g, const char *name, int64_t n)
{
    return tl_value(g, name, BD_DT_FLOAT, 2, (const int64_t[]){ 1, n });
}

static bd_node *find(bd_graph *g, const char *name)
{
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++)
        if (!strcmp(bd_graph_node(g, i)->name, name))
            return bd_graph_node(g, i);
    fail_msg("no node %s", name);
    return NULL;
}

/* Annotate with OPTS and merge regions; REGION/PLACES must hold the graph's node count. */
static void place(bd_graph *g, const bd_placement_opts *opts, bd_node_place *places, int *region, size_t *nr)
{
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    assert_int_equal(bd_annotate(g, backends, NB, opts, places, NULL), 0);
    assert_int_equal(bd_region_merge(g, region, nr, NULL), 0);
}

#define REGION(name) region[find(g, name)->index]

/* ---- annotation ------------------------------------------------------------------------ */

static void test_annotate_first_backend_wins_with_reasons(void **state)
{
    bd_graph *g = bd_graph_create("a");
    bd_value *x = tensor(g, "x", 4), *y = tensor(g, "y", 4), *z = tensor(g, "z", 4), *w = tensor(g, "w", 4);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, w, NULL);
    tl_op(g, "relu", "Relu", &x, 1, y);
    tl_op(g, "topk", "XTopK", &y, 1, z);
    tl_op(g, "str", "Strided", &z, 1, w);
    bd_node_place pl[3];
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    assert_int_equal(bd_annotate(g, backends, NB, NULL, pl, NULL), 0);
    assert_int_equal(find(g, "relu")->backend, 0);
    assert_int_equal(find(g, "topk")->backend, 1);
    assert_int_equal(find(g, "str")->backend, 1);
    assert_int_equal(pl[find(g, "relu")->index].reason[0], BD_REASON_NONE);
    assert_int_equal(pl[find(g, "topk")->index].reason[0], BD_REASON_OP);
    assert_non_null(strstr(pl[find(g, "topk")->index].why[0], "XTopK"));
    assert_int_equal(pl[find(g, "str")->index].reason[0], BD_REASON_ATTRIBUTE);
    assert_string_equal(bd_reason_name(BD_REASON_OP), "unsupported op");
    bd_graph_destroy(g);
}

static void test_annotate_dtype_and_dynamic_shape(void **state)
{
    bd_graph *g = bd_graph_create("d");
    bd_value *x = tensor(g, "x", 4), *y = tensor(g, "y", 4), *z = tensor(g, "z", 4);
    y->shape.dims[1] = -1;                 /* known only at run time */
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, z, NULL);
    tl_op(g, "nz", "Relu", &x, 1, y);
    tl_op(g, "cast", "Int", &y, 1, z);
    bd_node_place pl[2];
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    assert_int_equal(bd_annotate(g, backends, NB, NULL, pl, NULL), 0);
    /* both touch the dynamic value: never offered to the fast backend */
    assert_int_equal(find(g, "nz")->backend, 1);
    assert_int_equal(pl[find(g, "nz")->index].reason[0], BD_REASON_DYNAMIC);
    assert_non_null(strstr(pl[find(g, "nz")->index].why[0], "'y'"));
    y->shape.dims[1] = 4;
    assert_int_equal(bd_annotate(g, backends, NB, NULL, pl, NULL), 0);
    assert_int_equal(find(g, "nz")->backend, 0);
    assert_int_equal(pl[find(g, "cast")->index].reason[0], BD_REASON_DTYPE);
    bd_graph_destroy(g);
}

static void test_annotate_forced_ops_and_engine(void **state)
{
    bd_graph *g = bd_graph_create("f");
    bd_value *x = tensor(g, "x", 4), *y = tensor(g, "y", 4), *z = tensor(g, "z", 4);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, z, NULL);
    tl_op(g, "sm", "Softmax", &x, 1, y);
    tl_op(g, "relu", "Relu", &y, 1, z);
    bd_node_place pl[2];
    assert_int_equal(bd_graph_validate(g, NULL), 0);

    bd_placement_opts o = { .fallback_ops = " Erf , Softmax" };
    assert_int_equal(bd_annotate(g, backends, NB, &o, pl, NULL), 0);
    assert_int_equal(find(g, "sm")->backend, 1);
    assert_int_equal(pl[find(g, "sm")->index].reason[0], BD_REASON_FORCED);
    assert_int_equal(find(g, "relu")->backend, 0);
    /* a prefix of a listed name is not a match */
    o.fallback_ops = "Soft,Relux";
    assert_int_equal(bd_annotate(g, backends, NB, &o, pl, NULL), 0);
    assert_int_equal(find(g, "sm")->backend, 0);

    bd_placement_opts e = { .engine = "slow" };
    assert_int_equal(bd_annotate(g, backends, NB, &e, pl, NULL), 0);
    assert_int_equal(find(g, "sm")->backend, 1);
    assert_int_equal(find(g, "relu")->backend, 1);
    assert_int_equal(pl[find(g, "relu")->index].reason[0], BD_REASON_FORCED);

    e.engine = "auto";
    assert_int_equal(bd_annotate(g, backends, NB, &e, pl, NULL), 0);
    assert_int_equal(find(g, "relu")->backend, 0);

    bd_error err = { 0 };
    e.engine = "tvm";
    assert_int_equal(bd_annotate(g, backends, NB, &e, pl, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "tvm"));
    assert_non_null(strstr(err.msg, "slow"));

    /* a list of engines allows exactly those, in table order, whatever the list's order */
    e.engine = " slow , fast";
    assert_int_equal(bd_annotate(g, backends, NB, &e, pl, NULL), 0);
    assert_int_equal(find(g, "relu")->backend, 0);
    e.engine = "slow,tvm";
    assert_int_equal(bd_annotate(g, backends, NB, &e, pl, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "'tvm'"));
    e.engine = " , ";
    assert_int_equal(bd_annotate(g, backends, NB, &e, pl, &err), BD_EINVAL);

    /* pinning marks exactly the forced nodes */
    assert_int_equal(bd_place_pin(g, &o), 0);
    o.fallback_ops = "Relu";
    assert_int_equal(bd_place_pin(g, &o), 1);
    assert_int_equal(find(g, "relu")->backend, BD_BACKEND_PINNED);
    bd_graph_destroy(g);
}

/* prefer_fallback_ops offers an op to the fallbacks first; one no fallback runs (Weird) or
 * with no fallback allowed, it goes where it would have gone. */
static void test_annotate_prefers_fallback_softly(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("p");
    bd_value *x = tensor(g, "x", 4), *y = tensor(g, "y", 4), *z = tensor(g, "z", 4);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, z, NULL);
    tl_op(g, "lstm", "Lstm", &x, 1, y);
    tl_op(g, "w", "Weird", &y, 1, z);
    bd_node_place pl[2];
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    bd_placement_opts o = { .prefer_fallback_ops = "Lstm,Weird" };
    assert_int_equal(bd_annotate(g, backends, NB, &o, pl, NULL), 0);
    assert_int_equal(find(g, "lstm")->backend, 1);
    assert_int_equal(pl[find(g, "lstm")->index].reason[0], BD_REASON_COST);
    assert_non_null(strstr(pl[find(g, "lstm")->index].why[0], "slow runs Lstm faster"));
    assert_int_equal(find(g, "w")->backend, 0);                /* slow refuses Weird */
    o.engine = "fast";
    assert_int_equal(bd_annotate(g, backends, NB, &o, pl, NULL), 0);
    assert_int_equal(find(g, "lstm")->backend, 0);
    bd_graph_destroy(g);
}

static void test_annotate_no_backend_names_the_node(void **state)
{
    bd_graph *g = bd_graph_create("n");
    bd_value *x = tensor(g, "x", 4), *y = tensor(g, "y", 4);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    tl_op(g, "odd", "Weird", &x, 1, y);
    bd_node_place pl[1];
    bd_error err = { 0 };
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    assert_int_equal(bd_annotate(g, backends, NB, NULL, pl, &err), 0);        /* fast takes it */
    /* forced off fast, and slow cannot run it: nobody can */
    bd_placement_opts o = { .fallback_ops = "Weird" };
    assert_int_equal(bd_annotate(g, backends, NB, &o, pl, &err), BD_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "'odd'"));
    assert_non_null(strstr(err.msg, "fast: op Weird is in fallback_ops"));
    assert_non_null(strstr(err.msg, "slow: slow cannot run Weird"));
    assert_int_equal(find(g, "odd")->backend, -1);
    bd_graph_destroy(g);
}

/* Many ops nobody runs: the message lists whole op names, then ", ..." — never a cut name. */
static void test_annotate_no_backend_lists_whole_op_names(void **state)
{
    bd_graph *g = bd_graph_create("many");
    bd_value *prev = tensor(g, "x", 4);
    bd_graph_mark_input(g, prev, NULL);
    enum { N = 24 };
    for (int i = 0; i < N; i++) {
        char op[32], name[16], out[16];
        snprintf(op, sizeof op, "XLongOperatorName%02d", i);   /* fast: no; slow: braid domain */
        snprintf(name, sizeof name, "n%d", i);
        snprintf(out, sizeof out, "v%d", i);
        bd_value *v = tensor(g, out, 4);
        bd_value *const in[1] = { prev }, *const outs[1] = { v };
        tl_node(g, name, op, "braid", in, 1, outs, 1);
        prev = v;
    }
    bd_graph_mark_output(g, prev, NULL);
    bd_node_place pl[N];
    bd_error err = { 0 };
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    assert_int_equal(bd_annotate(g, backends, NB, NULL, pl, &err), BD_EUNSUPPORTED);
    const char *ops = strstr(err.msg, "(ops ");
    const char *end = ops ? strstr(ops, "):") : NULL;
    assert_non_null(end);
    assert_non_null(strstr(ops, ", ...)"));              /* more than the list holds */
    for (const char *p = ops + 5; p < end;) {            /* every item whole, or "..." */
        size_t n = strcspn(p, ",)");
        if (!(n == 3 && !strncmp(p, "...", 3)) &&
            !(n == 19 && !strncmp(p, "XLongOperatorName", 17)))
            fail_msg("a cut op name in '%.*s'", (int)(end - ops), ops);
        p += n;
        p += *p == ',' ? 2 : 1;
    }
    bd_graph_destroy(g);
}

/* ---- region merging and partitioning ---------------------------------------------------- */

static void test_region_merge_chain_is_one_region(void **state)
{
    bd_graph *g = bd_graph_create("c");
    bd_value *v[5];
    char name[8];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "v%d", i);
        v[i] = tensor(g, name, 4);
    }
    bd_graph_mark_input(g, v[0], NULL);
    bd_graph_mark_output(g, v[4], NULL);
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "n%d", i);
        tl_op(g, name, "Relu", &v[i], 1, v[i + 1]);
    }
    bd_node_place pl[4];
    int region[4];
    size_t nr;
    place(g, NULL, pl, region, &nr);
    assert_int_equal(nr, 1);
    bd_part *parts;
    size_t np;
    assert_int_equal(bd_partition(g, region, nr, &parts, &np, NULL), 0);
    assert_int_equal(np, 1);
    assert_int_equal(parts[0].n_nodes, 4);
    assert_int_equal(parts[0].n_inputs, 1);
    assert_ptr_equal(parts[0].inputs[0], v[0]);
    assert_int_equal(parts[0].n_outputs, 1);
    assert_ptr_equal(parts[0].outputs[0], v[4]);
    bd_parts_free(parts, np);
    bd_graph_destroy(g);
}

/* A(fast) -> B(slow) -> D(fast) and A -> C(fast) -> D: A, C, D are connected through fast
 * nodes, but {A,C,D} would feed B and read it back. D must stay apart. */
static void test_region_merge_diamond_would_cycle(void **state)
{
    bd_graph *g = bd_graph_create("diamond");
    bd_value *x = tensor(g, "x", 4), *a = tensor(g, "a", 4), *b = tensor(g, "b", 4),
             *c = tensor(g, "c", 4), *d = tensor(g, "d", 4);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, d, NULL);
    tl_op(g, "A", "Relu", &x, 1, a);
    tl_op(g, "B", "XTopK", &a, 1, b);
    tl_op(g, "C", "Relu", &a, 1, c);
    tl_op(g, "D", "Add", (bd_value *[]){ b, c }, 2, d);
    bd_node_place pl[4];
    int region[4];
    size_t nr;
    place(g, NULL, pl, region, &nr);
    assert_int_equal(nr, 3);
    assert_int_equal(REGION("A"), REGION("C"));
    assert_int_not_equal(REGION("A"), REGION("D"));
    assert_int_not_equal(REGION("B"), REGION("D"));

    bd_part *parts;
    size_t np;
    assert_int_equal(bd_partition(g, region, nr, &parts, &np, NULL), 0);
    assert_int_equal(np, 3);
    /* order: {A,C} then {B} then {D} */
    assert_int_equal(parts[0].n_nodes, 2);
    assert_int_equal(parts[0].backend, 0);
    assert_int_equal(parts[1].backend, 1);
    assert_string_equal(parts[2].nodes[0]->name, "D");
    /* {A,C} hands a to B and c to D */
    assert_int_equal(parts[0].n_outputs, 2);
    assert_int_equal(parts[2].n_inputs, 2);
    bd_parts_free(parts, np);
    bd_graph_destroy(g);
}

/* The mirror image: A -> B(fast) -> D and A -> C(slow) -> D, all else fast. */
static void test_region_merge_diamond_other_branch(void **state)
{
    bd_graph *g = bd_graph_create("diamond2");
    bd_value *x = tensor(g, "x", 4), *a = tensor(g, "a", 4), *b = tensor(g, "b", 4),
             *c = tensor(g, "c", 4), *d = tensor(g, "d", 4);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, d, NULL);
    tl_op(g, "A", "Relu", &x, 1, a);
    tl_op(g, "B", "Relu", &a, 1, b);
    tl_op(g, "C", "XTopK", &a, 1, c);
    tl_op(g, "D", "Add", (bd_value *[]){ b, c }, 2, d);
    bd_node_place pl[4];
    int region[4];
    size_t nr;
    place(g, NULL, pl, region, &nr);
    assert_int_equal(nr, 3);
    assert_int_equal(REGION("A"), REGION("B"));
    assert_int_not_equal(REGION("A"), REGION("D"));
    bd_graph_destroy(g);
}

/* No cycle possible: a fast diamond around nothing, plus a slow side branch off A that is a
 * graph output. Everything fast is one region. */
static void test_region_merge_side_branch_merges(void **state)
{
    bd_graph *g = bd_graph_create("side");
    bd_value *x = tensor(g, "x", 4), *a = tensor(g, "a", 4), *b = tensor(g, "b", 4),
             *c = tensor(g, "c", 4), *d = tensor(g, "d", 4), *s = tensor(g, "s", 4);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, d, NULL);
    bd_graph_mark_output(g, s, NULL);
    tl_op(g, "A", "Relu", &x, 1, a);
    tl_op(g, "B", "Relu", &a, 1, b);
    tl_op(g, "C", "Relu", &a, 1, c);
    tl_op(g, "D", "Add", (bd_value *[]){ b, c }, 2, d);
    tl_op(g, "S", "XTopK", &a, 1, s);
    bd_node_place pl[5];
    int region[5];
    size_t nr;
    place(g, NULL, pl, region, &nr);
    assert_int_equal(nr, 2);
    assert_int_equal(REGION("A"), REGION("D"));
    assert_int_equal(REGION("B"), REGION("C"));
    bd_part *parts;
    size_t np;
    assert_int_equal(bd_partition(g, region, nr, &parts, &np, NULL), 0);
    assert_int_equal(parts[0].n_nodes, 4);
    assert_int_equal(parts[0].n_outputs, 2);     /* a for S, d for the caller */
    assert_int_equal(parts[1].n_inputs, 1);
    assert_ptr_equal(parts[1].inputs[0], a);
    bd_parts_free(parts, np);
    bd_graph_destroy(g);
}

/* Alternating fast/slow/fast/slow: every change of backend is a new region, in order. */
static void test_partition_alternating_order(void **state)
{
    bd_graph *g = bd_graph_create("alt");
    bd_value *v[7];
    char name[8];
    for (int i = 0; i < 7; i++) {
        snprintf(name, sizeof name, "v%d", i);
        v[i] = tensor(g, name, 4);
    }
    bd_graph_mark_input(g, v[0], NULL);
    bd_graph_mark_output(g, v[6], NULL);
    const char *types[] = { "Relu", "Relu", "XTopK", "Relu", "XNms", "XNms" };
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "n%d", i);
        tl_op(g, name, types[i], &v[i], 1, v[i + 1]);
    }
    bd_node_place pl[6];
    int region[6];
    size_t nr;
    place(g, NULL, pl, region, &nr);
    assert_int_equal(nr, 4);
    bd_part *parts;
    size_t np;
    assert_int_equal(bd_partition(g, region, nr, &parts, &np, NULL), 0);
    int want_backend[] = { 0, 1, 0, 1 };
    size_t want_nodes[] = { 2, 1, 1, 2 };
    for (size_t i = 0; i < np; i++) {
        assert_int_equal(parts[i].backend, want_backend[i]);
        assert_int_equal(parts[i].n_nodes, want_nodes[i]);
        assert_int_equal(parts[i].n_inputs, 1);
        assert_int_equal(parts[i].n_outputs, 1);
    }
    assert_ptr_equal(parts[1].inputs[0], parts[0].outputs[0]);
    bd_parts_free(parts, np);
    bd_graph_destroy(g);
}

static void test_partition_skips_constants(void **state)
{
    bd_graph *g = bd_graph_create("k");
    bd_value *x = tensor(g, "x", 4), *w = tensor(g, "w", 4), *y = tensor(g, "y", 4);
    static const float wd[4] = { 1, 2, 3, 4 };
    w->data = wd;
    w->nbytes = sizeof wd;
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    tl_op(g, "add", "Add", (bd_value *[]){ x, w }, 2, y);
    bd_node_place pl[1];
    int region[1];
    size_t nr;
    place(g, NULL, pl, region, &nr);
    bd_part *parts;
    size_t np;
    assert_int_equal(bd_partition(g, region, nr, &parts, &np, NULL), 0);
    assert_int_equal(parts[0].n_inputs, 1);
    assert_ptr_equal(parts[0].inputs[0], x);
    bd_parts_free(parts, np);
    bd_graph_destroy(g);
}

/* ---- cost rule ------------------------------------------------------------------------- */

/* slow -> ISLAND -> slow, the island being NODES fast nodes of type TYPE. */
static bd_graph *island_graph(const char *type, int64_t width)
{
    bd_graph *g = bd_graph_create("island");
    bd_value *x = tensor(g, "x", width), *a = tensor(g, "a", width), *b = tensor(g, "b", width),
             *c = tensor(g, "c", width);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, c, NULL);
    tl_op(g, "S1", "XTopK", &x, 1, a);
    tl_op(g, "F", type, &a, 1, b);
    tl_op(g, "S2", "XNms", &b, 1, c);
    return g;
}

static void test_cost_rule_moves_small_island(void **state)
{
    bd_graph *g = island_graph("Relu", 16);
    bd_node_place pl[3];
    int region[3];
    size_t nr;
    place(g, NULL, pl, region, &nr);
    assert_int_equal(nr, 3);
    assert_int_equal(bd_cost_rule(g, backends, NB, 1e6, region, nr, pl), 1);
    assert_int_equal(find(g, "F")->backend, 1);
    assert_int_equal(pl[find(g, "F")->index].reason[0], BD_REASON_COST);
    assert_non_null(strstr(pl[find(g, "F")->index].why[0], "16 FLOPs"));
    assert_int_equal(bd_region_merge(g, region, &nr, NULL), 0);
    assert_int_equal(nr, 1);
    bd_graph_destroy(g);
}

static void test_cost_rule_keeps_heavy_island(void **state)
{
    bd_graph *g = island_graph("Relu", 16);
    bd_node_place pl[3];
    int region[3];
    size_t nr;
    place(g, NULL, pl, region, &nr);
    assert_int_equal(bd_cost_rule(g, backends, NB, 16, region, nr, pl), 0);     /* 16 is not < 16 */
    assert_int_equal(bd_cost_rule(g, backends, NB, 0, region, nr, pl), 0);      /* rule off */
    assert_int_equal(bd_cost_rule(g, backends, NB, -1, region, nr, pl), 0);
    assert_int_equal(find(g, "F")->backend, 0);
    bd_graph_destroy(g);
}

static void test_cost_rule_needs_fallback_support(void **state)
{
    bd_graph *g = island_graph("Gelu", 16);
    find(g, "F")->domain = "braid";       /* a composite the fallback cannot express */
    bd_node_place pl[3];
    int region[3];
    size_t nr;
    place(g, NULL, pl, region, &nr);
    assert_int_equal(bd_cost_rule(g, backends, NB, 1e6, region, nr, pl), 0);
    assert_int_equal(find(g, "F")->backend, 0);
    bd_graph_destroy(g);
}

static void test_cost_rule_counts_only_region_neighbours(void **state)
{
    /* x -> F(fast) -> S(slow): F's only neighbour is slow, so it moves (graph inputs do not
     * count); an all-fast graph has no island. */
    bd_graph *g = bd_graph_create("edge");
    bd_value *x = tensor(g, "x", 4), *a = tensor(g, "a", 4), *b = tensor(g, "b", 4);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, b, NULL);
    tl_op(g, "F", "Relu", &x, 1, a);
    tl_op(g, "S", "XTopK", &a, 1, b);
    bd_node_place pl[2];
    int region[2];
    size_t nr;
    place(g, NULL, pl, region, &nr);
    assert_int_equal(bd_cost_rule(g, backends, NB, 1e6, region, nr, pl), 1);
    bd_graph_destroy(g);

    g = bd_graph_create("allfast");
    x = tensor(g, "x", 4), a = tensor(g, "a", 4), b = tensor(g, "b", 4);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, b, NULL);
    tl_op(g, "F", "Relu", &x, 1, a);
    tl_op(g, "G", "Relu", &a, 1, b);
    place(g, NULL, pl, region, &nr);
    assert_int_equal(bd_cost_rule(g, backends, NB, 1e6, region, nr, pl), 0);
    bd_graph_destroy(g);
}

/* The fast path is the backend of kind FAST_PATH wherever it sits in the table: behind a
 * "glue" engine listed first, forcing, dynamic shapes and the cost rule still single it out. */
static bool glue_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (strcmp(n->op_type, "Glue") != 0) {
        snprintf(why, len, "op %s is not supported by glue", n->op_type);
        return false;
    }
    return true;
}

static void test_fast_path_is_its_kind_not_its_index(void **state)
{
    static const bd_backend glue = { .name = "glue", .kind = BD_ENGINE_NATIVE, .supports = glue_supports };
    static const bd_backend *const table[] = { &glue, &fast, &slow };
    bd_graph *g = island_graph("Relu", 16);
    bd_node_place pl[3];
    int region[3];
    size_t nr;
    bd_node *f = find(g, "F");
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    assert_int_equal(bd_annotate(g, table, 3, NULL, pl, NULL), 0);
    assert_int_equal(f->backend, 1);
    assert_int_equal(pl[f->index].reason[0], BD_REASON_OP);           /* glue was asked first */
    assert_int_equal(find(g, "S1")->backend, 2);

    /* the cost rule moves the fast island (index 1) to its neighbours' engine */
    assert_int_equal(bd_region_merge(g, region, &nr, NULL), 0);
    assert_int_equal(bd_cost_rule(g, table, 3, 1e6, region, nr, pl), 1);
    assert_int_equal(f->backend, 2);
    assert_int_equal(pl[f->index].reason[1], BD_REASON_COST);
    assert_int_equal(pl[f->index].reason[0], BD_REASON_OP);

    /* fallback_ops keeps a node off the fast path, not off the engine at index 0 */
    bd_placement_opts o = { .fallback_ops = "Relu" };
    assert_int_equal(bd_annotate(g, table, 3, &o, pl, NULL), 0);
    assert_int_equal(f->backend, 2);
    assert_int_equal(pl[f->index].reason[1], BD_REASON_FORCED);

    /* a dynamic shape keeps it off the fast path too */
    f->outputs[0]->shape.dims[1] = -1;
    assert_int_equal(bd_annotate(g, table, 3, NULL, pl, NULL), 0);
    assert_int_equal(f->backend, 2);
    assert_int_equal(pl[f->index].reason[1], BD_REASON_DYNAMIC);
    f->outputs[0]->shape.dims[1] = 16;

    /* fallback_ops skips the native engine too (it is not asked); with no fallback among the
     * allowed engines, fallback_ops is ignored */
    assert_int_equal(bd_annotate(g, table, 3, &o, pl, NULL), 0);
    assert_int_equal(pl[f->index].reason[0], BD_REASON_FORCED);
    o.engine = "glue,fast";
    assert_int_equal(bd_annotate(g, table, 3, &o, pl, NULL), BD_EUNSUPPORTED);  /* S1, S2: slow only */
    assert_int_equal(f->backend, 1);
    bd_graph_destroy(g);
}

static void test_node_flops(void **state)
{
    bd_graph *g = bd_graph_create("flops");
    int64_t ad[] = { 2, 8, 16 }, wd[] = { 16, 4 }, yd[] = { 2, 8, 4 };
    int64_t xd[] = { 1, 3, 8, 8 }, kd[] = { 6, 3, 3, 3 }, od[] = { 1, 6, 6, 6 };
    bd_shape as = bd_shape_make(3, ad), ws = bd_shape_make(2, wd), ys = bd_shape_make(3, yd);
    bd_shape xs = bd_shape_make(4, xd), ks = bd_shape_make(4, kd), os = bd_shape_make(4, od);
    bd_value *a, *w, *y, *x, *k, *o, *r;
    bd_graph_add_value(g, "a", BD_DT_FLOAT, &as, &a, NULL);
    bd_graph_add_value(g, "w", BD_DT_FLOAT, &ws, &w, NULL);
    bd_graph_add_value(g, "y", BD_DT_FLOAT, &ys, &y, NULL);
    bd_graph_add_value(g, "x", BD_DT_FLOAT, &xs, &x, NULL);
    bd_graph_add_value(g, "k", BD_DT_FLOAT, &ks, &k, NULL);
    bd_graph_add_value(g, "o", BD_DT_FLOAT, &os, &o, NULL);
    bd_graph_add_value(g, "r", BD_DT_FLOAT, &ys, &r, NULL);
    bd_node *mm = tl_op(g, "mm", "MatMul", (bd_value *[]){ a, w }, 2, y);
    bd_node *cv = tl_op(g, "cv", "Conv", (bd_value *[]){ x, k }, 2, o);
    bd_node *rs = tl_op(g, "rs", "Reshape", &y, 1, r);
    assert_true(bd_node_flops(mm) == 2.0 * 2 * 8 * 4 * 16);
    assert_true(bd_node_flops(cv) == 2.0 * 6 * 6 * 6 * 27);
    assert_true(bd_node_flops(rs) == 0);
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_annotate_first_backend_wins_with_reasons),
        cmocka_unit_test(test_annotate_dtype_and_dynamic_shape),
        cmocka_unit_test(test_annotate_forced_ops_and_engine),
        cmocka_unit_test(test_annotate_prefers_fallback_softly),
        cmocka_unit_test(test_annotate_no_backend_names_the_node),
        cmocka_unit_test(test_annotate_no_backend_lists_whole_op_names),
        cmocka_unit_test(test_region_merge_chain_is_one_region),
        cmocka_unit_test(test_region_merge_diamond_would_cycle),
        cmocka_unit_test(test_region_merge_diamond_other_branch),
        cmocka_unit_test(test_region_merge_side_branch_merges),
        cmocka_unit_test(test_partition_alternating_order),
        cmocka_unit_test(test_partition_skips_constants),
        cmocka_unit_test(test_cost_rule_moves_small_island),
        cmocka_unit_test(test_cost_rule_keeps_heavy_island),
        cmocka_unit_test(test_cost_rule_needs_fallback_support),
        cmocka_unit_test(test_cost_rule_counts_only_region_neighbours),
        cmocka_unit_test(test_fast_path_is_its_kind_not_its_index),
        cmocka_unit_test(test_node_flops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
