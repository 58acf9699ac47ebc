/* braid inspect MODEL: signature, op histogram, fused composites, backend support per node. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engines.h"
#include "cli/cli.h"
#include "runtime/import.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid inspect MODEL [--threads N] [--fallback-ops A,B] [--engine LIST]\n"
        "\n"
        "Print MODEL's inputs and outputs, its operator histogram as imported, the composites\n"
        "braid fused, the subgraphs of its plan (backend, node count, boundary tensors) and,\n"
        "for every node not on oneDNN, the reason (unsupported op, attribute, dtype, dynamic\n"
        "shape, forced, cost), and where loading went (open, then the plan's phases).\n"
        "\n"
        "  -t, --threads N            oneDNN threads the plan is compiled for (default: all cores)\n"
        "%s"
        "  -h, --help                 this text\n", cli_placement_usage);
}

static void print_values(const char *title, size_t n, bd_value *(*get)(const bd_graph *, size_t),
                         const bd_graph *g)
{
    printf("%s:\n", title);
    for (size_t i = 0; i < n; i++) {
        const bd_value *v = get(g, i);
        char buf[128];
        printf("  %-24s %-5s %s\n", v->name, bd_dtype_name(v->dtype), bd_shape_str(&v->shape, buf, sizeof buf));
    }
}

typedef struct op_count { const char *op; int n; } op_count;

static int by_count(const void *a, const void *b)
{
    const op_count *x = a, *y = b;
    return x->n != y->n ? y->n - x->n : strcmp(x->op, y->op);
}

static void print_histogram(const char *title, const bd_graph *g, int composites)
{
    size_t n = bd_graph_num_nodes(g), k = 0;
    op_count *c = calloc(n ? n : 1, sizeof *c);
    if (!c)
        return;
    for (size_t i = 0; i < n; i++) {
        const bd_node *nd = bd_graph_node(g, i);
        const char *op = composites ? nd->composite : nd->op_type;
        if (!op)
            continue;
        size_t j = 0;
        while (j < k && strcmp(c[j].op, op) != 0)
            j++;
        if (j == k)
            c[k++] = (op_count){ op, 0 };
        c[j].n++;
    }
    qsort(c, k, sizeof *c, by_count);
    printf("%s:\n", title);
    if (k == 0)
        printf("  (none)\n");
    for (size_t j = 0; j < k; j++)
        printf("  %5d  %s\n", c[j].n, c[j].op);
    free(c);
}

static void print_tensors(const char *title, bd_value *const *v, size_t n)
{
    printf("      %s:", title);
    if (n == 0)
        printf(" (none)");
    for (size_t i = 0; i < n && i < 8; i++) {
        char buf[96];
        printf(" %s %s", v[i]->name, bd_shape_str(&v[i]->shape, buf, sizeof buf));
        if (i + 1 < n)
            printf(",");
    }
    if (n > 8)
        printf(" ... (%zu in all)", n);
    printf("\n");
}

/* Every subgraph, and every node not on oneDNN with the reason. */
static void print_partition(const bd_partition_report *r)
{
    printf("per run: %zu kernel step(s), %zu layout reorder(s) writing %.2f MB, %zu reference kernel(s)\n",
           r->run.steps, r->run.reorders, (double)r->run.reorder_bytes / 1e6, r->run.ref_steps);
    if (r->run.products)
        printf("precision: %zu of %zu convolutions and matrix products in int8, the rest in FP32\n",
               r->run.int8_products, r->run.products);
    printf("subgraphs (in execution order):\n");
    for (size_t i = 0; i < r->n_subgraphs; i++) {
        const bd_subgraph_info *s = &r->subgraphs[i];
        printf("  #%zu %-5s %4zu node(s) from '%s': %zu step(s) per run, %zu reorder(s) (%.2f MB)", i,
               s->backend, s->n_nodes, s->first_node, s->run.steps, s->run.reorders,
               (double)s->run.reorder_bytes / 1e6);
        if (s->run.const_bytes)
            printf(", weights %.2f MB in its layout", (double)s->run.const_bytes / 1e6);
        if (s->run.ref_steps)
            printf(", %zu REFERENCE kernel(s)", s->run.ref_steps);
        printf("\n");
        if (s->run.impls)
            printf("      implementations: %s\n", s->run.impls);
        if (s->run.products)
            printf("      precision: %s (%zu of %zu products in int8)\n",
                   !s->run.int8_products ? "FP32" : s->run.int8_products == s->run.products ? "int8" : "mixed",
                   s->run.int8_products, s->run.products);
        print_tensors("inputs ", s->inputs, s->n_inputs);
        print_tensors("outputs", s->outputs, s->n_outputs);
    }
    printf("nodes not on oneDNN: %zu\n", r->n_fallback);
    for (size_t i = 0; i < r->n_fallback; i++) {
        const bd_fallback_info *f = &r->fallback[i];
        printf("  %-28s %-18s -> %-5s %s: %s\n", f->node, f->op_type, f->backend, f->reason, f->detail);
    }
}

