/* The ONNX conformance runner: every case of the ONNX backend node suite (Debian's
 * libonnx-testdata) through braid, optionally through ONNX Runtime itself as the baseline.
 *
 *   onnx_conformance [options] [CASE_DIR...]
 *     --data DIR       the node suite (default /usr/share/libonnx-testdata/data/node)
 *     --only TEXT      only cases whose name contains TEXT (repeatable)
 *     --jobs N         cases run in N child processes at once (default: online CPUs)
 *     --timeout S      per case and engine, seconds (default 60); a case past it fails
 *     --engine NAME    braid's placement: "ort" sends every node to the fallback engine
 *     --baseline       also run each case through ONNX Runtime itself
 *     --ort PATH       libonnxruntime.so.1 (default $BRAID_ORT_LIB, else
 *                      ${BRAID_ORT_DIR:-~/.cache/braid/ort-1.30.0}/libonnxruntime.so.1)
 *     --expect FILE    exit 1 when a case FILE lists (one name per line) fails: the cases an
 *                      engine set must keep passing (with --engine dnnl,native: no framework)
 *     --check FILE     CI mode (implies --baseline): exit 1 when braid fails a case ORT
 *                      passes that FILE does not list, or when a listed case no longer is
 *                      such a gap; exit 77 (skip) when ONNX Runtime is not available
 *     --doc FILE       rewrite the generated section of FILE (docs/conformance.md)
 *     --verbose        let the children's stdout/stderr through
 *
 * Output: one line per braid failure ("case: reason"), then the summary; the last line is
 * "P passed, D passed entirely on oneDNN, F failed".
 *
 * Each case runs in a forked child per engine (the parent never runs a model, so no OpenMP
 * or ORT thread exists at fork time): a crash or a hang costs that case only, and N children
 * use N cores. The child sends its cf_result through a pipe and _exits. */
#include "tests/conformance/conformance.h"

#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "backends/ort/ort_api.h"

#define DEFAULT_DATA "/usr/share/libonnx-testdata/data/node"
#define MAX_JOBS     64
#define MAX_ONLY     32

enum { ENGINE_BRAID, ENGINE_ORT, N_ENGINES };

typedef struct case_state {
    char     *dir;
    const char *name;
    bool      done[N_ENGINES];
    cf_result res[N_ENGINES];
    double    secs[N_ENGINES];     /* wall time of each engine's child */
} case_state;

typedef struct slot {
    pid_t    pid;           /* 0 = free */
    int      fd;
    size_t   task;
    double   start, deadline;
    cf_result got;
    size_t   got_len;
} slot;

typedef struct config {
    const char *data, *engine, *ort, *check, *doc, *expect;
    const char *only[MAX_ONLY];
    size_t      n_only;
    int         jobs;
    double      timeout;
    bool        baseline, verbose;
} config;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *default_ort(char *buf, size_t len)
{
    if (getenv("BRAID_ORT_LIB"))
        snprintf(buf, len, "%s", getenv("BRAID_ORT_LIB"));
    else if (getenv("BRAID_ORT_DIR"))
        snprintf(buf, len, "%s/libonnxruntime.so.1", getenv("BRAID_ORT_DIR"));
    else
        snprintf(buf, len, "%s/.cache/braid/ort-1.30.0/libonnxruntime.so.1",
                 getenv("HOME") ? getenv("HOME") : "/root");
    return buf;
}

static void usage(void)
{
    fprintf(stderr, "usage: onnx_conformance [--data DIR] [--only TEXT] [--jobs N] [--timeout S] "
            "[--engine LIST] [--baseline] [--ort LIB] [--check ALLOWLIST] [--expect LIST] [--doc FILE] "
            "[--verbose] [CASE_DIR...]\n");
    exit(2);
}

/* ---- the process pool ------------------------------------------------------------------ */

