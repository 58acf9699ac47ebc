/* braidd: configuration, the libuv loop, and the daemon's lifecycle.
 *
 *   start     config -> registry (scan, load at start) -> scheduler -> gRPC server -> HTTP
 *             status port; "braidd listening on ..." once bound; sd_notify READY once the
 *             initial loads have finished.
 *   SIGTERM   (or SIGINT) readiness false at once, stop accepting calls and loads, cancel
 *             the loads, let queued and running requests finish (bounded by exit_timeout_secs;
 *             the loop polls, nothing blocks it), close everything, exit 0. A hard stop at
 *             exit_timeout + CLOSE_MARGIN_MS ends a process something still holds.
 *   SIGHUP    re-read the token and certificate files (security.h); rescan the repository
 *             and load what is new unless the model control mode is none (sd_notify
 *             RELOADING, then READY).
 *   poll      --model-control-mode poll: the same rescan every repository_poll_secs.
 *   watchdog  WATCHDOG=1 at half the interval systemd asked for. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "runtime/omp_env.h"
#include "daemon/config.h"
#include "daemon/sched/cpu_budget.h"
#include "daemon/http/http_status.h"
#include "daemon/log.h"
#include "daemon/sched/memory_budget.h"
#include "daemon/notify.h"
#include "daemon/registry/registry.h"
#include "daemon/rest/rest_server.h"
#include "daemon/grpc/rpc.h"
#include "daemon/sched/scheduler.h"
#include "daemon/security.h"
#include "daemon/grpc/server.h"
#include "daemon/infer/shm_region.h"

typedef struct braidd {
    uv_loop_t        loop;
    bd_daemon_config cfg;
    bd_cpu_budget    cpus;              /* what automatic sizing read (cores, affinity, quota) */
    const char      *port_file;
    bd_registry     *reg;
    bd_scheduler    *sched;
    bd_server       *srv;
    bd_http         *http;
    bd_rest         *rest;
    uv_signal_t      sig_term, sig_int, sig_hup;
    uv_timer_t       watchdog;
    uv_timer_t       ready_poll;        /* until the loads in progress have finished */
    uv_timer_t       repo_poll;         /* --model-control-mode poll */
    uv_timer_t       drain_poll;        /* SIGTERM: until idle or the exit timeout */
    uv_timer_t       hard_stop;         /* SIGTERM: the last resort (unref'd) */
    uint64_t         drain_deadline_ns;
    bool             ready_sent;
    bool             stopping;
} braidd;

/* After the drain, closing the ports takes at most the server's linger (2 s) and grace (5 s)
 * periods and the status port's close: the hard stop comes this long after the exit timeout.
 * systemd's TimeoutStopSec must exceed exit_timeout_secs + 10 s (tests/daemon/http checks the unit). */
#define CLOSE_MARGIN_MS 10000
#define DRAIN_POLL_MS   10

/* ---- readiness --------------------------------------------------------------------------- */

static bool loads_running(bd_registry *reg)
{
    bd_registry_entry *e = NULL;
    size_t n = bd_registry_snapshot(reg, &e);
    bool loading = false;
    for (size_t i = 0; i < n && !loading; i++)
        loading = e[i].state == BD_STATE_LOADING;
    bd_registry_snapshot_free(e, n);
    return loading;
}

/* READY=1 at start-up once the server is ready (the start-up loads have finished; a failed
 * load counts as finished: the daemon serves what it could load, and the reason shows in
 * RepositoryIndex and /v2/status); after SIGHUP, once nothing is loading. */
static void on_ready_poll(uv_timer_t *t)
{
    braidd *d = t->data;
    if (d->stopping || (d->ready_sent ? loads_running(d->reg) : !bd_registry_ready(d->reg)))
        return;
    uv_timer_stop(t);
    bd_notify_ready();
    if (!d->ready_sent)
        bd_log(BD_LOG_INFO, NULL, NULL, "ready: initial model loads finished");
    d->ready_sent = true;
}

static void on_watchdog(uv_timer_t *t)
{
    (void)t;
    bd_notify_watchdog();
}

/* ---- shutdown ---------------------------------------------------------------------------- */

static void close_handle(uv_handle_t *h)
{
    if (!uv_is_closing(h))
        uv_close(h, NULL);      /* all of these live inside the daemon struct */
}

/* After uv_run: the handles that stayed open unref'd until the very end. */
static void close_last_handles(braidd *d)
{
    close_handle((uv_handle_t *)&d->sig_term);
    close_handle((uv_handle_t *)&d->sig_int);
    close_handle((uv_handle_t *)&d->sig_hup);
    close_handle((uv_handle_t *)&d->hard_stop);
    uv_run(&d->loop, UV_RUN_DEFAULT);
}

