/* The `braid` command-line tool: one file per subcommand, shared helpers here.
 * Exit codes: 0 success, 1 the work failed (bad model, failed run), 2 usage error. */
#ifndef BD_CLI_CLI_H
#define BD_CLI_CLI_H

#include <dlpack/dlpack.h>
#include <stdbool.h>
#include <stdio.h>

#include "client/braid_client.h"
#include "core/npy.h"
#include "core/backend.h"
#include "runtime/model.h"

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
/* Add an --input SPEC (borrowed: argv outlives IN); -1 after "braid CMD: too many" when full. */
int  cli_inputs_add(cli_inputs *in, const char *cmd, const char *spec);

/* ---- placement flags (cli_placement.c), shared by run, inspect and bench ---- */
/* What they set: the model's options, and the fallback engines' process-wide settings. */
typedef struct cli_placement {
    bd_model_options model;
    bd_engine_config ort;    /* --ort-library, --ort-threads */
    bd_engine_config tf;     /* --tf-library, --tf-threads */
} cli_placement;

/* Configure the engines with P's settings (bd_engines_configure): they are process-wide, so
 * this runs once, before the model is opened (cli_model_prepare does it). 0 or BD_E*. */
int  cli_placement_configure(const cli_placement *p, bd_error *err);

/* Configure the engines with P (cli_placement_configure), open model PATH with P's model
 * options, load IN for its inputs (RANDOM_MISSING as for cli_inputs_load), plan
 * for them and, when E is not NULL, create an executor. A failure is printed with WHAT[0] (open),
 * WHAT[1] (inputs) or WHAT[2] (plan, executor) and returns CLI_FAIL, or CLI_USAGE for an invalid
 * input when RANDOM_MISSING is 0. The caller releases *M, *E and IN on every path. */
int  cli_model_prepare(const char *path, const cli_placement *p, cli_inputs *in, int random_missing,
                       const char *const what[3], bd_model **m, const bd_plan **plan, bd_exec **e);

/* Print where M's open and PLAN's build went, one line:
 * "load 312.4 ms: open 45.1 (import 40.2, prepare 4.9), plan 267.3 (weights read back 0.0,
 * infer 5.0, fold 12.1, ...)". */
void cli_print_load_timings(const bd_model *m, const bd_plan *plan);

/* Print "braid: <message>" and a hint line to stderr. */
void cli_error(const char *what, const bd_error *err);
/* Parse a positive int option value; returns -1 (after an error message) when invalid. */
int  cli_parse_count(const char *opt, const char *value);

/* The placement flags' getopt entries. */
enum { CLI_OPT_FALLBACK_OPS = 0x100, CLI_OPT_ENGINE, CLI_OPT_MIN_DNNL_FLOPS, CLI_OPT_ORT_LIBRARY,
       CLI_OPT_ORT_THREADS, CLI_OPT_TF_LIBRARY, CLI_OPT_TF_THREADS, CLI_OPT_SIGNATURE };
#define CLI_PLACEMENT_OPTIONS                                                                  \
    { "fallback-ops", required_argument, 0, CLI_OPT_FALLBACK_OPS },                           \
    { "engine", required_argument, 0, CLI_OPT_ENGINE },                                       \
    { "min-dnnl-flops", required_argument, 0, CLI_OPT_MIN_DNNL_FLOPS },                       \
    { "ort-library", required_argument, 0, CLI_OPT_ORT_LIBRARY },                             \
    { "ort-threads", required_argument, 0, CLI_OPT_ORT_THREADS },                             \
    { "tf-library", required_argument, 0, CLI_OPT_TF_LIBRARY },                               \
    { "tf-threads", required_argument, 0, CLI_OPT_TF_THREADS },                               \
    { "signature", required_argument, 0, CLI_OPT_SIGNATURE }
/* Their lines for a usage text. */
extern const char cli_placement_usage[];
/* Apply getopt result C with ARG to P: -1 when it was a placement flag (keep parsing), else the
 * exit code to return at once (--help: USAGE(stdout), CLI_OK; an unknown option: USAGE(stderr),
 * CLI_USAGE; an invalid value: a message, CLI_USAGE). ARG must outlive P (argv does). */
