/* The `braid` command-line tool: one file per subcommand, shared helpers here.
 * Exit codes: 0 success, 1 the work failed (bad model, failed run), 2 usage error. */
#ifndef BD_CLI_H
#define BD_CLI_H

#include <dlpack/dlpack.h>

#include "client/braid_client.h"
#include "client/npy.h"
#include "partitioner/model.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

int cmd_run(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* Remote subcommands (talk to braidd; cli_remote.c holds their shared helpers). */
int cmd_models(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_unload(int argc, char **argv);
int cmd_infer(int argc, char **argv);
int cmd_status(int argc, char **argv);

/* Inputs given as NAME=FILE.npy (or FILE.npy alone for a one-input model), matched to the
 * graph's inputs in signature order. */
typedef struct cli_inputs {
    const char *spec[64];   /* as given on the command line */
    int         n_spec;
    bd_npy      arrays[64]; /* in graph-input order after cli_inputs_load */
    DLTensor    tensors[64];
    int         n;
} cli_inputs;

/* Load the .npy files named by IN->spec for G's inputs; with RANDOM_MISSING, inputs not
 * given are filled with seeded random data of the model's shape (dynamic dims = 1). */
int  cli_inputs_load(cli_inputs *in, const bd_graph *g, int random_missing, bd_error *err);
void cli_inputs_free(cli_inputs *in);

/* Print "braid: <message>" and a hint line to stderr. */
void cli_error(const char *what, const bd_error *err);
/* Parse a positive int option value; returns -1 (after an error message) when invalid. */
int  cli_parse_count(const char *opt, const char *value);

/* ---- placement flags (cli_placement.c), shared by run, inspect and bench ---- */
enum { CLI_OPT_FALLBACK_OPS = 0x100, CLI_OPT_ENGINE, CLI_OPT_MIN_DNNL_FLOPS, CLI_OPT_ORT_LIBRARY,
       CLI_OPT_ORT_THREADS };
#define CLI_PLACEMENT_OPTIONS                                                                  \
    { "fallback-ops", required_argument, 0, CLI_OPT_FALLBACK_OPS },                           \
    { "engine", required_argument, 0, CLI_OPT_ENGINE },                                       \
    { "min-dnnl-flops", required_argument, 0, CLI_OPT_MIN_DNNL_FLOPS },                       \
    { "ort-library", required_argument, 0, CLI_OPT_ORT_LIBRARY },                             \
    { "ort-threads", required_argument, 0, CLI_OPT_ORT_THREADS }
/* Their lines for a usage text. */
extern const char cli_placement_usage[];
/* Apply getopt result C with ARG to O: 1 when C was a placement flag, 0 when not, -1 when its
 * value is invalid (a message was printed). ARG must outlive O (argv does). */
int  cli_placement_option(int c, const char *arg, bd_model_options *o);

/* ---- remote subcommands ---- */
#define CLI_DEFAULT_SERVER "127.0.0.1:8001"
/* --server's default: $BRAID_SERVER, else CLI_DEFAULT_SERVER. */
const char *cli_default_server(void);
/* Connect to SERVER (printing "braid CMD: ..." and a hint on failure); CLI_OK or CLI_FAIL. */
int  cli_connect(const char *cmd, const char *server, int timeout_ms, braid_client **out);
/* Print a failed call's message, with a hint when the server is unreachable or slow. */
void cli_remote_error(const char *cmd, const char *server, braid_status status, const char *msg);
/* Parse --timeout MS; -1 (after a message) when invalid. */
int  cli_parse_timeout(const char *value);

#endif
