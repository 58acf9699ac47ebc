/* Einsum: the output shape its equation gives. Terms are letters (A-Z, a-z) with at most one
 * "..." each, separated by commas, one per operand; "->" and an output term make the explicit
 * form, else the output is the ellipsis dims, then the letters used exactly once, in ASCII
 * order. A letter's sizes must agree wherever it appears (a size 1 broadcasts, as numpy's
 * einsum does); the dims the ellipses stand for broadcast right-aligned, numpy-style. An
 * ellipsis the output lacks, like any letter it lacks, is summed over. */
#include "partitioner/shape/shape_rules.h"

#include <stdio.h>
#include <string.h>

#define ES_LETTERS 52                  /* ids: A-Z then a-z, ASCII order */
#define ES_ELLIPSIS (-1)

typedef struct es_term {
    int  n;                            /* labels, the ellipsis counted once */
    int  ids[BD_MAX_RANK + 1];
    int  letters;
    bool ell;
} es_term;

static int letter_id(char c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? 26 + c - 'a' : -1;
}

/* Term WHICH (LEN chars at T, spaces allowed) into *OUT. */
static int parse_term(const bd_node *n, const char *eq, const char *t, size_t len,
                      const char *which, es_term *out, bd_error *err)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < len; i++) {
        char c = t[i];
        if (c == ' ')
            continue;
        if (c == '.') {
            if (out->ell || i + 3 > len || t[i + 1] != '.' || t[i + 2] != '.')
                return shp_fail(err, n, "equation '%.64s': the %s term has a stray '.' or a second "
                                "ellipsis", eq, which);
            out->ell = true;
            out->ids[out->n++] = ES_ELLIPSIS;
            i += 2;
            continue;
        }
        int id = letter_id(c);
        if (id < 0)
            return shp_fail(err, n, "equation '%.64s': unexpected character '%c' in the %s term",
                            eq, c, which);
        if (out->letters == BD_MAX_RANK)
            return shp_unsupported(err, n, "equation '%.64s': the %s term has more labels than "
                                   "braid's maximum rank %d", eq, which, BD_MAX_RANK);
        out->ids[out->n++] = id;
        out->letters++;
    }
    return 0;
}

/* Merge size D (symbol SYM) into label slot *SZ / *SS; false when two static sizes other than
 * 1 disagree. */
static bool merge(int64_t *sz, const char **ss, bool *seen, int64_t d, const char *sym)
{
    if (!*seen) {
        *seen = true;
        *sz = d;
        *ss = d < 0 ? sym : NULL;
        return true;
    }
    if (*sz >= 0 && d >= 0) {
        if (*sz != d && *sz != 1 && d != 1)
            return false;
        if (*sz == 1)
            *sz = d;
        return true;
    }
    if (*sz < 0 && d < 0) {
        if (!*ss || !sym || strcmp(*ss, sym) != 0)
            *ss = NULL;
        return true;
    }
    if (*sz < 0 && d != 1) {           /* the dynamic side must be D (or 1) */
        *sz = d;
        *ss = NULL;
    }
    return true;
}

