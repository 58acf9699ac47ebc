/* braid infer MODEL --input NAME=FILE.npy ... [--output DIR] [--version V] [--server HOST:PORT] */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

#define MAX_IO 64

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid infer MODEL --input NAME=FILE.npy... [--output DIR] [--version V]\n"
        "                   [--request-output NAME]... [--server HOST:PORT] [--timeout MS]\n"
        "\n"
        "Run MODEL on braidd with the given .npy inputs; write each output to DIR/<name>.npy\n"
        "(or print a summary when --output is not given).\n"
        "\n"
        "  -i, --input NAME=FILE.npy   an input tensor (FILE.npy alone for a one-input model)\n"
        "  -o, --output DIR            directory for the outputs (created if missing)\n"
        "  -v, --version V             model version (default: the newest ready one)\n"
        "  -r, --request-output NAME   return only this output (repeatable; default: all)\n"
        "  -s, --server HOST:PORT      braidd's gRPC address (default $BRAID_SERVER or %s)\n"
        "      --timeout MS            deadline of each call (default 10000)\n"
        CLI_REMOTE_SECURITY_HELP
        "  -h, --help                  this text\n", CLI_DEFAULT_SERVER);
}

/* Output file name: the tensor name with path separators replaced. */
static void output_path(char *buf, size_t size, const char *dir, const char *name)
{
    int n = snprintf(buf, size, "%s/", dir);
    for (const char *c = name; *c && n + 5 < (int)size; c++)
        buf[n++] = (*c == '/' || *c == ':' || *c == '\\' || (*c == '.' && c == name)) ? '_' : *c;
    snprintf(buf + n, size - (size_t)n, ".npy");
}

static void print_summary(const braid_infer_result *r, size_t i)
{
    int ndim;
    size_t nbytes;
    const int64_t *shape = braid_infer_result_shape(r, i, &ndim);
    const char *dt = braid_infer_result_datatype(r, i);
    const void *data = braid_infer_result_data(r, i, &nbytes);
    printf("%s: %s [", braid_infer_result_name(r, i), dt);
    for (int d = 0; d < ndim; d++)
        printf("%s%lld", d ? "," : "", (long long)shape[d]);
    printf("]");
    if (strcmp(dt, "FP32") == 0) {
        size_t n = nbytes / 4;
        printf(" [");
        for (size_t k = 0; k < n && k < 6; k++)
            printf("%s%.6g", k ? ", " : "", (double)((const float *)data)[k]);
        printf("%s]", n > 6 ? ", ..." : "");
    }
    printf("\n");
}

/* Write output I of R to DIR/<name>.npy, keeping its exact datatype. */
static int write_output(const braid_infer_result *r, size_t i, const char *dir)
{
    const char *name = braid_infer_result_name(r, i), *dt = braid_infer_result_datatype(r, i);
    bd_npy a = { .dtype = bd_dtype_from_name(dt) };
    if (a.dtype == BD_DT_UNDEFINED || !bd_npy_descr(a.dtype)) {
        fprintf(stderr, "braid infer: output '%s': a %s tensor cannot be written as .npy\n", name, dt);
        return CLI_FAIL;
    }
    int ndim;
    const int64_t *shape = braid_infer_result_shape(r, i, &ndim);
    if (ndim > BD_MAX_RANK) {
        fprintf(stderr, "braid infer: output '%s' has rank %d (at most %d)\n", name, ndim, BD_MAX_RANK);
        return CLI_FAIL;
    }
    a.shape = bd_shape_make(ndim, shape);
    a.data = (void *)braid_infer_result_data(r, i, &a.nbytes);   /* borrowed, not freed */
    char file[4096];
    output_path(file, sizeof file, dir, name);
    bd_error err = { 0 };
    if (bd_npy_write_array(file, &a, &err)) {
        cli_error("cannot write an output", &err);
        return CLI_FAIL;
    }
    printf("%s -> %s\n", name, file);
    return CLI_OK;
}

/* Find the model's only input name for a bare FILE.npy. */
static int single_input_name(braid_client *cl, const cli_remote *r, const char *model, const char *version,
                             char *name, size_t size)
{
    char msg[512];
    braid_model_info *info = NULL;
    braid_status st = braid_model_metadata(cl, model, version, &info, msg, sizeof msg);
    if (st) {
        cli_remote_error(r, st, msg);
        return CLI_FAIL;
    }
    int rc = CLI_OK;
    if (info->n_inputs != 1) {
        fprintf(stderr, "braid infer: model '%s' has %zu inputs; name each as --input NAME=FILE.npy (inputs:",
                model, info->n_inputs);
        for (size_t i = 0; i < info->n_inputs; i++)
            fprintf(stderr, " '%s'", info->inputs[i].name);
        fprintf(stderr, ")\n");
        rc = CLI_USAGE;
    } else {
        snprintf(name, size, "%s", info->inputs[0].name);
    }
    braid_model_info_free(info);
    return rc;
}

