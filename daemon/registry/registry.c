/* The model registry: entries by name, their state, and the version each one serves.
 *
 * Everything here runs on the loop thread. Loads run in libuv's thread pool
 * (registry_load.c) and come back to after_load(), which swaps the new version in. Loads and
 * unloads of one model run one at a time, in the order they were asked for: a load or unload
 * requested while a load of the same model runs waits for it (its callback runs once its own
 * turn is done), so back-to-back reloads from clients never fail for being concurrent.
 *
 * Everything a client can make the registry hold is bounded (docs/config.md, "Loading"):
 * operations waiting per model (load_queue_limit), loads running or waiting in all
 * (BD_REGISTRY_MAX_PENDING_OPS), and the uploaded bytes unfinished loads keep in memory
 * (max_pending_upload_bytes); past a bound the request gets BD_EBUSY (RESOURCE_EXHAUSTED)
 * naming it. At shutdown every operation still gets its answer (bd_registry_shutdown). */
#include <errno.h>
#include <ftw.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>

#include "daemon/log.h"
#include "daemon/registry/model_config.h"
#include "daemon/registry/model_name.h"
#include "daemon/registry/registry.h"
#include "daemon/registry/registry_load.h"
#include "daemon/registry/upload.h"

typedef struct reg_entry {
    struct reg_entry *next;        /* sorted by name */
    char              name[256];
    int               state;
    char              reason[512];
    bd_served        *served;      /* the registry's reference; NULL when nothing serves */
    bool              loading;     /* a load of this model is running in the pool */
    struct load_req  *running;     /* the load running in the pool, NULL if none */
    struct load_req  *waiting;     /* loads/unloads queued behind it, FIFO */
    int               n_waiting;
    bool              unloaded;    /* explicitly unloaded: NOT_FOUND until loaded again */
    char             *config_mem;  /* config applied in memory (uploads disabled) */
} reg_entry;

typedef struct pending_cb {
    struct pending_cb *next;
    bd_registry_cb     cb;
    void              *arg;
    int                status;
    char               msg[512];
} pending_cb;

typedef struct load_req {
    struct load_req *next;         /* in the entry's waiting list */
    bool           unload;         /* an unload waiting its turn (no TASK) */
    uv_work_t      work;
    bd_registry   *r;
    reg_entry     *e;
    bd_load_task  *task;
    size_t         upload_bytes;   /* counted in R->pending_upload_bytes until freed */
    bool           startup;        /* started by the first scan (readiness waits for it) */
    char          *config_keep;    /* stored in E on success */
    bd_registry_cb cb;
    void          *arg;
} load_req;

struct bd_registry {
    uv_loop_t        *loop;
    bd_daemon_config  cfg;
    char              repo[4096];  /* cfg.repository, or the private upload directory */
    bool              private_repo;
    reg_entry        *entries;
    int               loads_in_flight;   /* running in the pool */
    int               ops_waiting;       /* queued behind a running load */
    size_t            pending_upload_bytes; /* uploads held by loads not finished yet */
    bool              scanned;           /* the first scan (start-up) has run */
    int               startup_loads;     /* loads it started that have not finished */
    bool              draining;          /* bd_registry_shutdown was called */
    atomic_bool       cancel;            /* the loads' checkpoints read it */
    bool              destroyed, async_closed;
    uv_async_t        async;       /* delivers queued callbacks (unload) outside the caller's stack */
    pending_cb       *pending, *pending_tail;
    bd_server_stats   stats;
    _Atomic uint64_t  generation;  /* bumped whenever the version serving a name changes */
};

uint64_t bd_registry_generation(const bd_registry *r)
{
    return atomic_load(&((bd_registry *)r)->generation);
}

const char *bd_model_state_name(int state)
{
    switch (state) {
    case BD_STATE_UNAVAILABLE: return "UNAVAILABLE";
    case BD_STATE_LOADING:     return "LOADING";
    case BD_STATE_READY:       return "READY";
    case BD_STATE_UNLOADING:   return "UNLOADING";
    default:                   return "UNKNOWN";
    }
}

/* ---- entries ------------------------------------------------------------------------------ */