int  cli_placement_option(int c, const char *arg, cli_placement *p, void (*usage)(FILE *));

/* ---- remote subcommands ---- */
#define CLI_DEFAULT_SERVER "127.0.0.1:8001"
/* --server's default: $BRAID_SERVER, else CLI_DEFAULT_SERVER. */
const char *cli_default_server(void);
/* What every remote subcommand is told: where braidd is and how long to wait. */
typedef struct cli_remote {
    const char *cmd;     /* subcommand name, for messages */
    const char *server;  /* --server (initialise with cli_default_server()) */
    int         timeout; /* --timeout MS; 0 = the library's default */
    const char *tls_ca, *tls_cert, *tls_key;   /* --tls-ca/--tls-cert/--tls-key, $BRAID_TLS_CA */
    const char *token_file;                    /* --token-file, $BRAID_TOKEN_FILE */
    size_t      max_message; /* largest message sent or received; 0 = the library's default */
} cli_remote;
/* The options every remote subcommand takes, and their short letters (add a command's own). */
enum { CLI_OPT_TLS_CA = 0x200, CLI_OPT_TLS_CERT, CLI_OPT_TLS_KEY, CLI_OPT_TOKEN_FILE };
#define CLI_REMOTE_OPTIONS                                                                     \
    { "server", required_argument, 0, 's' }, { "timeout", required_argument, 0, 'T' },        \
    { "tls-ca", required_argument, 0, CLI_OPT_TLS_CA },                                       \
    { "tls-cert", required_argument, 0, CLI_OPT_TLS_CERT },                                   \
    { "tls-key", required_argument, 0, CLI_OPT_TLS_KEY },                                     \
    { "token-file", required_argument, 0, CLI_OPT_TOKEN_FILE },                               \
    { "help", no_argument, 0, 'h' }
/* The help lines of the security options, for every remote subcommand's usage. */
#define CLI_REMOTE_SECURITY_HELP                                                               \
    "      --tls-ca PEM        speak TLS, trusting these CAs (default $BRAID_TLS_CA)\n"          \
    "      --tls-cert PEM      client certificate for mutual TLS (with --tls-key)\n"            \
    "      --tls-key PEM       its private key\n"                                               \
    "      --token-file FILE   send the bearer token in FILE (default $BRAID_TOKEN_FILE)\n"
#define CLI_REMOTE_SHORT "s:h"
/* Apply getopt result C with ARG to R: -1 when it was --server or --timeout (keep parsing),
 * else the exit code to return at once (--help: USAGE(stdout), CLI_OK; an unknown option:
 * USAGE(stderr), CLI_USAGE; a bad --timeout: a message, CLI_USAGE). */
int  cli_remote_option(int c, const char *arg, cli_remote *r, void (*usage)(FILE *));
/* After option parsing: -1 once connected (cli_connect(R, LOAD, OUT)) to go on, else the exit
 * code to return at once (USAGE(stderr) and CLI_USAGE unless exactly N_ARGS operands follow
 * optind; CLI_FAIL when the connection failed). */
int  cli_remote_begin(const cli_remote *r, int argc, int n_args, void (*usage)(FILE *), bool load,
                      braid_client **out);
/* The whole command line of a subcommand with no options of its own (R->cmd set, R->server
 * NULL for the default): parse the shared options, then cli_remote_begin; -1 once connected,
 * else the exit code to return at once (--help: CLI_OK). */
int  cli_remote_parse(cli_remote *r, int argc, char **argv, int n_args, void (*usage)(FILE *),
                      bool load, braid_client **out);
/* Connect to R->server (printing "braid CMD: ..." and a hint on failure); CLI_OK or CLI_FAIL.
 * With LOAD the timeout also bounds model loads and unloads. */
int  cli_connect(const cli_remote *r, bool load, braid_client **out);
/* Print a failed call's message, with a hint when the server is unreachable or slow. */
void cli_remote_error(const cli_remote *r, braid_status status, const char *msg);

#endif