static void child(const case_state *c, int engine, const config *cfg, int fd)
{
    if (!cfg->verbose) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
            close(null);
        }
    }
    alarm((unsigned)cfg->timeout + 2);     /* a backstop; the parent kills at the deadline */
    cf_options o = { .ort_library = cfg->ort, .engine = cfg->engine };
    cf_result r;
    if (engine == ENGINE_BRAID)
        cf_run_braid(c->dir, &o, &r);
    else
        cf_run_ort(c->dir, &o, &r);
    ssize_t w = write(fd, &r, sizeof r);   /* < PIPE_BUF: one atomic write */
    _exit(w == (ssize_t)sizeof r ? 0 : 3);
}

/* The result of a child that ended without sending one. */
static void lost(cf_result *r, int status, bool timed_out, double timeout)
{
    memset(r, 0, sizeof *r);
    r->status = CF_FAIL;
    if (timed_out)
        snprintf(r->reason, sizeof r->reason, "timeout: no result after %.0f s", timeout);
    else if (WIFSIGNALED(status))
        snprintf(r->reason, sizeof r->reason, "crash: killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(r->reason, sizeof r->reason, "crash: exited with status %d without a result",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static void run_all(case_state *cases, size_t n_cases, const config *cfg)
{
    size_t n_engines = cfg->baseline ? 2 : 1;
    size_t n_tasks = n_cases * n_engines, next = 0, active = 0;
    slot slots[MAX_JOBS];
    memset(slots, 0, sizeof slots);
    int jobs = cfg->jobs < 1 ? 1 : cfg->jobs > MAX_JOBS ? MAX_JOBS : cfg->jobs;

    while (next < n_tasks || active > 0) {
        for (int j = 0; j < jobs && next < n_tasks; j++) {
            if (slots[j].pid)
                continue;
            size_t t = next++;
            int p[2];
            if (pipe(p) != 0) {
                perror("onnx_conformance: pipe");
                exit(1);
            }
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                perror("onnx_conformance: fork");
                exit(1);
            }
            if (pid == 0) {
                close(p[0]);
                for (int k = 0; k < jobs; k++)
                    if (slots[k].pid)
                        close(slots[k].fd);
                child(&cases[t / n_engines], (int)(t % n_engines), cfg, p[1]);
            }
            close(p[1]);
            double t0 = now();
            slots[j] = (slot){ .pid = pid, .fd = p[0], .task = t, .start = t0,
                               .deadline = t0 + cfg->timeout };
            active++;
        }

        struct pollfd pf[MAX_JOBS];
        int idx[MAX_JOBS], n = 0;
        for (int j = 0; j < jobs; j++)
            if (slots[j].pid) {
                pf[n] = (struct pollfd){ .fd = slots[j].fd, .events = POLLIN };
                idx[n++] = j;
            }
        if (poll(pf, (nfds_t)n, 100) < 0 && errno != EINTR) {
            perror("onnx_conformance: poll");
            exit(1);
        }
        for (int k = 0; k < n; k++) {
            slot *s = &slots[idx[k]];
            bool ended = false, timed_out = false;
            if (pf[k].revents) {
                ssize_t got = read(s->fd, (char *)&s->got + s->got_len, sizeof s->got - s->got_len);
                if (got > 0)
                    s->got_len += (size_t)got;
                else if (got == 0 || errno != EINTR)
                    ended = true;
            }
            if (!ended && now() > s->deadline) {
                kill(s->pid, SIGKILL);
                ended = timed_out = true;
            }
            if (!ended)
                continue;
            int status = 0;
            waitpid(s->pid, &status, 0);
            close(s->fd);
            case_state *c = &cases[s->task / n_engines];
            int engine = (int)(s->task % n_engines);
            if (s->got_len == sizeof s->got)
                c->res[engine] = s->got;
            else
                lost(&c->res[engine], status, timed_out, cfg->timeout);
            c->res[engine].reason[CF_REASON_MAX - 1] = '\0';
            c->done[engine] = true;
            c->secs[engine] = now() - s->start;
            memset(s, 0, sizeof *s);
            active--;
        }
    }
}

/* ---- the allow-list (--check) ------------------------------------------------------------ */

typedef struct gap {
    char name[256];
    char cause[512];
    bool seen;
} gap;

/* Lines: "case_name  cause..."; '#' starts a comment line; blank lines are skipped. */
static gap *read_gaps(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "onnx_conformance: cannot read the allow-list %s: %s\n", path, strerror(errno));
        exit(1);
    }
    gap *v = NULL;
    size_t cap = 0;
    *n = 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || *p == '\0')
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 32;
            v = realloc(v, cap * sizeof *v);
            if (!v) {
                fprintf(stderr, "onnx_conformance: out of memory\n");
                exit(1);
            }
        }
        gap *g = &v[(*n)++];
        memset(g, 0, sizeof *g);
        size_t l = strcspn(p, " \t\n");
        snprintf(g->name, sizeof g->name, "%.*s", (int)l, p);
        p += l;
        p += strspn(p, " \t");
        snprintf(g->cause, sizeof g->cause, "%s", p);
        g->cause[strcspn(g->cause, "\n")] = '\0';
    }
    fclose(f);
    return v;
}

