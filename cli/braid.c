/* braid: the command-line tool. Offline subcommands run models in process with the same
 * runtime library the daemon uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/omp_env.h"
#include "cli/cli.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    { "run",     cmd_run,     "run a model once on .npy inputs, write .npy outputs" },
    { "inspect", cmd_inspect, "show a model's signature, operators, fusion and backend coverage" },
    { "bench",   cmd_bench,   "time a model in process (median and percentiles)" },
    { "models",  cmd_models,  "list the models on a braidd server (--server HOST:PORT)" },
    { "load",    cmd_load,    "load or hot-reload a model on braidd (from its repository or a file)" },
    { "unload",  cmd_unload,  "unload a model from braidd" },
    { "infer",   cmd_infer,   "run a model on braidd on .npy inputs, write .npy outputs" },
    { "status",  cmd_status,  "show braidd's metadata, health and per-model statistics" },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: braid COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`braid COMMAND --help` describes each; `braid --version` prints the version.\n"
               "Exit codes: 0 ok, 1 failure, 2 usage error.\n");
}

int main(int argc, char **argv)
{
    bd_omp_env_ensure("braid", argv);
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
        printf("braid %s\n", BRAID_VERSION);
        return CLI_OK;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "braid: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return CLI_USAGE;
}
