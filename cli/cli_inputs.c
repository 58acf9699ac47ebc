#include "cli/cli.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_error(const char *what, const bd_error *err)
{
    fprintf(stderr, "braid: %s%s%s\n", what, err && err->msg[0] ? ": " : "",
            err && err->msg[0] ? err->msg : "");
}

int cli_parse_count(const char *opt, const char *value)
{
    char *end;
    long v = strtol(value, &end, 10);
    if (*value == '\0' || *end != '\0' || v <= 0 || v > 1000000) {
        fprintf(stderr, "braid: %s expects a positive integer, got '%s'\n", opt, value);
        return -1;
    }
    return (int)v;
}

/* Seeded xorshift: reproducible inputs for bench without a file. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int random_input(const bd_value *v, bd_npy *a, uint64_t *seed, bd_error *err)
{
    a->dtype = v->dtype;
    a->shape = v->shape;
    for (int d = 0; d < a->shape.rank; d++)
        if (a->shape.dims[d] < 0)
            a->shape.dims[d] = 1;
    int64_t n = bd_shape_numel(&a->shape);
    size_t esize = bd_dtype_size(v->dtype);
    if (n < 0 || esize == 0)
        return bd_error_set(err, BD_EUNSUPPORTED, "input '%s': cannot make random %s data",
                            v->name, bd_dtype_name(v->dtype));
    a->nbytes = (size_t)n * esize;
    a->data = aligned_alloc(64, (a->nbytes + 63) & ~(size_t)63);
    if (!a->data)
        return bd_error_set(err, BD_ENOMEM, "out of memory for input '%s'", v->name);
    bool mask = strstr(v->name, "mask") != NULL;
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(rng_next(seed) >> 11) / 9007199254740992.0;   /* [0,1) */
        switch (v->dtype) {
        case BD_DT_FLOAT:  ((float *)a->data)[i]   = mask ? 1.0f : (float)(2 * u - 1); break;
        case BD_DT_DOUBLE: ((double *)a->data)[i]  = mask ? 1.0 : 2 * u - 1; break;
        case BD_DT_INT64:  ((int64_t *)a->data)[i] = mask ? 1 : 0; break;
        case BD_DT_INT32:  ((int32_t *)a->data)[i] = mask ? 1 : 0; break;
        default:           memset((char *)a->data + i * esize, mask, esize); break;
        }
    }
    return 0;
}

int cli_inputs_load(cli_inputs *in, const bd_graph *g, int random_missing, bd_error *err)
{
    size_t n = bd_graph_num_inputs(g);
    if (n > 64)
        return bd_error_set(err, BD_EUNSUPPORTED, "more than 64 inputs");
    const char *file_for[64] = { 0 };
    for (int s = 0; s < in->n_spec; s++) {
        const char *spec = in->spec[s], *eq = strchr(spec, '=');
        size_t which = n;
        if (!eq) {
            if (n != 1)
                return bd_error_set(err, BD_EINVAL,
                                    "'%s': this model has %zu inputs; name each as NAME=FILE.npy", spec, n);
            which = 0;
        } else {
            for (size_t i = 0; i < n; i++) {
                const char *name = bd_graph_input(g, i)->name;
                if (strlen(name) == (size_t)(eq - spec) && strncmp(name, spec, (size_t)(eq - spec)) == 0)
                    which = i;
            }
            if (which == n) {
                char names[256] = "";
                for (size_t i = 0, used = 0; i < n && used < sizeof names; i++)
                    used += (size_t)snprintf(names + used, sizeof names - used, "%s'%s'", i ? ", " : "",
                                             bd_graph_input(g, i)->name);
                return bd_error_set(err, BD_EINVAL, "'%.*s' is not an input of this model (inputs: %s)",
                                    (int)(eq - spec), spec, names);
            }
        }
        file_for[which] = eq ? eq + 1 : spec;
    }
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++) {
        const bd_value *v = bd_graph_input(g, i);
        int rc;
        if (file_for[i])
            rc = bd_npy_read(file_for[i], &in->arrays[i], err);
        else if (random_missing)
            rc = random_input(v, &in->arrays[i], &seed, err);
        else
            rc = bd_error_set(err, BD_EINVAL, "input '%s' is missing: pass --input %s=FILE.npy",
                              v->name, v->name);
        in->n = (int)i + 1;
        if (rc)
            return rc;
        bd_npy_as_dltensor(&in->arrays[i], &in->tensors[i]);
    }
    in->n = (int)n;
    return 0;
}

void cli_inputs_free(cli_inputs *in)
{
    for (int i = 0; i < in->n; i++)
        bd_npy_free(&in->arrays[i]);
    in->n = 0;
}

int cli_inputs_add(cli_inputs *in, const char *cmd, const char *spec)
{
    if (in->n_spec == (int)(sizeof in->spec / sizeof in->spec[0])) {
        fprintf(stderr, "braid %s: too many --input options (%d at most)\n", cmd, in->n_spec);
        return -1;
    }
    in->spec[in->n_spec++] = spec;
    return 0;
}
