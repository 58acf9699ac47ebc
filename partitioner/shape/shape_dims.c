/* Helpers every rule shares: error messages that name the node, the op's own inputs, typed
 * attribute checks, axis normalisation, and checked dim arithmetic with numpy broadcasting. */
#include "partitioner/shape/shape_rules.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int vfail(bd_error *err, int code, const bd_node *n, const char *fmt, va_list ap)
{
    char msg[BD_ERROR_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return bd_error_set(err, code, "node '%s' (%s): %s", n->name ? n->name : "?",
                        n->op_type ? n->op_type : "?", msg);
}

int shp_fail(bd_error *err, const bd_node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(err, BD_EMODEL, n, fmt, ap);
    va_end(ap);
    return rc;
}

int shp_unsupported(bd_error *err, const bd_node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(err, BD_EUNSUPPORTED, n, fmt, ap);
    va_end(ap);
    return rc;
}

/* Inputs appended for BINARY/SUM post-ops, and the implicit inputs of nodes with subgraph
 * bodies, sit after the op's own inputs. */
size_t shp_n_inputs(const bd_node *n)
{
    size_t count = n->n_implicit < n->n_inputs ? n->n_inputs - n->n_implicit : 0;
    for (int p = 0; p < n->n_post && p < BD_MAX_POSTOPS; p++) {
        const bd_postop *po = &n->post[p];
        if ((po->kind == BD_POST_SUM || po->kind == BD_POST_BINARY) && po->input >= 0 &&
            (size_t)po->input < count)
            count = (size_t)po->input;
    }
    return count;
}

bd_value *shp_in(const bd_node *n, size_t i)
{
    return i < shp_n_inputs(n) ? n->inputs[i] : NULL;
}

int shp_attr_int(const bd_node *n, const char *name, int64_t dflt, int64_t *out, bd_error *err)
{
    const bd_attr *a = bd_node_attr(n, name);
    if (!a) {
        *out = dflt;
        return 0;
    }
    if (a->type != BD_ATTR_INT)
        return shp_fail(err, n, "attribute '%s' must be an INT (got type %d)", name, (int)a->type);
    *out = a->i;
    return 0;
}

int shp_attr_ints(const bd_node *n, const char *name, const int64_t **vals, size_t *count,
                  bd_error *err)
{
    const bd_attr *a = bd_node_attr(n, name);
    *vals  = NULL;
    *count = 0;
    if (!a)
        return 0;
    if (a->type != BD_ATTR_INTS)
        return shp_fail(err, n, "attribute '%s' must be INTS (got type %d)", name, (int)a->type);
    if (a->n && !a->ints)
        return shp_fail(err, n, "attribute '%s' has %zu values but no data", name, a->n);
    *vals  = a->ints;
    *count = a->n;
    return 0;
}

int shp_attr_float(const bd_node *n, const char *name, float dflt, float *out, bd_error *err)
{
    const bd_attr *a = bd_node_attr(n, name);
    if (!a) {
        *out = dflt;
        return 0;
    }
    if (a->type != BD_ATTR_FLOAT)
        return shp_fail(err, n, "attribute '%s' must be a FLOAT (got type %d)", name, (int)a->type);
    *out = a->f;
    return 0;
}

int shp_attr_str(const bd_node *n, const char *name, const char *dflt, const char **out,
                 bd_error *err)
{
    const bd_attr *a = bd_node_attr(n, name);
    if (!a) {
        *out = dflt;
        return 0;
    }
    if (a->type != BD_ATTR_STRING || !a->s)
        return shp_fail(err, n, "attribute '%s' must be a STRING (got type %d)", name,
                        (int)a->type);
    *out = a->s;
    return 0;
}

int shp_attr_choice(const bd_node *n, const char *name, const char *const *choices,
                    size_t count, int dflt, int *out, bd_error *err)
{
    const char *s;
    int rc = shp_attr_str(n, name, NULL, &s, err);
    if (rc)
        return rc;
    *out = dflt;
    if (!s)
        return 0;
    for (size_t i = 0; i < count; i++)
        if (strcmp(s, choices[i]) == 0) {
            *out = (int)i;
            return 0;
        }
    char list[160] = "";
    for (size_t i = 0, at = 0; i < count && at < sizeof list; i++) {
        int w = snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", choices[i]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    return shp_fail(err, n, "attribute '%s' is '%.64s', expected one of %s", name, s, list);
}

int shp_axis(const bd_node *n, const char *what, int64_t axis, int rank, int *out, bd_error *err)
{
    if (axis < -(int64_t)rank || axis >= (int64_t)rank)
        return shp_fail(err, n, "%s %lld is out of range for rank %d (expected %d..%d)", what,
                        (long long)axis, rank, -rank, rank - 1);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return 0;
}

int shp_axis_of(const bd_node *n, const char *role, const bd_value *x, int64_t axis, int *out,
                bd_error *err)
{
    if (x->shape.rank == 0)
        return shp_fail(err, n, "%s '%s' must have rank >= 1", role, x->name);
    return shp_axis(n, "axis", axis, x->shape.rank, out, err);
}

int shp_axes_mask(const bd_node *n, const int64_t *axes, size_t count, int rank, bool *mask,
                  bd_error *err)
{
    for (size_t i = 0; i < count; i++) {
        int ax;
        int rc = shp_axis(n, "axis", axes[i], rank, &ax, err);
        if (rc)
            return rc;
        if (mask[ax])
            return shp_fail(err, n, "axis %d is listed twice", ax);
        mask[ax] = true;
    }
    return 0;
}

void shp_set(bd_value *v, int dtype, const bd_shape *s)
{
    if (dtype != BD_DT_UNDEFINED)          /* an input of unknown type: keep what was declared */
        v->dtype = dtype;
    v->shape = *s;
    for (int i = 0; i < s->rank && i < BD_MAX_RANK; i++)
        if (v->shape.dims[i] >= 0)
            v->shape.sym[i] = NULL;        /* a symbol only names a dynamic dim */
}

void shp_set_unknown(bd_value *v, int dtype)
{
    if (dtype != BD_DT_UNDEFINED)
        v->dtype = dtype;
    memset(&v->shape, 0, sizeof v->shape);
    v->shape.rank = -1;
}

int shp_all_unknown(bd_node *n)
{
    bd_value *x = shp_in(n, 0);
    for (size_t k = 0; k < n->n_outputs; k++)
        shp_set_unknown(n->outputs[k], x ? x->dtype : BD_DT_UNDEFINED);
    return 0;
}

void shp_set_rank(bd_value *v, int dtype, int rank)
{
    bd_shape s = shp_dynamic(rank);
    shp_set(v, dtype, &s);
}

int shp_pass_through(bd_node *n)
{
    bd_value *x = shp_in(n, 0);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    shp_set(n->outputs[0], x->dtype, &x->shape);
    return 0;
}

bd_shape shp_drop_dims(const bd_shape *s, const bool *mask, bool keepdims)
{
    bd_shape r = shp_dynamic(0);
    for (int i = 0; i < s->rank; i++) {
        if (!mask[i]) {
            r.dims[r.rank] = s->dims[i];
            r.sym[r.rank++] = s->sym[i];
        } else if (keepdims) {
            r.dims[r.rank++] = 1;
        }
    }
    return r;
}

int64_t shp_len_1d(const bd_value *v)
{
    return shp_ranked(v) && v->shape.rank == 1 ? v->shape.dims[0] : -1;
}

bool shp_is_static(const bd_shape *s)
{
    if (s->rank < 0)
        return false;
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i] < 0)
            return false;
    return true;
}