static void on_http_closed(void *arg)
{
    braidd *d = arg;
    d->http = NULL;
    bd_scheduler_destroy(d->sched);
    d->sched = NULL;
    bd_registry_destroy(d->reg);    /* closes its handles; uv_run returns once they are */
    d->reg = NULL;
    /* The signal handlers stay (unref'd, closed after uv_run): a second SIGTERM while the
     * last loads come back is still "already shutting down", never a kill by signal. */
    uv_unref((uv_handle_t *)&d->sig_term);
    uv_unref((uv_handle_t *)&d->sig_int);
    uv_unref((uv_handle_t *)&d->sig_hup);
    close_handle((uv_handle_t *)&d->watchdog);
    close_handle((uv_handle_t *)&d->ready_poll);
    close_handle((uv_handle_t *)&d->repo_poll);
    close_handle((uv_handle_t *)&d->drain_poll);
}

static void on_server_closed(void *arg)
{
    braidd *d = arg;
    d->srv = NULL;
    if (d->http)
        bd_http_close(d->http, on_http_closed, d);
    else
        on_http_closed(d);
}

static void on_rest_closed(void *arg)
{
    braidd *d = arg;
    d->rest = NULL;
    if (d->srv)
        bd_server_close(d->srv, on_server_closed, d);
    else
        on_server_closed(d);
}

/* The drain ends when no request is queued or running and no load is running, or at the
 * exit timeout: what is still queued is answered UNAVAILABLE, loads still inside a step are
 * abandoned (answered UNAVAILABLE, their result discarded), and the ports close. */
static void on_drain_poll(uv_timer_t *t)
{
    braidd *d = t->data;
    bool idle = bd_scheduler_idle(d->sched) && bd_registry_loads_running(d->reg) == 0;
    if (!idle && bd_now_ns() < d->drain_deadline_ns)
        return;
    uv_timer_stop(t);
    if (!idle) {
        int loads = bd_registry_loads_running(d->reg);
        int dropped = bd_scheduler_drain(d->sched, 0);
        bd_registry_abandon_loads(d->reg);
        bd_log(BD_LOG_WARN, NULL, NULL, "exit timeout (%d ms): %d queued request(s) answered UNAVAILABLE, "
               "%d model load(s) abandoned; closing", d->cfg.exit_timeout_ms, dropped, loads);
    }
    if (d->rest)                        /* it calls into the gRPC server's methods: first */
        bd_rest_close(d->rest, on_rest_closed, d);
    else
        bd_server_close(d->srv, on_server_closed, d);
}

/* Something cannot be interrupted (a load inside one compilation, a request inside one
 * kernel) and holds the process past the exit timeout and the close margin: exit now rather
 * than be killed by systemd's stop timeout. The kernel reclaims everything. */
static void on_hard_stop(uv_timer_t *t)
{
    (void)t;
    bd_log(BD_LOG_ERROR, NULL, NULL, "still not stopped %d ms after the exit timeout (a model load or an "
           "inference is inside a step that cannot be interrupted): exiting now", CLOSE_MARGIN_MS);
    fflush(stdout);
    fflush(stderr);
    _exit(0);
}

static void begin_shutdown(braidd *d, const char *why)
{
    if (d->stopping) {
        bd_log(BD_LOG_INFO, NULL, NULL, "%s: already shutting down", why);
        return;
    }
    d->stopping = true;
    bd_log(BD_LOG_INFO, NULL, NULL, "%s: shutting down (not ready; no new calls or loads; loads cancelled; "
           "in-flight requests finish, up to %d ms)", why, d->cfg.exit_timeout_ms);
    bd_notify_stopping();
    uv_timer_stop(&d->ready_poll);
    uv_timer_stop(&d->repo_poll);
    bd_registry_shutdown(d->reg);       /* readiness turns false here, for gRPC and HTTP alike */
    bd_server_stop(d->srv);
    bd_scheduler_stop_taking(d->sched);
    d->drain_deadline_ns = bd_now_ns() + (uint64_t)d->cfg.exit_timeout_ms * 1000000u;
    uv_timer_start(&d->hard_stop, on_hard_stop, (uint64_t)d->cfg.exit_timeout_ms + CLOSE_MARGIN_MS, 0);
    uv_unref((uv_handle_t *)&d->hard_stop);
    uv_timer_start(&d->drain_poll, on_drain_poll, 0, DRAIN_POLL_MS);
}

/* ---- model control: poll (docs/config.md) ------------------------------------------------ */

static void on_repo_poll(uv_timer_t *t)
{
    braidd *d = t->data;
    if (d->stopping)
        return;
    bd_error err = {0};
    if (bd_registry_scan(d->reg, true, &err) != 0)
        bd_log(BD_LOG_ERROR, NULL, NULL, "repository poll failed: %s", err.msg);
}