static reg_entry *find(bd_registry *r, const char *name)
{
    for (reg_entry *e = r->entries; e; e = e->next)
        if (strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

static reg_entry *get_or_add(bd_registry *r, const char *name, bd_error *err)
{
    reg_entry *e = find(r, name);
    if (e)
        return e;
    e = calloc(1, sizeof *e);
    if (!e) {
        bd_error_set(err, BD_ENOMEM, "model '%s': out of memory", name);
        return NULL;
    }
    snprintf(e->name, sizeof e->name, "%s", name);
    e->state = BD_STATE_UNAVAILABLE;
    reg_entry **at = &r->entries;
    while (*at && strcmp((*at)->name, name) < 0)
        at = &(*at)->next;
    e->next = *at;
    *at = e;
    return e;
}

static void req_free(load_req *q)
{
    if (q->r)
        q->r->pending_upload_bytes -= q->upload_bytes;
    load_task_free(q->task);
    free(q->config_keep);
    free(q);
}

static void entry_free(reg_entry *e)
{
    for (load_req *q = e->waiting, *next; q; q = next) {   /* never started: nobody is told */
        next = q->next;
        req_free(q);
    }
    bd_served_release(e->served);
    free(e->config_mem);
    free(e);
}

/* ---- deferred callbacks ------------------------------------------------------------------- */

static void on_async(uv_async_t *h)
{
    bd_registry *r = h->data;
    pending_cb *list = r->pending;
    r->pending = r->pending_tail = NULL;
    uv_unref((uv_handle_t *)h);
    for (pending_cb *p = list, *next; p; p = next) {
        next = p->next;
        if (p->cb)
            p->cb(p->arg, p->status, p->msg);
        free(p);
    }
}

static void post_cb(bd_registry *r, bd_registry_cb cb, void *arg, int status, const char *msg)
{
    pending_cb *p = calloc(1, sizeof *p);
    if (!p) {                                     /* no memory: better late than never */
        if (cb)
            cb(arg, status, msg);
        return;
    }
    p->cb = cb;
    p->arg = arg;
    p->status = status;
    snprintf(p->msg, sizeof p->msg, "%s", msg);
    if (r->pending_tail)
        r->pending_tail->next = p;
    else
        r->pending = p;
    r->pending_tail = p;
    uv_ref((uv_handle_t *)&r->async);     /* keep the loop turning until it is delivered */
    uv_async_send(&r->async);
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

int bd_registry_create(uv_loop_t *loop, const bd_daemon_config *cfg, bd_registry **out, bd_error *err)
{
    if (cfg->repository[0]) {
        struct stat st;
        if (stat(cfg->repository, &st) != 0)
            return bd_error_set(err, BD_EINVAL, "repository '%s': %s", cfg->repository, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return bd_error_set(err, BD_EINVAL, "repository '%s': not a directory", cfg->repository);
    }
    bd_registry *r = calloc(1, sizeof *r);
    if (!r)
        return bd_error_set(err, BD_ENOMEM, "out of memory creating the registry");
    r->loop = loop;
    r->cfg = *cfg;
    snprintf(r->repo, sizeof r->repo, "%s", cfg->repository);
    r->stats.start_ms = bd_wall_ms();
    int rc = uv_async_init(loop, &r->async, on_async);
    if (rc) {
        free(r);
        return bd_error_set(err, BD_EIO, "registry: uv_async_init: %s", uv_strerror(rc));
    }
    r->async.data = r;
    uv_unref((uv_handle_t *)&r->async);   /* the registry alone does not keep the loop alive */
    *out = r;
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

static void maybe_free(bd_registry *r)
{
    if (!r->async_closed || r->loads_in_flight > 0)
        return;
    if (r->private_repo)
        nftw(r->repo, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    free(r);
}

static void on_async_closed(uv_handle_t *h)
{
    bd_registry *r = h->data;
    r->async_closed = true;
    maybe_free(r);
}

void bd_registry_destroy(bd_registry *r)
{
    if (!r)
        return;
    r->destroyed = true;
    /* Entries with a load running are freed when it comes back (after_load). */
    for (reg_entry **at = &r->entries; *at;) {
        reg_entry *e = *at;
        if (e->loading) {
            for (load_req *q = e->waiting, *next; q; q = next) {
                next = q->next;
                req_free(q);
            }
            e->waiting = NULL;
            at = &e->next;
            continue;
        }
        *at = e->next;
        entry_free(e);
    }
    for (pending_cb *p = r->pending, *next; p; p = next) {   /* undelivered: dropped */
        next = p->next;
        free(p);
    }
    r->pending = r->pending_tail = NULL;
    uv_close((uv_handle_t *)&r->async, on_async_closed);
}

/* ---- load --------------------------------------------------------------------------------- */

static void load_work(uv_work_t *w)
{
    load_req *q = w->data;
    load_task_run(q->task);
}

static void do_unload(bd_registry *r, reg_entry *e, bd_registry_cb cb, void *arg);
static int  start_load(bd_registry *r, load_req *q);

/* Start what waits behind E's finished load, in order, until a load runs again. */
static void run_waiting(bd_registry *r, reg_entry *e)
{
    while (!e->loading && e->waiting) {
        load_req *q = e->waiting;
        e->waiting = q->next;
        q->next = NULL;
        e->n_waiting--;
        r->ops_waiting--;
        if (q->unload) {
            do_unload(r, e, q->cb, q->arg);
            req_free(q);
            continue;
        }
        int rc = start_load(r, q);
        if (rc) {
            char msg[512];
            snprintf(msg, sizeof msg, "model '%s': cannot start the load: %s", e->name, uv_strerror(rc));
            post_cb(r, q->cb, q->arg, BD_EIO, msg);
            req_free(q);
        }
    }
}

static void after_load(uv_work_t *w, int status)
{
    load_req *q = w->data;
    bd_registry *r = q->r;
    reg_entry *e = q->e;
    bd_load_task *t = q->task;
    r->loads_in_flight--;
    e->loading = false;
    e->running = NULL;
    if (q->startup)
        r->startup_loads--;
    if (atomic_load(&r->cancel) && (status == UV_ECANCELED || t->status == 0)) {
        bd_served_release(t->served);             /* shutting down: nobody wants it now */
        t->served = NULL;
        t->status = bd_error_set(&t->err, BD_EUNAVAIL, "model '%s': load cancelled: braidd is shutting down",
                                 e->name);
    } else if (status == UV_ECANCELED && t->status == 0 && !t->served) {
        t->status = bd_error_set(&t->err, BD_ECANCELLED, "model '%s': load cancelled", e->name);
    }

    if (r->destroyed) {                       /* nobody left to tell */
        for (reg_entry **at = &r->entries; *at; at = &(*at)->next)
            if (*at == e) {
                *at = e->next;
                break;
            }
        entry_free(e);
        req_free(q);
        maybe_free(r);
        return;
    }
    if (t->status == 0) {
        bd_served *old = e->served;
        e->served = t->served;
        t->served = NULL;
        atomic_fetch_add(&r->generation, 1);
        e->state = BD_STATE_READY;
        e->reason[0] = '\0';
        e->unloaded = false;
        if (q->config_keep) {
            free(e->config_mem);
            e->config_mem = q->config_keep;
            q->config_keep = NULL;
        }
        r->stats.loads_ok++;
        const bd_partition_summary *s = bd_served_summary(e->served);
        bd_log(BD_LOG_INFO, e->name, bd_served_version(e->served), "loaded in %.1f ms (%zu nodes, %zu after fusion, %zu steps)%s",
               s->load_ms, s->nodes_imported, s->nodes_planned, s->steps,
               old ? "; the previous version finishes its requests and is freed" : "");
        bd_served_release(old);
    } else if (atomic_load(&r->cancel)) {
        if (!e->served)
            snprintf(e->reason, sizeof e->reason, "load cancelled: braidd is shutting down");
        e->state = e->served ? BD_STATE_READY : BD_STATE_UNAVAILABLE;
        bd_log(BD_LOG_INFO, e->name, NULL, "load cancelled (shutting down)");
    } else {
        r->stats.loads_failed++;
        if (e->served) {
            snprintf(e->reason, sizeof e->reason, "reload failed, version %s keeps serving: %.440s",
                     bd_served_version(e->served), t->err.msg);
            e->state = BD_STATE_READY;
        } else {
            snprintf(e->reason, sizeof e->reason, "%s", t->err.msg);
            e->state = BD_STATE_UNAVAILABLE;
        }
        bd_log(BD_LOG_ERROR, e->name, NULL, "load failed: %s", e->reason);
    }
    /* What waited starts before this callback runs, so a load the callback asks for queues
     * behind it instead of jumping ahead. */
    run_waiting(r, e);
    if (q->cb)
        q->cb(q->arg, t->status, t->status ? t->err.msg : "");
    req_free(q);
}

/* The directory uploads go to when no repository was configured: private, removed at exit. */
static int ensure_repo(bd_registry *r, bd_error *err)
{
    if (r->repo[0])
        return 0;
    const char *tmp = getenv("TMPDIR");
    snprintf(r->repo, sizeof r->repo, "%s/braidd-models-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(r->repo)) {
        int e = errno;
        r->repo[0] = '\0';
        return bd_error_set(err, BD_EIO, "cannot create a directory for uploaded models: %s", strerror(e));
    }
    r->private_repo = true;
    bd_log(BD_LOG_INFO, NULL, NULL, "no repository configured: uploaded models go to %s", r->repo);
    return 0;
}

/* BD_EBUSY when E (may be NULL: a new model) cannot take one more operation. */
static int check_pending(bd_registry *r, const reg_entry *e, const char *name, const char *what, bd_error *err)
{
    if (!what)            /* a repository scan: one load per model directory, bounded by the operator */
        return 0;
    if (e && e->loading && e->n_waiting >= r->cfg.load_queue_limit)
        return bd_error_set(err, BD_EBUSY,
                            "model '%s': %d load/unload request(s) already wait behind its running load "
                            "(load_queue_limit %d); %s refused, retry once they finish",
                            name, e->n_waiting, r->cfg.load_queue_limit, what);
    if (r->loads_in_flight + r->ops_waiting >= BD_REGISTRY_MAX_PENDING_OPS)
        return bd_error_set(err, BD_EBUSY, "model '%s': %d model loads/unloads are already running or waiting "
                            "(at most %d); %s refused, retry later", name,
                            r->loads_in_flight + r->ops_waiting, BD_REGISTRY_MAX_PENDING_OPS, what);
    return 0;
}

/* SCAN: asked for by a repository scan (STARTUP: the first one), not by a client. */
static int load_impl(bd_registry *r, const char *name, const char *config_json,
                     const bd_upload *uploads, size_t n_uploads, bool scan, bool startup,
                     bd_registry_cb cb, void *arg, bd_error *err)
{
    int rc = model_name_check(name, err);
    if (rc)
        return rc;
    if (r->destroyed || r->draining)
        return bd_error_set(err, BD_EUNAVAIL, "model '%s': braidd is shutting down: load refused", name);
    if (n_uploads > 0 && !r->cfg.allow_uploads)
        return bd_error_set(err, BD_EINVAL,
                            "model '%s': uploading model files is disabled; start braidd with --allow-uploads "
                            "(config key allow_uploads) to enable it", name);
    for (size_t i = 0; i < n_uploads; i++)
        if ((rc = upload_check_path(uploads[i].path, err)) != 0)
            return bd_error_prefix(err, "model '%s': ", name);
    if (config_json) {
        bd_model_config mc;
        if ((rc = model_config_parse(&mc, name, config_json, err)) != 0)
            return rc;
    }
    reg_entry *e = find(r, name);
    if ((rc = check_pending(r, e, name, scan ? NULL : "load", err)) != 0)
        return rc;
    size_t bytes = 0;
    for (size_t i = 0; i < n_uploads; i++)
        if (__builtin_add_overflow(bytes, uploads[i].len, &bytes))
            bytes = SIZE_MAX;
    size_t limit = r->cfg.max_pending_upload_bytes;
    if (bytes > 0 && (bytes > limit || r->pending_upload_bytes > limit - bytes))
        return bd_error_set(err, BD_EBUSY,
                            "model '%s': uploaded files of loads not finished yet hold %zu MiB; this request's "
                            "%zu MiB would pass max_pending_upload_bytes (%zu MiB): refused, retry %s",
                            name, r->pending_upload_bytes >> 20, bytes >> 20, limit >> 20,
                            bytes > limit ? "with smaller files or a larger limit" : "once they finish");
    if (r->cfg.allow_uploads && (rc = ensure_repo(r, err)) != 0)
        return rc;
    if (!r->repo[0])
        return bd_error_set(err, BD_ENOTFOUND,
                            "unknown model '%s': no repository is configured (start braidd with --repository DIR, "
                            "or with --allow-uploads and upload the model)", name);
    if (!e && n_uploads == 0) {
        char dir[8192];
        struct stat st;
        snprintf(dir, sizeof dir, "%s/%s", r->repo, name);
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
            return bd_error_set(err, BD_ENOTFOUND, "unknown model '%s': no directory %s in the repository",
                                name, dir);
    }

    load_req *q = calloc(1, sizeof *q);
    bd_load_task *t = calloc(1, sizeof *t);
    if (!q || !t || !(e = get_or_add(r, name, err))) {
        free(q);
        free(t);
        return bd_error_set(err, BD_ENOMEM, "model '%s': out of memory", name);
    }
    q->task = t;
    q->r = r;
    q->startup = startup;
    t->cancel = &r->cancel;
    atomic_store(&t->uploads_done, n_uploads == 0);
    snprintf(t->repo, sizeof t->repo, "%s", r->repo);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->threads = r->cfg.threads_per_worker;
    t->queue_limit = r->cfg.queue_limit;
    snprintf(t->fallback_ops, sizeof t->fallback_ops, "%s", r->cfg.fallback_ops);
    snprintf(t->engine, sizeof t->engine, "%s", r->cfg.engine);
    t->plan_cache_max_plans = r->cfg.plan_cache_max_plans;
    t->plan_cache_max_bytes = r->cfg.plan_cache_max_bytes;
    t->max_run_memory_bytes = r->cfg.max_run_memory_bytes;
    t->write_config = config_json && r->cfg.allow_uploads;
    bool oom = false;
    if (config_json)
        oom |= !(t->config_json = strdup(config_json));
    if (config_json && !r->cfg.allow_uploads)
        oom |= !(q->config_keep = strdup(config_json));
    if (n_uploads) {
        oom |= !(t->uploads = calloc(n_uploads, sizeof *t->uploads));
        for (size_t i = 0; !oom && i < n_uploads; i++) {
            t->uploads[i] = uploads[i];
            oom |= !(t->uploads[i].path = strdup(uploads[i].path));
            t->n_uploads = i + 1;
        }
    }
    if (oom) {
        req_free(q);
        return bd_error_set(err, BD_ENOMEM, "model '%s': out of memory", name);
    }
    q->e = e;
    q->cb = cb;
    q->arg = arg;
    q->upload_bytes = bytes;                  /* held until the request is freed */
    r->pending_upload_bytes += bytes;
    if (e->loading) {                         /* its turn comes after the running load */
        load_req **at = &e->waiting;
        while (*at)
            at = &(*at)->next;
        *at = q;
        e->n_waiting++;
        r->ops_waiting++;
        bd_log(BD_LOG_INFO, name, NULL, "load queued behind the running one");
        return 0;
    }
    rc = start_load(r, q);
    if (rc) {
        req_free(q);
        return bd_error_set(err, BD_EIO, "model '%s': cannot start the load: %s", name, uv_strerror(rc));
    }
    if (startup)
        r->startup_loads++;
    return 0;
}

int bd_registry_load(bd_registry *r, const char *name, const char *config_json,
                     const bd_upload *uploads, size_t n_uploads,
                     bd_registry_cb cb, void *arg, bd_error *err)
{
    return load_impl(r, name, config_json, uploads, n_uploads, false, false, cb, arg, err);
}

/* Hand Q to the thread pool. The in-memory config (uploads off) applies unless Q brings one:
 * it is read now, so a queued load sees what the loads before it stored. */
static int start_load(bd_registry *r, load_req *q)
{
    reg_entry *e = q->e;
    bd_load_task *t = q->task;
    if (!t->config_json && e->config_mem && !(t->config_json = strdup(e->config_mem)))
        return UV_ENOMEM;
    q->work.data = q;
    int rc = uv_queue_work(r->loop, &q->work, load_work, after_load);
    if (rc)
        return rc;
    e->loading = true;
    e->running = q;
    e->state = BD_STATE_LOADING;
    r->loads_in_flight++;
    bd_log(BD_LOG_INFO, e->name, NULL, "%s%s", e->served ? "reloading" : "loading",
           t->n_uploads ? " (uploaded files)" : "");
    return 0;
}

/* ---- unload ------------------------------------------------------------------------------- */

static void do_unload(bd_registry *r, reg_entry *e, bd_registry_cb cb, void *arg)
{
    bd_served *old = e->served;
    e->served = NULL;
    atomic_fetch_add(&r->generation, 1);
    e->state = BD_STATE_UNAVAILABLE;
    snprintf(e->reason, sizeof e->reason, "unloaded");
    e->unloaded = true;
    r->stats.unloads++;
    if (old) {
        bd_log(BD_LOG_INFO, e->name, bd_served_version(old), "unloaded; requests already running finish first");
        bd_served_release(old);   /* in-flight requests hold their own references */
    }
    post_cb(r, cb, arg, 0, "");
}

int bd_registry_unload(bd_registry *r, const char *name, bd_registry_cb cb, void *arg, bd_error *err)
{
    reg_entry *e = name ? find(r, name) : NULL;
    if (!e)
        return bd_error_set(err, BD_ENOTFOUND, "unknown model '%s'", name ? name : "");
    if (r->destroyed || r->draining)
        return bd_error_set(err, BD_EUNAVAIL, "model '%s': braidd is shutting down: unload refused", name);
    if (e->loading) {                         /* after the running load, in order */
        int rc = check_pending(r, e, name, "unload", err);
        if (rc)
            return rc;
        load_req *q = calloc(1, sizeof *q);
        if (!q)
            return bd_error_set(err, BD_ENOMEM, "model '%s': out of memory", name);
        q->unload = true;
        q->r = r;
        q->e = e;
        q->cb = cb;
        q->arg = arg;
        load_req **at = &e->waiting;
        while (*at)
            at = &(*at)->next;
        *at = q;
        e->n_waiting++;
        r->ops_waiting++;
        return 0;
    }
    do_unload(r, e, cb, arg);
    return 0;
}

/* ---- scan --------------------------------------------------------------------------------- */

/* A model found in the repository wants a (re)load when nothing serves it (unless it was
 * unloaded on purpose) or when a newer version directory appeared. */
static bool wants_load(bd_registry *r, reg_entry *e)
{
    if (e->loading || e->unloaded)
        return false;
    if (!e->served)
        return true;
    char dir[8192], version[32];
    snprintf(dir, sizeof dir, "%s/%s", r->repo, e->name);
    return repo_highest_version(dir, e->name, version, sizeof version, NULL) == 0 &&
           strcmp(version, bd_served_version(e->served)) != 0;
}

int bd_registry_scan(bd_registry *r, bool load, bd_error *err)
{
    bool startup = !r->scanned;       /* readiness waits for the loads of the first scan */
    r->scanned = true;
    if (!r->repo[0])
        return 0;
    DIR *d = opendir(r->repo);
    if (!d)
        return bd_error_set(err, BD_EIO, "repository '%s': %s", r->repo, strerror(errno));
    int rc = 0;
    for (struct dirent *de; rc == 0 && (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.')
            continue;
        char path[8192];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", r->repo, de->d_name);
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        bd_error nerr = { 0 };
        if (model_name_check(de->d_name, &nerr)) {
            bd_log(BD_LOG_WARN, NULL, NULL, "repository: skipping '%s': %s", de->d_name, nerr.msg);
            continue;
        }
        reg_entry *e = get_or_add(r, de->d_name, err);
        if (!e) {
            rc = BD_ENOMEM;
            break;
        }
        bd_error lerr = { 0 };
        if (load && wants_load(r, e) && load_impl(r, e->name, NULL, NULL, 0, true, startup, NULL, NULL, &lerr))
            bd_log(BD_LOG_WARN, e->name, NULL, "not loaded: %s", lerr.msg);
    }
    closedir(d);
    return rc;
}

/* ---- lookups ------------------------------------------------------------------------------ */

int bd_registry_acquire(bd_registry *r, const char *name, const char *version, bd_served **out,
                        bd_error *err)
{
    reg_entry *e = name ? find(r, name) : NULL;
    if (!e)
        return bd_error_set(err, BD_ENOTFOUND, "unknown model '%s'", name ? name : "");
    if (!e->served) {
        if (e->unloaded)
            return bd_error_set(err, BD_ENOTFOUND, "model '%s' is unloaded", name);
        if (e->loading)
            return bd_error_set(err, BD_EUNAVAIL, "model '%s' is loading", name);
        if (e->reason[0])
            return bd_error_set(err, BD_EUNAVAIL, "model '%s' is not ready: %s", name, e->reason);
        return bd_error_set(err, BD_EUNAVAIL, "model '%s' is not loaded (load it with RepositoryModelLoad)", name);
    }
    if (version && version[0] && strcmp(version, bd_served_version(e->served)) != 0)
        return bd_error_set(err, BD_ENOTFOUND, "model '%s' has no version '%s' (version %s is served)", name,
                            version, bd_served_version(e->served));
    bd_served_retain(e->served);
    *out = e->served;
    return 0;
}

size_t bd_registry_snapshot(bd_registry *r, bd_registry_entry **out)
{
    size_t n = 0;
    for (reg_entry *e = r->entries; e; e = e->next)
        n++;
    *out = NULL;
    if (n == 0)
        return 0;
    bd_registry_entry *a = calloc(n, sizeof *a);
    if (!a)
        return 0;
    size_t i = 0;
    for (reg_entry *e = r->entries; e; e = e->next, i++) {
        snprintf(a[i].name, sizeof a[i].name, "%s", e->name);
        snprintf(a[i].version, sizeof a[i].version, "%s", e->served ? bd_served_version(e->served) : "");
        a[i].state = e->state;
        snprintf(a[i].reason, sizeof a[i].reason, "%s", e->reason);
        a[i].served = e->served;
        if (e->served)
            bd_served_retain(e->served);
    }
    *out = a;
    return n;
}

void bd_registry_snapshot_free(bd_registry_entry *entries, size_t n)
{
    for (size_t i = 0; entries && i < n; i++)
        bd_served_release(entries[i].served);
    free(entries);
}

/* ---- readiness and shutdown --------------------------------------------------------------- */

const char *bd_registry_not_ready_reason(bd_registry *r)
{
    if (r->draining || r->destroyed)
        return "shutting down";
    if (!r->scanned || r->startup_loads > 0)
        return "starting up: the repository's models are loading";
    return NULL;
}

bool bd_registry_ready(bd_registry *r)
{
    return bd_registry_not_ready_reason(r) == NULL;
}

void bd_registry_shutdown(bd_registry *r)
{
    if (r->draining)
        return;
    r->draining = true;
    atomic_store(&r->cancel, true);
    int answered = 0, cancelled = 0;
    for (reg_entry *e = r->entries; e; e = e->next) {
        for (load_req *q = e->waiting, *next; q; q = next) {
            next = q->next;
            char msg[512];
            snprintf(msg, sizeof msg, "model '%s': braidd is shutting down: the %s waiting behind the running "
                     "load was not started", e->name, q->unload ? "unload" : "load");
            post_cb(r, q->cb, q->arg, BD_EUNAVAIL, msg);
            req_free(q);
            r->ops_waiting--;
            answered++;
        }
        e->waiting = NULL;
        e->n_waiting = 0;
        /* Not started yet: after_load runs with UV_ECANCELED. Running: its checkpoints see CANCEL. */
        if (e->running && uv_cancel((uv_req_t *)&e->running->work) == 0)
            cancelled++;
    }
    if (r->loads_in_flight > 0 || answered > 0)
        bd_log(BD_LOG_INFO, NULL, NULL, "shutdown: %d load(s) cancelled before starting, %d stopping at their "
               "next step, %d waiting operation(s) answered UNAVAILABLE", cancelled,
               r->loads_in_flight - cancelled, answered);
}

int bd_registry_loads_running(const bd_registry *r) { return r->loads_in_flight; }

void bd_registry_abandon_loads(bd_registry *r)
{
    for (reg_entry *e = r->entries; e; e = e->next) {
        load_req *q = e->running;
        /* Still copying the caller's upload (which lives in the caller's request): not yet. */
        if (!q || !q->cb || !atomic_load(&q->task->uploads_done))
            continue;
        char msg[512];
        snprintf(msg, sizeof msg, "model '%s': load abandoned: braidd is shutting down and the exit timeout "
                 "passed while it was compiling", e->name);
        bd_log(BD_LOG_WARN, e->name, NULL, "exit timeout: load abandoned (its result will be discarded)");
        post_cb(r, q->cb, q->arg, BD_EUNAVAIL, msg);
        q->cb = NULL;
    }
}

bd_server_stats *bd_registry_server_stats(bd_registry *r) { return &r->stats; }