int cmd_infer(int argc, char **argv)
{
    static const struct option opts[] = {
        { "input", required_argument, 0, 'i' }, { "output", required_argument, 0, 'o' },
        { "version", required_argument, 0, 'v' }, { "request-output", required_argument, 0, 'r' },
        CLI_REMOTE_OPTIONS, { 0 },
    };
    cli_remote r = { .cmd = "infer", .server = cli_default_server() };
    const char *outdir = NULL, *version = NULL;
    const char *specs[MAX_IO], *wanted[MAX_IO];
    size_t n_specs = 0, n_wanted = 0;
    int c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "i:o:v:r:" CLI_REMOTE_SHORT, opts, NULL)) != -1) {
        switch (c) {
        case 'i':
        case 'r':
            if ((c == 'i' ? n_specs : n_wanted) == MAX_IO) {
                fprintf(stderr, "braid infer: too many --%s options (%d at most)\n",
                        c == 'i' ? "input" : "request-output", MAX_IO);
                return CLI_USAGE;
            }
            if (c == 'i')
                specs[n_specs++] = optarg;
            else
                wanted[n_wanted++] = optarg;
            break;
        case 'o': outdir = optarg; break;
        case 'v': version = optarg; break;
        default:
            if ((rc = cli_remote_option(c, optarg, &r, usage)) >= 0)
                return rc;
        }
    }
    if (optind != argc - 1 || n_specs == 0) {
        if (optind == argc - 1)
            fprintf(stderr, "braid infer: give at least one --input NAME=FILE.npy\n");
        usage(stderr);
        return CLI_USAGE;
    }
    const char *model = argv[optind];

    /* Read every input before connecting: a bad file is a local error. */
    bd_npy arrays[MAX_IO] = { 0 };
    char names[MAX_IO][256];
    braid_tensor tensors[MAX_IO];
    int64_t dims[MAX_IO][BD_MAX_RANK];
    rc = CLI_OK;
    size_t n_read = 0;
    for (; n_read < n_specs; n_read++) {
        const char *spec = specs[n_read], *eq = strchr(spec, '=');
        if (eq && (eq == spec || (size_t)(eq - spec) >= sizeof names[0])) {
            fprintf(stderr, "braid infer: --input '%s': expected NAME=FILE.npy\n", spec);
            rc = CLI_USAGE;
            break;
        }
        snprintf(names[n_read], sizeof names[0], "%.*s", eq ? (int)(eq - spec) : 0, spec);
        bd_error err = { 0 };
        if (bd_npy_read(eq ? eq + 1 : spec, &arrays[n_read], &err)) {
            cli_error("bad input", &err);
            rc = err.code == BD_EIO ? CLI_FAIL : CLI_USAGE;
            break;
        }
    }
    braid_client *cl = NULL;
    if (rc == CLI_OK && n_specs > 1)
        for (size_t i = 0; i < n_specs; i++)
            if (!names[i][0]) {
                fprintf(stderr, "braid infer: with several inputs, name each as --input NAME=FILE.npy ('%s')\n",
                        specs[i]);
                rc = CLI_USAGE;
                break;
            }
    if (rc == CLI_OK)
        rc = cli_connect(&r, false, &cl);
    if (rc == CLI_OK && !names[0][0])
        rc = single_input_name(cl, &r, model, version, names[0], sizeof names[0]);
    if (rc == CLI_OK) {
        for (size_t i = 0; i < n_specs; i++) {
            const bd_npy *a = &arrays[i];
            for (int d = 0; d < a->shape.rank; d++)
                dims[i][d] = a->shape.dims[d];
            tensors[i] = (braid_tensor){
                .name = names[i], .datatype = bd_dtype_name(a->dtype), .shape = dims[i],
                .ndim = a->shape.rank, .data = a->data, .nbytes = a->nbytes,
            };
        }
        braid_infer_request req = {
            .model = model, .version = version, .inputs = tensors, .n_inputs = n_specs,
            .outputs = wanted, .n_outputs = n_wanted,
        };
        braid_infer_result *res = NULL;
        char msg[512];
        braid_status st = braid_model_infer(cl, &req, &res, msg, sizeof msg);
        if (st) {
            cli_remote_error(&r, st, msg);
            rc = CLI_FAIL;
        } else if (outdir && mkdir(outdir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "braid infer: cannot create output directory '%s': %s\n", outdir, strerror(errno));
            rc = CLI_FAIL;
        } else {
            for (size_t i = 0; rc == CLI_OK && i < braid_infer_result_num_outputs(res); i++) {
                if (outdir)
                    rc = write_output(res, i, outdir);
                else
                    print_summary(res, i);
            }
        }
        braid_infer_result_free(res);
    }
    braid_client_close(cl);
    for (size_t i = 0; i < n_read && i < n_specs; i++)
        bd_npy_free(&arrays[i]);
    return rc;
}