static void on_signal(uv_signal_t *h, int signum)
{
    braidd *d = h->data;
    if (signum == SIGHUP) {
        if (d->stopping)
            return;
        bd_notify_reloading();
        bd_security_reload(&d->cfg, d->srv, d->http, d->rest);
        if (bd_config_model_control(&d->cfg) != BD_MODEL_CONTROL_NONE) {
            bd_log(BD_LOG_INFO, NULL, NULL, "SIGHUP: rescanning the repository");
            bd_error err = {0};
            if (bd_registry_scan(d->reg, true, &err) != 0)
                bd_log(BD_LOG_ERROR, NULL, NULL, "rescan failed: %s", err.msg);
        } else {
            bd_log(BD_LOG_INFO, NULL, NULL, "SIGHUP: model control mode none: the repository is "
                   "not rescanned");
        }
        uv_timer_start(&d->ready_poll, on_ready_poll, 0, 50);
        return;
    }
    begin_shutdown(d, signum == SIGINT ? "SIGINT" : "SIGTERM");
}

/* ---- start-up ---------------------------------------------------------------------------- */

/* Take "--port-file PATH" / "--port-file=PATH" out of ARGV (a test hook, not a config key). */
static const char *take_port_file(int *argc, char **argv)
{
    const char *path = NULL;
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--port-file") && i + 1 < *argc)
            path = argv[++i];
        else if (!strncmp(argv[i], "--port-file=", 12))
            path = argv[i] + 12;
        else
            argv[out++] = argv[i];
    }
    argv[out] = NULL;
    *argc = out;
    return path;
}

/* Write "GRPC_PORT HTTP_PORT REST_PORT\n" atomically (tmp + rename: a reader never sees
 * half). A disabled port is 0. */
static int write_port_file(const char *path, int grpc_port, int http_port, int rest_port)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f, "%d %d %d\n", grpc_port, http_port, rest_port);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static const char *host_of(const char *address, char *buf, size_t size)
{
    size_t n = strnlen(address, size - 1);
    memcpy(buf, address, n);
    buf[n] = '\0';
    char *colon = strrchr(buf, ':');
    if (colon)
        *colon = '\0';
    return buf;
}