int cmd_inspect(int argc, char **argv)
{
    static const struct option opts[] = {
        { "threads", required_argument, 0, 't' }, { "help", no_argument, 0, 'h' },
        CLI_PLACEMENT_OPTIONS, { 0 },
    };
    cli_placement pl = { 0 };
    int c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:h", opts, NULL)) != -1) {
        if (c == 't') {
            if ((pl.model.threads = cli_parse_count("--threads", optarg)) < 0)
                return CLI_USAGE;
            continue;
        }
        if ((rc = cli_placement_option(c, optarg, &pl, usage)) >= 0)
            return rc;
    }
    if (optind != argc - 1) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *path = argv[optind];
    bd_error err = { 0 };
    bd_graph *raw = NULL;
    if (cli_placement_configure(&pl, &err) ||
        bd_import_model(path, pl.model.signature, &raw, &err) || bd_graph_validate(raw, &err)) {
        cli_error("cannot import the model", &err);
        bd_graph_destroy(raw);
        return CLI_FAIL;
    }
    printf("model: %s (opset %lld, %zu nodes)\n", path, (long long)bd_graph_opset(raw),
           bd_graph_num_nodes(raw));
    print_values("inputs", bd_graph_num_inputs(raw), bd_graph_input, raw);
    print_values("outputs", bd_graph_num_outputs(raw), bd_graph_output, raw);
    print_histogram("operators", raw, 0);
    bd_graph_destroy(raw);

    /* Fusion and placement are decided per plan (concrete input shapes): show the plan for
     * the model's own shapes, with dynamic dims taken as 1. */
    bd_model *m = NULL;
    cli_inputs in = { 0 };
    const bd_plan *plan = NULL;
    static const char *const what[3] = { "cannot plan the model", "cannot plan the model",
                                         "cannot plan the model" };
    if (cli_model_prepare(path, &pl, &in, 1, what, &m, &plan, NULL)) {
        cli_inputs_free(&in);
        bd_model_close(m);
        return CLI_FAIL;
    }
    const bd_graph *g = bd_plan_graph(plan);
    printf("plan (dynamic dims = 1): %zu nodes after fusion, %zu step(s), arena %.2f MiB\n",
           bd_graph_num_nodes(g), bd_plan_num_steps(plan), bd_plan_arena_size(plan) / 1048576.0);
    print_histogram("fused composites", g, 1);
    size_t nb;
    const bd_backend *const *backends = bd_backends(&nb);
    printf("placement:\n");
    for (size_t b = 0; b < nb; b++) {
        size_t on = 0;
        for (size_t i = 0; i < bd_graph_num_nodes(g); i++)
            on += bd_graph_node(g, i)->backend == (int)b;
        printf("  %-6s %zu of %zu nodes\n", backends[b]->name, on, bd_graph_num_nodes(g));
    }
    print_partition(bd_plan_partition(plan));
    cli_print_load_timings(m, plan);
    cli_inputs_free(&in);
    bd_model_close(m);
    return CLI_OK;
}