static gap *find_gap(gap *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

/* Compare the run with the allow-list; returns the number of problems (printed). */
static size_t check_gaps(case_state *cases, size_t n_cases, const char *path, size_t filtered)
{
    size_t n_gaps, problems = 0;
    gap *gaps = read_gaps(path, &n_gaps);
    for (size_t i = 0; i < n_cases; i++) {
        const case_state *c = &cases[i];
        bool ort_ok = c->res[ENGINE_ORT].status == CF_PASS;
        bool braid_ok = c->res[ENGINE_BRAID].status == CF_PASS;
        gap *g = find_gap(gaps, n_gaps, c->name);
        if (g)
            g->seen = true;
        if (ort_ok && !braid_ok && !g) {
            printf("REGRESSION %s: ONNX Runtime passes it, braid fails: %s\n", c->name,
                   c->res[ENGINE_BRAID].reason);
            problems++;
        } else if (g && braid_ok) {
            printf("STALE %s: listed in %s as a known gap, but braid passes it now: remove it\n",
                   c->name, path);
            problems++;
        } else if (g && !ort_ok) {
            printf("STALE %s: listed in %s, but ONNX Runtime fails it too (%s): remove it\n",
                   c->name, path, c->res[ENGINE_ORT].reason);
            problems++;
        }
    }
    for (size_t i = 0; !filtered && i < n_gaps; i++)
        if (!gaps[i].seen) {
            printf("STALE %s: listed in %s but not in the suite: remove it\n", gaps[i].name, path);
            problems++;
        }
    free(gaps);
    return problems;
}

/* ---- the report ---------------------------------------------------------------------------- */

typedef struct totals {
    size_t passed, dnnl_only, failed, type_gaps;
    size_t float_cases, float_passed;
    size_t ort_passed, ort_failed, ort_type_gaps, gap_vs_ort;
} totals;

static totals count(const case_state *cases, size_t n, bool baseline)
{
    totals t = { 0 };
    for (size_t i = 0; i < n; i++) {
        const cf_result *b = &cases[i].res[ENGINE_BRAID], *o = &cases[i].res[ENGINE_ORT];
        t.float_cases += b->float_case;
        if (b->status == CF_PASS) {
            t.passed++;
            t.dnnl_only += b->dnnl_only;
            t.float_passed += b->float_case;
        } else {
            t.failed++;
            t.type_gaps += b->status == CF_UNSUPPORTED_TYPE;
        }
        if (!baseline)
            continue;
        if (o->status == CF_PASS) {
            t.ort_passed++;
            t.gap_vs_ort += b->status != CF_PASS;
        } else {
            t.ort_failed++;
            t.ort_type_gaps += o->status == CF_UNSUPPORTED_TYPE;
        }
    }
    return t;
}

/* --expect: every case the list names and this run ran must pass; a passing case it does not
 * name is reported so the list can grow. Returns the number of listed cases that failed. */
static size_t check_expected(const case_state *cases, size_t n, const char *path)
{
    size_t n_list, lost = 0, gained = 0;
    gap *list = read_gaps(path, &n_list);
    for (size_t i = 0; i < n; i++) {
        bool ok = cases[i].res[ENGINE_BRAID].status == CF_PASS;
        gap *g = find_gap(list, n_list, cases[i].name);
        if (g && !ok) {
            printf("LOST %s: %s lists it as passing, it fails: %s\n", cases[i].name, path,
                   cases[i].res[ENGINE_BRAID].reason);
            lost++;
        } else if (!g && ok) {
            printf("NEW %s: passes, not yet in %s\n", cases[i].name, path);
            gained++;
        }
    }
    free(list);
    printf("expected passes (%s): %zu lost, %zu new\n", path, lost, gained);
    return lost;
}

static const char *ort_version(const char *lib)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return NULL;
    OrtGetApiBaseFn get_base;
    *(void **)&get_base = dlsym(h, "OrtGetApiBase");
    return get_base ? get_base()->GetVersionString() : NULL;
}

