/* braid run MODEL --input NAME=FILE.npy ... [--output DIR] [--threads N] */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid run MODEL [--input NAME=FILE.npy]... [--output DIR] [--threads N]\n"
        "                 [--fallback-ops A,B] [--engine LIST]\n"
        "\n"
        "Run MODEL (.onnx, a GraphDef .pb, a TF.js model.json or a SavedModel directory) once on\n"
        "the given inputs and write each output to DIR/<name>.npy (or print a summary when\n"
        "--output is not given).\n"
        "\n"
        "  -i, --input NAME=FILE.npy  an input tensor (FILE.npy alone for a one-input model)\n"
        "  -o, --output DIR           directory for the outputs (created if missing)\n"
        "  -t, --threads N            oneDNN threads (default: all cores)\n"
        "%s"
        "  -h, --help                 this text\n", cli_placement_usage);
}

/* Output file name: the tensor name with path separators replaced. */
static void output_path(char *buf, size_t size, const char *dir, const char *name)
{
    int n = snprintf(buf, size, "%s/", dir);
    for (const char *c = name; *c && n + 5 < (int)size; c++)
        buf[n++] = (*c == '/' || *c == ':' || *c == '\\') ? '_' : *c;
    snprintf(buf + n, size - (size_t)n, ".npy");
}

static void print_summary(const char *name, const DLTensor *t)
{
    printf("%s: ", name);
    bd_shape s = { .rank = t->ndim };
    for (int d = 0; d < t->ndim; d++)
        s.dims[d] = t->shape[d];
    char buf[128];
    printf("%s %s", bd_dtype_name(bd_dtype_from_dl(t->dtype)), bd_shape_str(&s, buf, sizeof buf));
    if (t->dtype.code == kDLFloat && t->dtype.bits == 32) {
        int64_t n = bd_shape_numel(&s);
        printf(" [");
        for (int64_t i = 0; i < n && i < 6; i++)
            printf("%s%.6g", i ? ", " : "", ((const float *)t->data)[i]);
        printf("%s]", n > 6 ? ", ..." : "");
    }
    printf("\n");
}

int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        { "input", required_argument, 0, 'i' }, { "output", required_argument, 0, 'o' },
        { "threads", required_argument, 0, 't' }, { "help", no_argument, 0, 'h' },
        CLI_PLACEMENT_OPTIONS, { 0 },
    };
    cli_inputs in = { 0 };
    const char *outdir = NULL;
    cli_placement pl = { 0 };
    int c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "i:o:t:h", opts, NULL)) != -1) {
        switch (c) {
        case 'i': if (cli_inputs_add(&in, "run", optarg)) return CLI_USAGE; break;
        case 'o': outdir = optarg; break;
        case 't': if ((pl.model.threads = cli_parse_count("--threads", optarg)) < 0) return CLI_USAGE; break;
        default:
            if ((rc = cli_placement_option(c, optarg, &pl, usage)) >= 0)
                return rc;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *path = argv[optind];
    static const char *const what[3] = { "cannot load the model", "bad input", "run failed" };
    bd_error err = { 0 };
    bd_model *m = NULL;
    bd_exec *e = NULL;
    const bd_plan *plan;
    int status = cli_model_prepare(path, &pl, &in, 0, what, &m, &plan, &e);
    if (status)
        goto out;
    status = CLI_FAIL;
    if (bd_exec_run(e, in.tensors, (size_t)in.n, &err)) {
        cli_error("run failed", &err);
        goto out;
    }
    if (outdir && mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "braid: cannot create output directory '%s': %s\n", outdir, strerror(errno));
        goto out;
    }
    status = CLI_OK;
    for (size_t i = 0; i < bd_exec_num_outputs(e); i++) {
        const char *name = bd_graph_output(bd_plan_graph(plan), i)->name;
        const DLTensor *t = bd_exec_output(e, i);
        if (!outdir) {
            print_summary(name, t);
            continue;
        }
        char file[4096];
        output_path(file, sizeof file, outdir, name);
        if (bd_npy_write(file, t, &err)) {
            cli_error("cannot write an output", &err);
            status = CLI_FAIL;
            break;
        }
        printf("%s -> %s\n", name, file);
    }
out:
    bd_exec_destroy(e);
    cli_inputs_free(&in);
    bd_model_close(m);
    return status;
}
