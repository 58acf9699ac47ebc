/* The placement flags run, inspect and bench share (docs/partitioning.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "runtime/engines.h"

const char cli_placement_usage[] =
    "      --fallback-ops A,B     send these op types to the framework fallback (e.g. Softmax,Erf)\n"
    "      --engine LIST          auto (default), or the engines allowed: dnnl, native, ort, tf\n"
    "                             (ort: all on ONNX Runtime; dnnl,native: no framework)\n"
    "      --min-dnnl-flops N     oneDNN islands between fallback subgraphs with less compute\n"
    "                             move to the fallback (default 1000000; 0 = never)\n"
    "      --ort-library PATH     libonnxruntime.so.1 to load (default: $BRAID_ORT_LIBRARY,\n"
    "                             the loader path, ~/.cache/braid/ort-1.30.0/)\n"
    "      --ort-threads N        ONNX Runtime intra-op threads per session (default 1)\n"
    "      --tf-library PATH      TensorFlow's C library (default: $BRAID_LIBTENSORFLOW, the\n"
    "                             loader path, ~/.cache/braid/tf-venv's tensorflow-cpu)\n"
    "      --tf-threads N         TensorFlow intra-op threads per session (default: its own)\n"
    "      --signature NAME       a SavedModel's SignatureDef to run (default serving_default)\n";

int cli_placement_option(int c, const char *arg, cli_placement *p, void (*usage)(FILE *))
{
    bd_model_options *o = &p->model;
    char *end;
    long long v;
    switch (c) {
    case CLI_OPT_FALLBACK_OPS: o->fallback_ops = arg; return -1;
    case CLI_OPT_ENGINE:       o->engine = arg; return -1;
    case CLI_OPT_ORT_LIBRARY:  p->ort.library = arg; return -1;
    case CLI_OPT_ORT_THREADS:
        return (p->ort.threads = cli_parse_count("--ort-threads", arg)) < 0 ? CLI_USAGE : -1;
    case CLI_OPT_TF_LIBRARY:   p->tf.library = arg; return -1;
    case CLI_OPT_SIGNATURE:    o->signature = arg; return -1;
    case CLI_OPT_TF_THREADS:
        return (p->tf.threads = cli_parse_count("--tf-threads", arg)) < 0 ? CLI_USAGE : -1;
    case CLI_OPT_MIN_DNNL_FLOPS:
        errno = 0;
        v = strtoll(arg, &end, 10);
        if (*arg == '\0' || *end != '\0' || v < 0 || errno) {
            fprintf(stderr, "braid: --min-dnnl-flops expects a count >= 0, got '%s'\n", arg);
            return CLI_USAGE;
        }
        o->min_dnnl_region_flops = v == 0 ? -1 : v;    /* 0 on the command line = rule off */
        return -1;
    case 'h':
        usage(stdout);
        return CLI_OK;
    default:
        usage(stderr);
        return CLI_USAGE;
    }
}

int cli_placement_configure(const cli_placement *p, bd_error *err)
{
    /* the flags are named after the engine they set (--ort-library sets engine "ort") */
    int rc = bd_engines_configure("ort", &p->ort, err);
    if (rc == 0)
        rc = bd_engines_configure("tf", &p->tf, err);
    return rc;
}