/* Markdown-safe copy of S into BUF: pipes escaped, and the suite's directory DROP (with its
 * slash) left out of paths, which only repeat the case name. */
static const char *md(const char *s, const char *drop, char *buf, size_t len)
{
    size_t o = 0, n_drop = strlen(drop);
    for (; *s && o + 3 < len; s++) {
        if (n_drop && strncmp(s, drop, n_drop) == 0 && s[n_drop] == '/') {
            s += n_drop;
            continue;
        }
        if (*s == '|')
            buf[o++] = '\\';
        buf[o++] = *s == '\n' ? ' ' : *s;
    }
    buf[o] = '\0';
    return buf;
}

#define DOC_BEGIN "<!-- BEGIN generated by tests/conformance/onnx_conformance --doc -->"
#define DOC_END   "<!-- END generated section -->"

static void write_doc(const char *path, const case_state *cases, size_t n, const totals *t,
                      const config *cfg, const char *ortv)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "onnx_conformance: cannot read %s: %s\n", path, strerror(errno));
        exit(1);
    }
    char *old = NULL;
    size_t old_len = 0;
    FILE *mem = open_memstream(&old, &old_len);
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, got, mem);
    fclose(f);
    fclose(mem);
    char *b = strstr(old, DOC_BEGIN), *e = b ? strstr(b, DOC_END) : NULL;
    if (!b || !e) {
        fprintf(stderr, "onnx_conformance: %s has no '%s' ... '%s' section\n", path, DOC_BEGIN, DOC_END);
        exit(1);
    }
    f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "onnx_conformance: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fwrite(old, 1, (size_t)(b - old), f);
    fprintf(f, "%s\n", DOC_BEGIN);
    fprintf(f, "Command: `onnx_conformance --baseline%s%s --doc docs/conformance.md` "
            "(from the build directory: `tests/conformance/onnx_conformance`), %zu cases of "
            "libonnx-testdata's node suite.\n\n", cfg->engine ? " --engine " : "",
            cfg->engine ? cfg->engine : "", n);
    fprintf(f, "| engine | passed | passed entirely on oneDNN | failed | of which sequence/optional/string |\n"
               "|---|---:|---:|---:|---:|\n");
    fprintf(f, "| braid (oneDNN + ONNX Runtime fallback) | %zu | %zu | %zu | %zu |\n", t->passed,
            t->dnnl_only, t->failed, t->type_gaps);
    if (cfg->baseline)
        fprintf(f, "| ONNX Runtime %s alone | %zu | — | %zu | %zu |\n", ortv ? ortv : "?",
                t->ort_passed, t->ort_failed, t->ort_type_gaps);
    if (cfg->baseline)
        fprintf(f, "\nCases ONNX Runtime passes and braid fails: **%zu**.\n", t->gap_vs_ort);
    fprintf(f, "\n### braid's failures\n\n| case | reason | ONNX Runtime |\n|---|---|---|\n");
    char r1[2 * CF_REASON_MAX], r2[2 * CF_REASON_MAX];
    for (size_t i = 0; i < n; i++) {
        const cf_result *br = &cases[i].res[ENGINE_BRAID], *o = &cases[i].res[ENGINE_ORT];
        if (br->status == CF_PASS)
            continue;
        const char *ort_col = !cfg->baseline ? "not run"
                            : o->status == CF_PASS ? "**passes**" : md(o->reason, cfg->data, r2, sizeof r2);
        fprintf(f, "| `%s` | %s%s | %s |\n", cases[i].name,
                br->status == CF_UNSUPPORTED_TYPE ? "unsupported type — " : "",
                md(br->reason, cfg->data, r1, sizeof r1), ort_col);
    }
    fprintf(f, "%s", e);
    fclose(f);
    free(old);
}

