/* Test data of one ONNX backend test case: test_data_set_N/input_M.pb and output_M.pb. */
#include "tests/conformance/conformance.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read DIR/PREFIX_0.pb, PREFIX_1.pb, ... until one is missing. */
static int read_numbered(const char *dir, const char *prefix, bd_onnx_tensor *v, size_t *n,
                         bd_error *err)
{
    *n = 0;
    for (size_t i = 0; i < CF_MAX_TENSORS; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s_%zu.pb", dir, prefix, i);
        FILE *f = fopen(path, "rb");
        if (!f)
            return 0;
        fclose(f);
        int rc = bd_onnx_tensor_read_file(path, &v[i], err);
        if (rc)
            return rc;
        (*n)++;
    }
    return bd_error_set(err, BD_EUNSUPPORTED, "%s: more than %d %s files", dir, CF_MAX_TENSORS,
                        prefix);
}

int cf_case_load(const char *dir, cf_case *c, bd_error *err)
{
    memset(c, 0, sizeof *c);
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    size_t l = strlen(c->dir);
    while (l > 1 && c->dir[l - 1] == '/')
        c->dir[--l] = '\0';
    const char *slash = strrchr(c->dir, '/');
    c->name = slash ? slash + 1 : c->dir;

    char pattern[1100];
    snprintf(pattern, sizeof pattern, "%s/test_data_set_*", c->dir);
    glob_t gl;
    if (glob(pattern, 0, NULL, &gl) != 0 || gl.gl_pathc == 0)
        return bd_error_set(err, BD_ENOTFOUND, "%s: no test_data_set_* directory", c->dir);
    c->sets = calloc(gl.gl_pathc, sizeof *c->sets);
    int rc = c->sets ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < gl.gl_pathc; i++) {
        cf_dataset *s = &c->sets[c->n_sets++];
        rc = read_numbered(gl.gl_pathv[i], "input", s->in, &s->n_in, err);
        if (rc == 0)
            rc = read_numbered(gl.gl_pathv[i], "output", s->out, &s->n_out, err);
    }
    globfree(&gl);
    if (rc)
        cf_case_free(c);
    return rc;
}

void cf_case_free(cf_case *c)
{
    for (size_t i = 0; c->sets && i < c->n_sets; i++) {
        for (size_t k = 0; k < c->sets[i].n_in; k++)
            bd_onnx_tensor_free(&c->sets[i].in[k]);
        for (size_t k = 0; k < c->sets[i].n_out; k++)
            bd_onnx_tensor_free(&c->sets[i].out[k]);
    }
    free(c->sets);
    c->sets = NULL;
    c->n_sets = 0;
}

const bd_onnx_tensor *cf_input_for(const cf_dataset *set, const char *name, size_t pos)
{
    for (size_t i = 0; i < set->n_in; i++)
        if (name && set->in[i].name[0] && strcmp(set->in[i].name, name) == 0)
            return &set->in[i];
    /* Files without names (or with other names) line up with the model's inputs. */
    return pos < set->n_in ? &set->in[pos] : NULL;
}

bool cf_is_type_gap(const char *msg)
{
    /* The importer's and the ORT runner's own words for these values; nothing looser, so an
     * engine's error that merely mentions a string type is not excused. */
    static const char *const words[] = { "is not a tensor", "string tensors are not supported" };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasestr(msg, words[i]))
            return true;
    return false;
}

void cf_fail(cf_result *r, cf_status st, const char *stage, const char *msg)
{
    r->status = st;
    int n = snprintf(r->reason, sizeof r->reason, "%s: ", stage);
    if (n > 0 && (size_t)n < sizeof r->reason)
        snprintf(r->reason + n, sizeof r->reason - (size_t)n, "%.*s",
                 (int)(sizeof r->reason - (size_t)n - 1), msg);
}