bool shp_ranked(const bd_value *v)
{
    return v && v->shape.rank >= 0;
}

bool shp_mul(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

int shp_numel(const bd_node *n, const bd_shape *s, int64_t *out, bd_error *err)
{
    *out = -1;
    if (s->rank < 0)
        return 0;
    int64_t count = 1;
    bool dynamic = false;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i] < 0)
            dynamic = true;
        else if (!shp_mul(count, s->dims[i], &count))
            return shp_fail(err, n, "element count of a tensor overflows int64");
    }
    if (!dynamic)
        *out = count;
    return 0;
}

bd_shape shp_dynamic(int rank)
{
    bd_shape s;
    memset(&s, 0, sizeof s);
    s.rank = rank;
    for (int i = 0; i < rank && i < BD_MAX_RANK; i++)
        s.dims[i] = -1;
    return s;
}

int shp_expect_dim(const bd_node *n, const char *what, const bd_value *v, int axis,
                   int64_t want, const char *meaning, bd_error *err)
{
    int64_t got = v->shape.dims[axis];
    if (got < 0 || want < 0 || got == want)
        return 0;
    char buf[96];
    return shp_fail(err, n, "%s '%s' %s has %lld at dim %d, expected %lld (%s)", what, v->name,
                    shp_str(&v->shape, buf, sizeof buf), (long long)got, axis, (long long)want,
                    meaning);
}

int shp_expect_rank(const bd_node *n, const char *what, const bd_value *v, int rank,
                    bd_error *err)
{
    if (!shp_ranked(v) || v->shape.rank == rank)
        return 0;
    return shp_fail(err, n, "%s '%s' must have rank %d, got %d", what, v->name, rank,
                    v->shape.rank);
}

void shp_push(bd_shape *s, const bd_shape *from, int i)
{
    if (s->rank < 0 || s->rank >= BD_MAX_RANK)
        return;
    s->dims[s->rank] = from->dims[i];
    s->sym[s->rank++] = from->dims[i] < 0 ? from->sym[i] : NULL;
}

void shp_push_dim(bd_shape *s, int64_t d)
{
    if (s->rank < 0 || s->rank >= BD_MAX_RANK)
        return;
    s->dims[s->rank] = d;
    s->sym[s->rank++] = NULL;
}

const char *shp_str(const bd_shape *s, char *buf, size_t size)
{
    return bd_shape_str(s, buf, size);
}

int shp_broadcast(const bd_node *n, const bd_shape *a, const bd_shape *b, bd_shape *out,
                  bd_error *err)
{
    int rank = a->rank > b->rank ? a->rank : b->rank;
    bd_shape r = shp_dynamic(rank);
    for (int i = 0; i < rank; i++) {
        int ia = i - (rank - a->rank), ib = i - (rank - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        const char *sa = ia >= 0 ? a->sym[ia] : NULL, *sb = ib >= 0 ? b->sym[ib] : NULL;
        if (da >= 0 && db >= 0) {
            if (da != db && da != 1 && db != 1) {
                char ba[96], bb[96];
                return shp_fail(err, n, "shapes %s and %s do not broadcast (dim %d: %lld vs %lld)",
                                shp_str(a, ba, sizeof ba), shp_str(b, bb, sizeof bb), i,
                                (long long)da, (long long)db);
            }
            r.dims[i] = da == 1 ? db : da;
        } else if (da < 0 && db < 0) {
            /* Two dynamic dims agree only when they carry the same name. */
            r.sym[i] = sa && sb && strcmp(sa, sb) == 0 ? sa : NULL;
        } else if (da < 0) {
            if (db == 1)
                r.sym[i] = sa;
            else
                r.dims[i] = db;            /* the dynamic side must be db or 1 */
        } else {
            if (da == 1)
                r.sym[i] = sb;
            else
                r.dims[i] = da;
        }
    }
    *out = r;
    return 0;
}