/* The five slowest children, so a CI time budget can be kept. */
static void print_slowest(const case_state *cases, size_t n, size_t n_engines)
{
    size_t top[5] = { 0 }, n_top = 0;
    for (size_t t = 0; t < n * n_engines; t++) {
        double s = cases[t / n_engines].secs[t % n_engines];
        size_t k = n_top < 5 ? n_top++ : 4;
        if (k == 4 && n_top == 5 && s <= cases[top[4] / n_engines].secs[top[4] % n_engines])
            continue;
        for (; k > 0 && cases[top[k - 1] / n_engines].secs[top[k - 1] % n_engines] < s; k--)
            top[k] = top[k - 1];
        top[k] = t;
    }
    printf("slowest:");
    for (size_t i = 0; i < n_top; i++)
        printf(" %s (%s) %.1f s%s", cases[top[i] / n_engines].name,
               top[i] % n_engines == ENGINE_BRAID ? "braid" : "ort",
               cases[top[i] / n_engines].secs[top[i] % n_engines], i + 1 < n_top ? "," : "\n");
    if (n_top == 0)
        printf(" -\n");
}

/* ---- main --------------------------------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
    return strcmp(((const case_state *)a)->name, ((const case_state *)b)->name);
}

int main(int argc, char **argv)
{
    config cfg = { .data = DEFAULT_DATA, .timeout = 60 };
    char ort_buf[4096];
    cfg.ort = default_ort(ort_buf, sizeof ort_buf);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cfg.jobs = cpus > 0 ? (int)cpus : 1;
    int first_case = argc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "--data") && more)          cfg.data = argv[++i];
        else if (!strcmp(a, "--only") && more && cfg.n_only < MAX_ONLY) cfg.only[cfg.n_only++] = argv[++i];
        else if (!strcmp(a, "--jobs") && more)     cfg.jobs = atoi(argv[++i]);
        else if (!strcmp(a, "--timeout") && more)  cfg.timeout = atof(argv[++i]);
        else if (!strcmp(a, "--engine") && more)   cfg.engine = argv[++i];
        else if (!strcmp(a, "--ort") && more)      cfg.ort = argv[++i];
        else if (!strcmp(a, "--check") && more)    cfg.check = argv[++i], cfg.baseline = true;
        else if (!strcmp(a, "--expect") && more)   cfg.expect = argv[++i];
        else if (!strcmp(a, "--doc") && more)      cfg.doc = argv[++i];
        else if (!strcmp(a, "--baseline"))         cfg.baseline = true;
        else if (!strcmp(a, "--verbose"))          cfg.verbose = true;
        else if (a[0] == '-')                      usage();
        else { first_case = i; break; }
    }
    if (cfg.timeout <= 0)
        usage();

    /* The ORT library is mapped once here (dlopen only: no session, no thread), so the
     * children share the mapping instead of each relocating it. */
    const char *ortv = ort_version(cfg.ort);
    if (cfg.baseline && !ortv) {
        printf("ONNX Runtime not available (%s): run scripts/fetch_ort.sh; skipping\n", cfg.ort);
        return 77;
    }

    glob_t gl = { 0 };
    char pattern[4200];
    snprintf(pattern, sizeof pattern, "%s/test_*", cfg.data);
    char **dirs;
    size_t n_dirs;
    if (first_case < argc) {
        dirs = argv + first_case;
        n_dirs = (size_t)(argc - first_case);
    } else {
        if (glob(pattern, GLOB_ONLYDIR, NULL, &gl) != 0) {
            printf("no cases under %s (install libonnx-testdata); skipping\n", cfg.data);
            return 77;
        }
        dirs = gl.gl_pathv;
        n_dirs = gl.gl_pathc;
    }
    case_state *cases = calloc(n_dirs + 1, sizeof *cases);
    size_t n = 0;
    for (size_t i = 0; i < n_dirs; i++) {
        char *d = dirs[i];
        size_t l = strlen(d);
        while (l > 1 && d[l - 1] == '/')
            d[--l] = '\0';
        const char *slash = strrchr(d, '/');
        const char *name = slash ? slash + 1 : d;
        bool keep = cfg.n_only == 0;
        for (size_t k = 0; k < cfg.n_only; k++)
            keep |= strstr(name, cfg.only[k]) != NULL;
        if (keep)
            cases[n++] = (case_state){ .dir = d, .name = name };
    }
    qsort(cases, n, sizeof *cases, by_name);

    double t0 = now();
    run_all(cases, n, &cfg);
    double secs = now() - t0;

    totals t = count(cases, n, cfg.baseline);
    for (size_t i = 0; i < n; i++) {
        const cf_result *b = &cases[i].res[ENGINE_BRAID];
        if (b->status == CF_PASS)
            continue;
        printf("%s: %s%s%s\n", cases[i].name, b->status == CF_UNSUPPORTED_TYPE ? "[unsupported type] " : "",
               b->reason, !cfg.baseline ? ""
               : cases[i].res[ENGINE_ORT].status == CF_PASS ? " [ONNX Runtime passes]"
                                                            : " [ONNX Runtime fails too]");
    }
    printf("\n%zu cases in %.1f s (%d jobs, %.0f s per case and engine at most)\n", n, secs, cfg.jobs,
           cfg.timeout);
    print_slowest(cases, n, cfg.baseline ? 2 : 1);
    if (cfg.baseline)
        printf("ONNX Runtime %s alone: %zu passed, %zu failed (%zu need sequence/optional/string "
               "values); braid fails %zu case(s) it passes\n", ortv, t.ort_passed, t.ort_failed,
               t.ort_type_gaps, t.gap_vs_ort);
    printf("braid: %zu of the failures need sequence/optional/string values\n", t.type_gaps);
    printf("braid: %zu of %zu float cases passed (%.1f%%; every expected output floating point)\n",
           t.float_passed, t.float_cases, t.float_cases ? 100.0 * (double)t.float_passed / (double)t.float_cases : 0.0);
    printf("%zu passed, %zu passed entirely on oneDNN, %zu failed\n", t.passed, t.dnnl_only, t.failed);

    if (cfg.doc)
        write_doc(cfg.doc, cases, n, &t, &cfg, ortv);
    int rc = 0;
    if (cfg.check) {
        size_t problems = check_gaps(cases, n, cfg.check, cfg.n_only || first_case < argc);
        if (problems) {
            printf("conformance check: %zu problem(s) against %s\n", problems, cfg.check);
            rc = 1;
        } else {
            printf("conformance check: every case ONNX Runtime passes, braid passes (or is a "
                   "listed gap)\n");
        }
    }
    if (cfg.expect && check_expected(cases, n, cfg.expect))
        rc = 1;
    free(cases);
    globfree(&gl);
    return rc;
}