int shp_einsum(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    size_t nin = shp_n_inputs(n);
    const char *eq;
    if (!bd_node_attr(n, "equation"))
        return shp_fail(err, n, "attribute 'equation' is required");
    if ((rc = shp_attr_str(n, "equation", "", &eq, err)))
        return rc;
    bd_value *x0 = shp_in(n, 0);
    int dtype = x0->dtype;
    bool ranked = true;
    for (size_t k = 0; k < nin; k++) {
        bd_value *v = shp_in(n, k);
        if (!v)
            return shp_fail(err, n, "input %zu is missing", k);
        if (dtype != BD_DT_UNDEFINED && v->dtype != BD_DT_UNDEFINED && v->dtype != dtype)
            return shp_fail(err, n, "input types differ: '%s' is %s, '%s' is %s", x0->name,
                            bd_dtype_name(dtype), v->name, bd_dtype_name(v->dtype));
        if (dtype == BD_DT_UNDEFINED)
            dtype = v->dtype;
        ranked &= shp_ranked(v);
    }
    /* Split at "->" (once) and the left-hand side at commas, one term per operand. */
    size_t len = strlen(eq);
    const char *arrow = strstr(eq, "->");
    const char *lhs_end = arrow ? arrow : eq + len;
    if (arrow && strstr(arrow + 2, "->"))
        return shp_fail(err, n, "equation '%.64s' has more than one '->'", eq);
    size_t terms = 1;
    for (const char *p = eq; p < lhs_end; p++)
        terms += *p == ',';
    if (terms != nin)
        return shp_fail(err, n, "equation '%.64s' has %zu terms for %zu inputs", eq, terms, nin);
    es_term term, out_term;
    int64_t size[ES_LETTERS], ell[BD_MAX_RANK];
    const char *sym[ES_LETTERS], *ell_sym[BD_MAX_RANK];
    bool seen[ES_LETTERS] = { false }, ell_seen[BD_MAX_RANK] = { false };
    int count[ES_LETTERS] = { 0 }, e = 0;
    const char *t = eq;
    for (size_t k = 0; k < nin; k++) {
        const char *end = memchr(t, ',', (size_t)(lhs_end - t));
        end = end ? end : lhs_end;
        char which[32];
        snprintf(which, sizeof which, "input %zu", k);
        if ((rc = parse_term(n, eq, t, (size_t)(end - t), which, &term, err)))
            return rc;
        if (end < lhs_end)
            t = end + 1;
        for (int i = 0; i < term.n; i++)
            if (term.ids[i] >= 0)
                count[term.ids[i]]++;
        const bd_value *v = shp_in(n, k);
        if (!shp_ranked(v))
            continue;
        const bd_shape *s = &v->shape;
        if (term.ell ? term.letters > s->rank : term.letters != s->rank)
            return shp_fail(err, n, "equation '%.64s': term %zu has %d labels%s for input '%s' of "
                            "rank %d", eq, k, term.letters, term.ell ? " and an ellipsis" : "",
                            v->name, s->rank);
        int cover = s->rank - term.letters, d = 0;
        for (int i = 0; i < term.n; i++) {
            if (term.ids[i] == ES_ELLIPSIS) {
                /* Right-aligned: this operand's ellipsis dims are the last COVER of the slots. */
                for (int j = 0; j < cover; j++, d++) {
                    int slot = BD_MAX_RANK - cover + j;
                    if (!merge(&ell[slot], &ell_sym[slot], &ell_seen[slot], s->dims[d], s->sym[d])) {
                        char buf[96];
                        return shp_fail(err, n, "equation '%.64s': the ellipsis dims of input '%s' "
                                        "%s do not broadcast with the other operands'", eq,
                                        v->name, shp_str(s, buf, sizeof buf));
                    }
                }
                continue;
            }
            int id = term.ids[i];
            if (!merge(&size[id], &sym[id], &seen[id], s->dims[d], s->sym[d]))
                return shp_fail(err, n, "equation '%.64s': label '%c' has size %lld in input '%s' "
                                "but %lld elsewhere", eq, id < 26 ? 'A' + id : 'a' + id - 26,
                                (long long)s->dims[d], v->name, (long long)size[id]);
            d++;
        }
        if (term.ell && cover > e)
            e = cover;
    }
    /* The output's labels. */
    int out_ids[ES_LETTERS + BD_MAX_RANK], out_n = 0;
    if (arrow) {
        if ((rc = parse_term(n, eq, arrow + 2, strlen(arrow + 2), "output", &out_term, err)))
            return rc;
        bool used[ES_LETTERS] = { false };
        for (int i = 0; i < out_term.n; i++) {
            int id = out_term.ids[i];
            if (id >= 0 && (used[id] || !count[id]))
                return shp_fail(err, n, "equation '%.64s': output label '%c' is %s", eq,
                                id < 26 ? 'A' + id : 'a' + id - 26,
                                used[id] ? "repeated" : "in no input term");
            if (id >= 0)
                used[id] = true;
            out_ids[out_n++] = id;
        }
    } else {
        out_ids[out_n++] = ES_ELLIPSIS;
        for (int id = 0; id < ES_LETTERS; id++)
            if (count[id] == 1)
                out_ids[out_n++] = id;
    }
    if (!ranked) {
        shp_set_unknown(n->outputs[0], dtype);
        return 0;
    }
    int rank = 0;
    for (int i = 0; i < out_n; i++)
        rank += out_ids[i] == ES_ELLIPSIS ? e : 1;
    if (rank > BD_MAX_RANK)
        return shp_unsupported(err, n, "output rank %d exceeds braid's maximum rank %d", rank,
                               BD_MAX_RANK);
    bd_shape s = shp_dynamic(0);
    for (int i = 0; i < out_n; i++) {
        if (out_ids[i] == ES_ELLIPSIS) {
            for (int j = BD_MAX_RANK - e; j < BD_MAX_RANK; j++) {
                s.dims[s.rank] = ell[j];   /* every slot of the widest ellipsis was seen */
                s.sym[s.rank++] = ell_sym[j];
            }
        } else {
            s.dims[s.rank] = size[out_ids[i]];
            s.sym[s.rank++] = sym[out_ids[i]];
        }
    }
    shp_set(n->outputs[0], dtype, &s);
    return 0;
}
