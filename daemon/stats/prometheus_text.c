/* The Prometheus text format's writers (prometheus_text.h). */
#include "daemon/stats/prometheus_text.h"

#include <stdatomic.h>

/* Label values escape backslash, double quote and newline (the format's only escapes). */
void prom_put_label(FILE *f, const char *key, const char *value)
{
    fprintf(f, "%s=\"", key);
    for (const char *p = value ? value : ""; *p; p++) {
        switch (*p) {
        case '\\': fputs("\\\\", f); break;
        case '"':  fputs("\\\"", f); break;
        case '\n': fputs("\\n", f); break;
        default:   fputc(*p, f);
        }
    }
    fputc('"', f);
}

void prom_family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void prom_open_model(FILE *f, const char *name, const bd_model_view *m)
{
    fprintf(f, "%s{", name);
    prom_put_label(f, "model", m->name);
    fputc(',', f);
    prom_put_label(f, "version", m->version);
}

uint64_t prom_load(const _Atomic uint64_t *a)
{
    return atomic_load_explicit(a, memory_order_relaxed);
}