int main(int argc, char **argv)
{
    bd_omp_env_ensure("braidd", argv);
    static braidd dm;
    braidd *d = &dm;
    bd_error err = {0};

    d->port_file = take_port_file(&argc, argv);
    bd_config_defaults(&d->cfg);
    int rc = bd_config_parse_args(&d->cfg, argc, argv, &err);
    if (rc == 1)
        return 0;
    if (rc) {
        fprintf(stderr, "braidd: %s\n", err.msg);
        return 2;
    }
    bd_cpu_budget_read(&d->cpus);
    bd_config_resolve(&d->cfg, d->cpus.cores);
    bd_config_resolve_memory(&d->cfg, bd_memory_budget());
    bd_log_set_level((bd_log_level)d->cfg.log_level);
    if ((rc = bd_security_check(&d->cfg, &err)) != 0) {
        fprintf(stderr, "braidd: %s\n", err.msg);
        return 2;
    }
    if ((rc = bd_config_configure_engines(&d->cfg, &err)) != 0) {
        fprintf(stderr, "braidd: %s\n", err.msg);
        return 1;
    }

    /* A client that closed its socket must cost a write error (EPIPE), not the process:
     * libuv writes streams with write(2), which raises SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    uv_loop_init(&d->loop);
    uv_signal_init(&d->loop, &d->sig_term);
    uv_signal_init(&d->loop, &d->sig_int);
    uv_signal_init(&d->loop, &d->sig_hup);
    uv_timer_init(&d->loop, &d->watchdog);
    uv_timer_init(&d->loop, &d->ready_poll);
    uv_timer_init(&d->loop, &d->repo_poll);
    uv_timer_init(&d->loop, &d->drain_poll);
    uv_timer_init(&d->loop, &d->hard_stop);
    uv_unref((uv_handle_t *)&d->hard_stop);
    d->sig_term.data = d->sig_int.data = d->sig_hup.data = d;
    d->watchdog.data = d->ready_poll.data = d->repo_poll.data = d->drain_poll.data = d->hard_stop.data = d;

    int exit_code = 0;
    if ((d->cfg.allow_shared_memory &&
         (rc = bd_shm_enable(d->cfg.shared_memory_max_regions, d->cfg.shared_memory_max_bytes,
                             &err)) != 0) ||
        (rc = bd_registry_create(&d->loop, &d->cfg, &d->reg, &err)) != 0 ||
        (rc = bd_scheduler_create(d->cfg.workers, d->cfg.threads_per_worker, &d->sched, &err)) != 0 ||
        (rc = bd_server_start(&d->loop, &d->cfg, bd_rpc_methods, bd_rpc_n_methods, d->reg,
                                   d->sched, &d->srv, &err)) != 0 ||
        (d->cfg.http_address[0] &&
         ((rc = bd_http_start(&d->loop, d->cfg.http_address, d->reg, &d->http, &err)) != 0 ||
          (rc = bd_security_protect_http(&d->cfg, d->srv, d->http, &err)) != 0)) ||
        (d->cfg.rest_address[0] &&
         ((rc = bd_rest_start(&d->loop, &d->cfg, bd_server_dispatch(d->srv), d->reg,
                              &d->rest, &err)) != 0 ||
          (rc = bd_security_protect_rest(&d->cfg, d->srv, d->rest, &err)) != 0))) {
        fprintf(stderr, "braidd: %s\n", err.msg);
        bd_log(BD_LOG_ERROR, NULL, NULL, "start-up failed: %s", err.msg);
        exit_code = 1;
        d->stopping = true;
        if (d->sched)
            bd_scheduler_drain(d->sched, 0);
        if (d->rest) {                      /* its TLS or tokens failed */
            bd_rest_close(d->rest, NULL, NULL);
            d->rest = NULL;
        }
        if (d->srv) {                       /* the HTTP port failed after gRPC bound */
            bd_server_stop(d->srv);
            bd_server_close(d->srv, on_server_closed, d);
        } else {
            on_http_closed(d);
        }
        uv_run(&d->loop, UV_RUN_DEFAULT);
        close_last_handles(d);
        uv_loop_close(&d->loop);
        return exit_code;
    }

    int grpc_port = bd_server_port(d->srv), http_port = d->http ? bd_http_port(d->http) : 0;
    int rest_port = d->rest ? bd_rest_port(d->rest) : 0;
    char gh[256], hh[256], rh[256], http_where[300] = "disabled", rest_where[300] = "disabled";
    if (d->http)
        snprintf(http_where, sizeof http_where, "%s:%d", host_of(d->cfg.http_address, hh, sizeof hh), http_port);
    if (d->rest)
        snprintf(rest_where, sizeof rest_where, "%s:%d", host_of(d->cfg.rest_address, rh, sizeof rh), rest_port);
    printf("braidd listening on grpc %s:%d, http %s, rest %s\n", host_of(d->cfg.grpc_address, gh, sizeof gh),
           grpc_port, http_where, rest_where);
    fflush(stdout);
    bd_log(BD_LOG_INFO, NULL, NULL, "listening on grpc port %d, http port %d; %d worker(s) x %d thread(s)",
           grpc_port, http_port, d->cfg.workers, d->cfg.threads_per_worker);
    if (d->cpus.quota > 0)
        bd_log(BD_LOG_INFO, NULL, NULL, "CPU budget %d core(s): %d online, %d in the affinity "
               "mask, cgroup quota %.2f CPUs (%s)", d->cpus.cores, d->cpus.online,
               d->cpus.affinity, d->cpus.quota, d->cpus.source);
    else
        bd_log(BD_LOG_INFO, NULL, NULL, "CPU budget %d core(s): %d online, %d in the affinity "
               "mask, no cgroup CPU quota", d->cpus.cores, d->cpus.online, d->cpus.affinity);
    if (d->port_file && write_port_file(d->port_file, grpc_port, http_port, rest_port) != 0)
        bd_log(BD_LOG_ERROR, NULL, NULL, "cannot write the port file %s", d->port_file);

    /* Scan after listening, so clients can watch the loads (RepositoryIndex, /v2/status). */
    if (bd_registry_scan(d->reg, d->cfg.load_all_at_start, &err) != 0)
        bd_log(BD_LOG_ERROR, NULL, NULL, "repository scan failed: %s", err.msg);

    uv_signal_start(&d->sig_term, on_signal, SIGTERM);
    uv_signal_start(&d->sig_int, on_signal, SIGINT);
    uv_signal_start(&d->sig_hup, on_signal, SIGHUP);
    uint64_t wd = bd_notify_watchdog_interval_ms();
    if (wd > 0)
        uv_timer_start(&d->watchdog, on_watchdog, wd, wd);
    uv_timer_start(&d->ready_poll, on_ready_poll, 0, 50);
    if (bd_config_model_control(&d->cfg) == BD_MODEL_CONTROL_POLL) {
        uint64_t every = (uint64_t)d->cfg.repository_poll_secs * 1000;
        uv_timer_start(&d->repo_poll, on_repo_poll, every, every);
    }
    bd_security_log(&d->cfg, d->srv);

    uv_run(&d->loop, UV_RUN_DEFAULT);
    close_last_handles(d);
    bd_shm_disable();                   /* every request has ended */
    if (uv_loop_close(&d->loop) != 0)
        bd_log(BD_LOG_WARN, NULL, NULL, "event loop closed with handles still open");
    bd_log(BD_LOG_INFO, NULL, NULL, "stopped");
    return exit_code;
}
