/* braid status [--server HOST:PORT]: server metadata, health and per-model statistics. */
#include <stdio.h>

#include "cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid status [--server HOST:PORT] [--timeout MS]\n"
        "\n"
        "Show braidd's name, version, protocol extensions, health, and a table of every model\n"
        "version with its request counters and mean queue and compute times. (The HTTP port\n"
        "serves the full picture as JSON: curl http://127.0.0.1:8002/v2/status)\n"
        "\n"
        "  -s, --server HOST:PORT  braidd's gRPC address (default $BRAID_SERVER or %s)\n"
        "      --timeout MS        deadline of each call (default 10000)\n"
        CLI_REMOTE_SECURITY_HELP
        "  -h, --help              this text\n", CLI_DEFAULT_SERVER);
}

/* Mean of D in milliseconds (0 when empty). */
static double mean_ms(braid_duration d)
{
    return d.count ? (double)d.ns / (double)d.count / 1e6 : 0.0;
}

int cmd_status(int argc, char **argv)
{
    cli_remote r = { .cmd = "status" };
    braid_client *cl = NULL;
    int rc = cli_remote_parse(&r, argc, argv, 0, usage, false, &cl);
    if (rc >= 0)
        return rc;
    char msg[512];
    braid_server_info *info = NULL;
    braid_statistics *stats = NULL;
    bool live = false, ready = false;
    braid_status st = braid_server_metadata(cl, &info, msg, sizeof msg);
    if (!st)
        st = braid_server_live(cl, &live, msg, sizeof msg);
    if (!st)
        st = braid_server_ready(cl, &ready, msg, sizeof msg);
    if (!st)
        st = braid_model_statistics(cl, NULL, NULL, &stats, msg, sizeof msg);
    if (!st) {
        printf("server:     %s %s at %s\n", info->name, info->version, r.server);
        printf("health:     %s, %s\n", live ? "live" : "not live", ready ? "ready" : "not ready");
        printf("extensions:");
        for (size_t i = 0; i < info->n_extensions; i++)
            printf(" %s", info->extensions[i]);
        printf("\n\n");
        if (stats->n_models == 0) {
            printf("no models loaded\n");
        } else {
            printf("%-24s %-7s %10s %10s %10s %8s %11s %13s\n", "MODEL", "VERSION", "INFER", "EXEC",
                   "SUCCESS", "FAIL", "QUEUE(ms)", "COMPUTE(ms)");
            for (size_t i = 0; i < stats->n_models; i++) {
                const braid_model_stats *m = &stats->models[i];
                printf("%-24s %-7s %10llu %10llu %10llu %8llu %11.3f %13.3f\n", m->name, m->version,
                       (unsigned long long)m->inference_count, (unsigned long long)m->execution_count,
                       (unsigned long long)m->success.count, (unsigned long long)m->fail.count,
                       mean_ms(m->queue), mean_ms(m->compute_infer));
            }
        }
    }
    braid_statistics_free(stats);
    braid_server_info_free(info);
    braid_client_close(cl);
    if (st) {
        cli_remote_error(&r, st, msg);
        return CLI_FAIL;
    }
    return CLI_OK;
}
