/* braid inspect MODEL: signature, op histogram, fused composites, backend support per node. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/registry.h"
#include "cli.h"
#include "partitioner/import.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid inspect MODEL\n"
        "\n"
        "Print MODEL's inputs and outputs, its operator histogram as imported, the composites\n"
        "braid fused, and which nodes the oneDNN backend runs (with the reason for any it\n"
        "cannot).\n");
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

int cmd_inspect(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return CLI_OK;
    }
    if (argc != 2 || argv[1][0] == '-') {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *path = argv[1];
    bd_error err = { 0 };
    bd_graph *raw = NULL;
    if (bd_import_file(path, &raw, &err) || bd_graph_validate(raw, &err)) {
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

    /* Fusion and placement are decided per plan (static shapes): show the plan for the
     * model's own shapes, with dynamic dims taken as 1. */
    bd_model *m = NULL;
    cli_inputs in = { 0 };
    const bd_plan *plan = NULL;
    if (bd_model_open(path, NULL, &m, &err) || cli_inputs_load(&in, bd_model_graph(m), 1, &err) ||
        bd_model_plan(m, in.tensors, (size_t)in.n, &plan, &err)) {
        cli_error("cannot plan the model", &err);
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
    cli_inputs_free(&in);
    bd_model_close(m);
    return CLI_OK;
}
