/* The subgraph compiler: tensor layouts, cached reorders, constants, steps, and the arena
 * plan (liveness + greedy best-fit offsets). See dnnl_internal.h for the builder contract. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "core/arena.h"
#include "core/big_alloc.h"
#include "backends/dnnl/dnnl_backend.h"
#include "backends/dnnl/dnnl_internal.h"

#define DN_ALIGN 64

static size_t align_up(size_t n) { return (n + DN_ALIGN - 1) / DN_ALIGN * DN_ALIGN; }

static double clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ---- errors --------------------------------------------------------------------------- */

int dn_fail(dn_compiler *c, int code, const char *fmt, ...)
{
    char msg[BD_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->node)
        return bd_error_set(c->err, code, "node '%s' (%s): %s", c->node->name, c->node->op_type, msg);
    return bd_error_set(c->err, code, "dnnl subgraph: %s", msg);
}

int dn_check(dn_compiler *c, dnnl_status_t s, const char *what)
{
    if (s == dnnl_success)
        return 0;
    return dn_fail(c, BD_EBACKEND, "%s failed: %s", what, dnnl_status2str(s));
}

/* ---- memory descs --------------------------------------------------------------------- */

void dn_md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dims)
{
    dnnl_dims_t d, st;
    int r = rank > 0 ? rank : 1;
    for (int i = 0; i < r; i++)
        d[i] = rank > 0 ? dims[i] : 1;
    st[r - 1] = 1;
    for (int i = r - 2; i >= 0; i--)
        st[i] = st[i + 1] * (d[i + 1] > 0 ? d[i + 1] : 1);
    dnnl_memory_desc_init_by_strides(md, r, d, dnnl_f32, st);
}

bool dn_boundary_dt(int dt, dnnl_data_type_t *out)
{
    switch (dt) {
    case BD_DT_FLOAT: *out = dnnl_f32; return true;
    case BD_DT_UINT8: *out = dnnl_u8;  return true;
    case BD_DT_INT8:  *out = dnnl_s8;  return true;
    case BD_DT_INT32: *out = dnnl_s32; return true;
    default:          return false;
    }
}

/* Plain md of boundary value V in its own data type. */
static void md_boundary(dnnl_memory_desc_t *md, const bd_value *v)
{
    dn_md_of_shape(md, v);
    dn_boundary_dt(v->dtype, &md->data_type);
}

void dn_md_of_shape(dnnl_memory_desc_t *md, const bd_value *v)
{
    dn_md_plain(md, v->shape.rank, v->shape.dims);
}

void dn_md_reshape_plain(dnnl_memory_desc_t *out, int rank, const int64_t *dims)
{
    dn_md_plain(out, rank, dims);
}

void dn_md_any(dnnl_memory_desc_t *md, int rank, const int64_t *dims)
{
    dnnl_dims_t d;
    for (int i = 0; i < rank; i++)
        d[i] = dims[i];
    dnnl_memory_desc_init_by_tag(md, rank, d, dnnl_f32, dnnl_format_tag_any);
}

bool dn_md_equal(const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *b)
{
    return dnnl_memory_desc_equal(a, b) != 0;
}

bool dn_md_is_plain(const dnnl_memory_desc_t *md)
{
    if (md->format_kind != dnnl_blocked || md->data_type != dnnl_f32 || md->offset0 != 0 ||
        md->format_desc.blocking.inner_nblks != 0)
        return false;
    int64_t want = 1;
    for (int i = md->ndims - 1; i >= 0; i--) {
        if (md->padded_dims[i] != md->dims[i])
            return false;
        if (md->dims[i] != 1 && md->format_desc.blocking.strides[i] != want)
            return false;
        want *= md->dims[i];
    }
    return true;
}

bool dn_md_expand(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *md, int rank)
{
    if (md->format_kind != dnnl_blocked || md->format_desc.blocking.inner_nblks != 0 ||
        rank < md->ndims || rank > DNNL_MAX_NDIMS)
        return false;
    int pad = rank - md->ndims;
    dnnl_dims_t d, st;
    int64_t span = 1;
    for (int i = 0; i < md->ndims; i++) {
        d[pad + i]  = md->dims[i];
        st[pad + i] = md->format_desc.blocking.strides[i];
        if (md->dims[i] * st[pad + i] > span)
            span = md->dims[i] * st[pad + i];
    }
    for (int i = 0; i < pad; i++) {
        d[i] = 1;
        st[i] = span;
    }
    if (dnnl_memory_desc_init_by_strides(out, rank, d, md->data_type, st) != dnnl_success)
        return false;
    out->offset0 = md->offset0;
    return true;
}

const dnnl_memory_desc_t *dn_pd_md(const_dnnl_primitive_desc_t pd, dnnl_query_t what)
{
    return dnnl_primitive_desc_query_md(pd, what, 0);
}

/* ---- buffers, steps ------------------------------------------------------------------- */

static int grow(dn_compiler *c, void **arr, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(*arr, (size_t)ncap * elem);
    if (!p)
        return dn_fail(c, BD_ENOMEM, "out of memory");
    memset((char *)p + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
    *arr = p;
    *cap = ncap;
    return 0;
}

static int new_buffer(dn_compiler *c, dn_buf_kind kind, int index, size_t size, int *buf)
{
    int rc = grow(c, (void **)&c->bufs, &c->cap_bufs, c->n_bufs + 1, sizeof *c->bufs);
    if (rc)
        return rc;
    dn_buffer *b = &c->bufs[c->n_bufs];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    b->index = index;
    b->size = size;
    b->first = b->last = -1;
    *buf = c->n_bufs++;
    return 0;
}

dnnl_primitive_attr_t dn_attr(dn_compiler *c, const_dnnl_post_ops_t post_ops)
{
    dnnl_primitive_attr_t attr = NULL;
    if (dn_check(c, dnnl_primitive_attr_create(&attr), "dnnl_primitive_attr_create"))
        return NULL;
    if (dn_check(c, dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user),
                 "dnnl_primitive_attr_set_scratchpad_mode") ||
        (post_ops && dn_check(c, dnnl_primitive_attr_set_post_ops(attr, post_ops),
                              "dnnl_primitive_attr_set_post_ops"))) {
        dnnl_primitive_attr_destroy(attr);
        return NULL;
    }
    return attr;
}

int dn_pd_make(dn_compiler *c, dnnl_status_t init, const char *init_what, const void *desc,
               dnnl_post_ops_t po, float out_scale, dnnl_primitive_desc_t *pd)
{
    *pd = NULL;
    dnnl_primitive_attr_t attr = dn_attr(c, po);
    if (po)
        dnnl_post_ops_destroy(po);    /* the attr holds its own copy */
    if (!attr)
        return BD_EBACKEND;
    int rc = 0;
    if (out_scale != 1.0f)
        rc = dn_check(c, dnnl_primitive_attr_set_output_scales(attr, 1, 0, &out_scale),
                      "dnnl_primitive_attr_set_output_scales");
    if (!rc)
        rc = dn_check(c, init, init_what);
    if (!rc)
        rc = dn_check(c, dnnl_primitive_desc_create(pd, desc, attr, c->eng, NULL),
                      "dnnl_primitive_desc_create");
    dnnl_primitive_attr_destroy(attr);
    return rc;
}

int dn_reorder_pd(dn_compiler *c, const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *dst,
                  const char *what, dnnl_primitive_desc_t *pd)
{
    *pd = NULL;
    dnnl_primitive_attr_t attr = dn_attr(c, NULL);
    if (!attr)
        return BD_EBACKEND;
    int rc = dn_check(c, dnnl_reorder_primitive_desc_create(pd, src, c->eng, dst, c->eng, attr), what);
    dnnl_primitive_attr_destroy(attr);
    return rc;
}

static int push_step(dn_compiler *c, dn_step_kind kind, dnnl_primitive_t prim, size_t scratch,
                     const dn_arg *args, int nargs, const dn_native *nat)
{
    int rc = grow(c, (void **)&c->steps, &c->cap_steps, c->n_steps + 1, sizeof *c->steps);
    if (rc) {
        if (prim)
            dnnl_primitive_destroy(prim);
        return rc;
    }
    dn_step *s = &c->steps[c->n_steps];
    s->args = malloc(sizeof *s->args * (size_t)(nargs + 1));
    if (!s->args) {
        if (prim)
            dnnl_primitive_destroy(prim);
        return dn_fail(c, BD_ENOMEM, "out of memory");
    }
    memcpy(s->args, args, sizeof *args * (size_t)nargs);
    s->nargs = nargs;
    s->kind = kind;
    s->threads = 0;
    s->reorder_bytes = 0;
    s->prim = prim;
    s->scratch = scratch;
    s->node = c->node ? c->node->name : "(subgraph output)";
    if (nat)
        s->nat = *nat;
    else
        memset(&s->nat, 0, sizeof s->nat);
    c->n_steps++;
    return 0;
}

int dn_add_step(dn_compiler *c, dnnl_primitive_desc_t pd, const dn_arg *args, int nargs)
{
    return dn_guard_add(c, pd, args, nargs);    /* the cliff guard (dnnl_guard.c) */
}

int dn_push_prim(dn_compiler *c, dnnl_primitive_desc_t pd, const dn_arg *args, int nargs)
{
    dnnl_primitive_t prim = NULL;
    dnnl_memory_desc_t smd;   /* copied: the pd (and what it points to) is destroyed below */
    const dnnl_memory_desc_t *q = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    size_t scratch = q ? dnnl_memory_desc_get_size(q) : 0;
    if (q)
        smd = *q;
    dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
    dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind);
    const dnnl_memory_desc_t *dst = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    size_t reorder_bytes = kind == dnnl_reorder && dst ? dnnl_memory_desc_get_size(dst) : 0;
    dnnl_status_t s = dnnl_primitive_create(&prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (dn_check(c, s, "dnnl_primitive_create"))
        return BD_EBACKEND;
    int rc = push_step(c, DN_STEP_PRIM, prim, scratch, args, nargs, NULL);
    if (rc == 0)
        c->steps[c->n_steps - 1].reorder_bytes = reorder_bytes;
    if (rc == 0 && scratch > 0) {
        dn_step *st = &c->steps[c->n_steps - 1];
        st->args[st->nargs].arg = DNNL_ARG_SCRATCHPAD;
        st->args[st->nargs].buf = -1;        /* the context's scratchpad */
        st->args[st->nargs].md = smd;
        st->nargs++;
    }
    return rc;
}

int dn_add_native(dn_compiler *c, dn_step_kind kind, const dn_arg *args, int nargs,
                  const dn_native *nat)
{
    return push_step(c, kind, NULL, 0, args, nargs, nat);
}

/* ---- constants ------------------------------------------------------------------------ */

/* Keep a reference to B for the kernel (on failure B is released). */
static int hold(dn_compiler *c, bd_const_block *b)
{
    int rc = grow(c, (void **)&c->held, &c->cap_held, c->n_held + 1, sizeof *c->held);
    if (rc) {
        bd_const_block_release(b);
        return rc;
    }
    c->held[c->n_held++] = b;
    return 0;
}

/* MD field by field into the zeroed OUT: a desc built on a stack may carry garbage in its
 * padding and in dims past ndims, which a byte-wise key would take for a different layout. */
static void md_canon(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *md)
{
    int n = md->ndims > 0 && md->ndims <= DNNL_MAX_NDIMS ? md->ndims : 0;
    out->ndims = md->ndims;
    out->data_type = md->data_type;
    out->offset0 = md->offset0;
    out->format_kind = md->format_kind;
    for (int i = 0; i < n; i++) {
        out->dims[i] = md->dims[i];
        out->padded_dims[i] = md->padded_dims[i];
        out->padded_offsets[i] = md->padded_offsets[i];
    }
    if (md->format_kind == dnnl_blocked) {
        const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
        dnnl_blocking_desc_t *o = &out->format_desc.blocking;
        int nb = b->inner_nblks > 0 && b->inner_nblks <= DNNL_MAX_NDIMS ? b->inner_nblks : 0;
        o->inner_nblks = b->inner_nblks;
        for (int i = 0; i < n; i++)
            o->strides[i] = b->strides[i];
        for (int i = 0; i < nb; i++) {
            o->inner_blks[i] = b->inner_blks[i];
            o->inner_idxs[i] = b->inner_idxs[i];
        }
    } else {
        out->format_desc = md->format_desc;    /* opaque kinds (Winograd, RNN packing): as is */
    }
    out->extra.flags = md->extra.flags;
    out->extra.compensation_mask = md->extra.compensation_mask;
    out->extra.scale_adjust = md->extra.scale_adjust;
    out->extra.asymm_compensation_mask = md->extra.asymm_compensation_mask;
}

/* False when the constant gets no key (its hash failed): it is laid out, not shared. */
static bool const_key(const dn_compiler *c, dn_const_key *k, const void *data,
                      const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *dst_md)
{
    memset(k, 0, sizeof *k);
    size_t n = dnnl_memory_desc_get_size(src_md);
    k->src_bytes = n;
    if (bd_const_cache_is_stable(c->shared, data, n)) {
        uintptr_t a = (uintptr_t)data;
        k->by_address = 1;
        memcpy(k->src, &a, sizeof a);
    } else if (!bd_const_hash(data, n, k->src)) {
        return false;
    }
    md_canon(&k->src_md, src_md);
    md_canon(&k->dst_md, dst_md);
    return true;
}

/* The constant KEY as another kernel of the model laid it out: *BUF reads its bytes there.
 * 1 when found, 0 when not, or a negative code. */
static int shared_const(dn_compiler *c, const dn_const_key *key, size_t size, int *buf)
{
    size_t got = 0;
    bd_const_block *b = NULL;
    const void *p = bd_const_cache_find(c->shared, key, sizeof *key, &got, &b);
    if (!p)
        return 0;
    if (got != size) {                    /* cannot be for one key: lay it out anew */
        bd_const_block_release(b);
        return 0;
    }
    int rc = hold(c, b);
    if (!rc)
        rc = new_buffer(c, DN_BUF_CONST, -1, size, buf);
    if (rc)
        return rc;
    c->bufs[*buf].data = (void *)p;
    c->bufs[*buf].own = false;
    c->shared_consts++;
    c->shared_bytes += size;
    return 1;
}

static int make_const(dn_compiler *c, const void *data, const dnnl_memory_desc_t *src_md,
                      const dnnl_memory_desc_t *dst_md, int *buf)
{
    size_t size = dnnl_memory_desc_get_size(dst_md), room = align_up(size ? size : 1);
    dn_const_key key;
    bool keyed = c->shared && const_key(c, &key, data, src_md, dst_md);
    if (keyed) {
        int found = shared_const(c, &key, size, buf);
        if (found)
            return found < 0 ? found : 0;
        int rc = grow(c, (void **)&c->made, &c->cap_made, c->n_made + 1, sizeof *c->made);
        if (rc)
            return rc;
    }
    bool own = !c->block || c->block_size - c->block_used < room;
    void *p = own ? aligned_alloc(DN_ALIGN, room) : c->block + c->block_used;
    if (!p)
        return dn_fail(c, BD_ENOMEM, "out of memory for a %zu-byte constant", size);
    int rc = 0;
    void *tmp = NULL;
    if (dn_md_equal(src_md, dst_md)) {
        memcpy(p, data, size);
    } else {
        /* initializers may point anywhere into a model file (TF tensor_content): reorder from
         * an aligned copy */
        if ((uintptr_t)data % DN_ALIGN) {
            size_t ssize = dnnl_memory_desc_get_size(src_md);
            tmp = aligned_alloc(DN_ALIGN, align_up(ssize ? ssize : 1));
            if (!tmp) {
                if (own)
                    free(p);
                return dn_fail(c, BD_ENOMEM, "out of memory for a %zu-byte constant", ssize);
            }
            memcpy(tmp, data, ssize);
            data = tmp;
        }
        dnnl_memory_t ms = NULL, md = NULL;
        dnnl_primitive_desc_t pd = NULL;
        dnnl_primitive_t prim = NULL;
        rc = dn_check(c, dnnl_memory_create(&ms, src_md, c->eng, (void *)data), "dnnl_memory_create");
        if (!rc)
            rc = dn_check(c, dnnl_memory_create(&md, dst_md, c->eng, p), "dnnl_memory_create");
        if (!rc)
            rc = dn_check(c, dnnl_reorder_primitive_desc_create(&pd, src_md, c->eng, dst_md, c->eng, NULL),
                          "dnnl_reorder_primitive_desc_create (constant)");
        if (!rc)
            rc = dn_check(c, dnnl_primitive_create(&prim, pd), "dnnl_primitive_create (constant reorder)");
        if (!rc) {
            dnnl_exec_arg_t a[2] = { { DNNL_ARG_FROM, ms }, { DNNL_ARG_TO, md } };
            rc = dn_check(c, dnnl_primitive_execute(prim, c->stream, 2, a), "dnnl_primitive_execute (constant reorder)");
            if (!rc)
                rc = dn_check(c, dnnl_stream_wait(c->stream), "dnnl_stream_wait");
        }
        if (prim) dnnl_primitive_destroy(prim);
        if (pd) dnnl_primitive_desc_destroy(pd);
        if (ms) dnnl_memory_destroy(ms);
        if (md) dnnl_memory_destroy(md);
        free(tmp);
    }
    if (!rc)
        rc = new_buffer(c, DN_BUF_CONST, -1, size, buf);
    if (rc) {
        if (own)
            free(p);
        return rc;
    }
    c->bufs[*buf].data = p;
    c->bufs[*buf].own = own;
    if (!own)
        c->block_used += room;
    if (keyed)
        c->made[c->n_made++] = (dn_made_const){ key, *buf };
    return 0;
}

int dn_const(dn_compiler *c, const void *data, const dnnl_memory_desc_t *src_md,
             const dnnl_memory_desc_t *dst_md, int *buf)
{
    double t0 = clock_ms();
    int rc = make_const(c, data, src_md, dst_md, buf);
    c->const_ms += clock_ms() - t0;
    return rc;
}

int dn_const_value(dn_compiler *c, const bd_value *v, const dnnl_memory_desc_t *src_md,
                   const dnnl_memory_desc_t *dst_md, int *buf)
{
    if (!v->data || v->dtype != BD_DT_FLOAT || v->nbytes < dnnl_memory_desc_get_size(src_md))
        return dn_fail(c, BD_EMODEL, "constant '%s' must hold %zu bytes of FP32 data", v->name,
                       dnnl_memory_desc_get_size(src_md));
    return dn_const_shared(c, v->data, src_md, dst_md, buf);
}

int dn_const_shared(dn_compiler *c, const void *data, const dnnl_memory_desc_t *src_md,
                    const dnnl_memory_desc_t *dst_md, int *buf)
{
    for (int i = 0; i < c->n_consts; i++)
        if (c->consts[i].data == data && dn_md_equal(&c->consts[i].src, src_md) &&
            dn_md_equal(&c->consts[i].dst, dst_md)) {
            *buf = c->consts[i].buf;
            return 0;
        }
    int rc = grow(c, (void **)&c->consts, &c->cap_consts, c->n_consts + 1, sizeof *c->consts);
    if (!rc)
        rc = dn_const(c, data, src_md, dst_md, buf);
    if (!rc)
        c->consts[c->n_consts++] = (dn_const_entry){ data, *src_md, *dst_md, *buf };
    return rc;
}

/* ---- tensors ---------------------------------------------------------------------------- */

static void define(dn_compiler *c, const bd_value *v, int buf, const dnnl_memory_desc_t *md,
                   bool strided_view)
{
    dn_tensor *t = &c->t[v->index];
    t->defined = true;
    t->buf = buf;
    t->md = *md;
    t->strided_view = strided_view;
    c->bufs[buf].pending += t->uses;
}

static bool value_ok(dn_compiler *c, const bd_value *v)
{
    return v->index >= 0 && (size_t)v->index < c->n_t;
}

const dn_tensor *dn_tensor_of(dn_compiler *c, const bd_value *v)
{
    if (!value_ok(c, v)) {
        dn_fail(c, BD_EMODEL, "value '%s' is not in the graph's value table", v->name);
        return NULL;
    }
    dn_tensor *t = &c->t[v->index];
    if (t->defined)
        return t;
    if (t->q8)
        return dn_int8_dequant(c, v) ? NULL : t;
    if (!v->data) {
        dn_fail(c, BD_EMODEL, "value '%s' is read before it is produced", v->name);
        return NULL;
    }
    if (v->dtype != BD_DT_FLOAT) {
        dn_fail(c, BD_EUNSUPPORTED, "constant '%s' must be FP32, got %s", v->name, bd_dtype_name(v->dtype));
        return NULL;
    }
    dnnl_memory_desc_t md;
    dn_md_of_shape(&md, v);
    if (dnnl_memory_desc_get_size(&md) > v->nbytes) {
        dn_fail(c, BD_EMODEL, "constant '%s' holds %zu bytes, its shape needs %zu", v->name,
                v->nbytes, dnnl_memory_desc_get_size(&md));
        return NULL;
    }
    int buf;
    if (dn_const(c, v->data, &md, &md, &buf))
        return NULL;
    define(c, v, buf, &md, false);
    return t;
}

int dn_define_view(dn_compiler *c, const bd_value *v, int buf, const dnnl_memory_desc_t *md,
                   bool strided_view)
{
    if (!value_ok(c, v))
        return dn_fail(c, BD_EMODEL, "value '%s' is not in the graph's value table", v->name);
    define(c, v, buf, md, strided_view);
    return 0;
}

int dn_input(dn_compiler *c, const bd_value *v, const dnnl_memory_desc_t *want, int *buf)
{
    const dn_tensor *t = dn_tensor_of(c, v);
    if (!t)
        return c->err ? c->err->code : BD_EBACKEND;
    dnnl_memory_desc_t plain;
    if (!want) {
        if (!t->strided_view) {
            *buf = t->buf;
            return 0;
        }
        dn_md_of_shape(&plain, v);
        want = &plain;
    }
    if (dn_md_equal(&t->md, want)) {
        *buf = t->buf;
        return 0;
    }
    static const int64_t whole[3] = { 0 };
    if ((*buf = dn_cached_copy(c, v, want, whole)) >= 0)
        return 0;
    int rc, nb;
    const dn_buffer *src = &c->bufs[t->buf];
    if (src->kind == DN_BUF_CONST) {
        rc = dn_const(c, src->data, &t->md, want, &nb);
    } else if (dn_interleave_planes_fits(&t->md, want) && dn_avx512()) {
        /* an RGB image into a channels-last convolution (dnnl_interleave.c) */
        rc = new_buffer(c, DN_BUF_ARENA, -1, dnnl_memory_desc_get_size(want), &nb);
        if (!rc)
            rc = dn_interleave_planes_add(c, t->buf, &t->md, nb, want);
    } else {
        dnnl_primitive_desc_t pd;
        rc = dn_reorder_pd(c, &t->md, want, "dnnl_reorder_primitive_desc_create", &pd);
        if (!rc)
            rc = new_buffer(c, DN_BUF_ARENA, -1, dnnl_memory_desc_get_size(want), &nb);
        if (rc) {
            if (pd)
                dnnl_primitive_desc_destroy(pd);
            return rc;
        }
        dn_arg a[2] = { { DNNL_ARG_FROM, t->buf, t->md }, { DNNL_ARG_TO, nb, *want } };
        rc = dn_add_step(c, pd, a, 2);
    }
    if (rc || (rc = dn_cache_copy(c, v, want, whole, nb)))
        return rc;
    *buf = nb;
    return 0;
}

int dn_cached_copy(const dn_compiler *c, const bd_value *v, const dnnl_memory_desc_t *md,
                   const int64_t *pick)
{
    for (int i = 0; i < c->n_cache; i++)
        if (c->cache[i].value == v->index && dn_md_equal(&c->cache[i].md, md) &&
            !memcmp(c->cache[i].pick, pick, sizeof c->cache[i].pick))
            return c->cache[i].buf;
    return -1;
}

/* Has MD V's own dims (not those of a copy made of it in another shape)? */
static bool same_dims(const dnnl_memory_desc_t *md, const bd_value *v)
{
    if (md->ndims != v->shape.rank)
        return false;
    for (int d = 0; d < md->ndims; d++)
        if (md->dims[d] != v->shape.dims[d])
            return false;
    return true;
}

int dn_cached_copy_typed(const dn_compiler *c, const bd_value *v, dnnl_data_type_t dt,
                         dnnl_memory_desc_t *md)
{
    static const int64_t whole[3] = { 0 };
    for (int i = 0; i < c->n_cache; i++)
        if (c->cache[i].value == v->index && c->cache[i].md.data_type == dt &&
            !memcmp(c->cache[i].pick, whole, sizeof whole) && same_dims(&c->cache[i].md, v)) {
            *md = c->cache[i].md;
            return c->cache[i].buf;
        }
    return -1;
}

int dn_cache_copy(dn_compiler *c, const bd_value *v, const dnnl_memory_desc_t *md,
                  const int64_t *pick, int buf)
{
    int rc = grow(c, (void **)&c->cache, &c->cap_cache, c->n_cache + 1, sizeof *c->cache);
    if (rc)
        return rc;
    /* a cached copy may be read again by later consumers of V: never overwrite it in place */
    c->bufs[buf].pending += 1 << 20;
    dn_reorder_entry *e = &c->cache[c->n_cache++];
    e->value = v->index;
    e->buf = buf;
    e->md = *md;
    memcpy(e->pick, pick, sizeof e->pick);
    return 0;
}

int dn_input_plain(dn_compiler *c, const bd_value *v, int *buf, dnnl_memory_desc_t *md)
{
    dn_md_of_shape(md, v);
    return dn_input(c, v, md, buf);
}

int dn_input_any(dn_compiler *c, const bd_value *v, int *buf, dnnl_memory_desc_t *md)
{
    const dn_tensor *t = dn_tensor_of(c, v);
    if (!t)
        return c->err ? c->err->code : BD_EBACKEND;
    if (t->md.offset0 != 0)             /* a sub-box view (Slice, Split): read it made plain */
        return dn_input_plain(c, v, buf, md);
    *buf = t->buf;
    *md = t->md;
    return 0;
}

int dn_output(dn_compiler *c, const bd_value *v, const dnnl_memory_desc_t *md, int *buf)
{
    if (!value_ok(c, v))
        return dn_fail(c, BD_EMODEL, "value '%s' is not in the graph's value table", v->name);
    const dn_tensor *t = &c->t[v->index];
    int j = t->out_index;
    dnnl_memory_desc_t plain;
    dn_md_of_shape(&plain, v);
    if (j >= 0 && !c->out_bound[j] && dn_md_is_plain(md) &&
        dnnl_memory_desc_get_size(md) == dnnl_memory_desc_get_size(&plain)) {
        c->out_bound[j] = true;
        *buf = c->sg->n_inputs + j;
        define(c, v, *buf, &plain, false);
        return 0;
    }
    int rc = new_buffer(c, DN_BUF_ARENA, -1, dnnl_memory_desc_get_size(md), buf);
    if (rc)
        return rc;
    define(c, v, *buf, md, false);
    return 0;
}

int dn_temp(dn_compiler *c, const dnnl_memory_desc_t *md, int *buf)
{
    return new_buffer(c, DN_BUF_ARENA, -1, dnnl_memory_desc_get_size(md), buf);
}

/* How many of the current node's inputs live in BUF. */
static int node_reads(dn_compiler *c, int buf)
{
    int n = 0;
    for (size_t i = 0; i < c->node->n_inputs; i++) {
        const bd_value *x = c->node->inputs[i];
        if (x && value_ok(c, x) && c->t[x->index].defined && c->t[x->index].buf == buf)
            n++;
    }
    return n;
}

bool dn_can_reuse(dn_compiler *c, const bd_value *x, const dnnl_memory_desc_t *md)
{
    if (!c->node || !value_ok(c, x) || !c->t[x->index].defined)
        return false;
    const dn_tensor *t = &c->t[x->index];
    const dn_buffer *b = &c->bufs[t->buf];
    /* a plain subgraph output is better written straight into the caller's buffer */
    if (c->node->n_outputs && c->t[c->node->outputs[0]->index].out_index >= 0 && dn_md_is_plain(md))
        return false;
    return b->kind == DN_BUF_ARENA && !t->strided_view && dn_md_equal(&t->md, md) &&
           b->pending == node_reads(c, t->buf);
}

int dn_output_with_residual(dn_compiler *c, const bd_value *v, const dnnl_memory_desc_t *md,
                            const bd_value *residual, int *buf)
{
    const dn_tensor *r = dn_tensor_of(c, residual);
    if (!r)
        return c->err ? c->err->code : BD_EBACKEND;
    bool to_caller = c->t[v->index].out_index >= 0 && dn_md_is_plain(md);
    if (!to_caller && dn_can_reuse(c, residual, md) && node_reads(c, r->buf) == 1) {
        *buf = r->buf;
        define(c, v, *buf, md, false);
        return 0;
    }
    int rbuf;
    int rc = dn_input(c, residual, NULL, &rbuf);
    if (!rc)
        rc = dn_output(c, v, md, buf);
    if (rc)
        return rc;
    const dnnl_memory_desc_t *rmd = &c->t[residual->index].md;
    dnnl_memory_desc_t rplain;
    if (c->t[residual->index].strided_view) {
        dn_md_of_shape(&rplain, residual);
        rmd = &rplain;
    }
    const dnnl_memory_desc_t *dmd = &c->t[v->index].md;
    dnnl_primitive_desc_t pd;
    if ((rc = dn_reorder_pd(c, rmd, dmd, "dnnl_reorder_primitive_desc_create (residual copy)", &pd)))
        return rc;
    dn_arg a[2] = { { DNNL_ARG_FROM, rbuf, *rmd }, { DNNL_ARG_TO, *buf, *dmd } };
    return dn_add_step(c, pd, a, 2);
}

/* ---- arena planning --------------------------------------------------------------------- */

/* Assign arena offsets from the steps' use of each buffer (backends/arena.h does the packing:
 * buffers alive at the same step never overlap). */
static int plan_arena(dn_compiler *c, size_t *arena, size_t *naive)
{
    for (int s = 0; s < c->n_steps; s++)
        for (int a = 0; a < c->steps[s].nargs; a++) {
            int b = c->steps[s].args[a].buf;
            if (b < 0)
                continue;
            if (c->bufs[b].first < 0)
                c->bufs[b].first = s;
            c->bufs[b].last = s;
        }
    size_t n = 0;
    bd_arena_req *reqs = malloc(sizeof *reqs * (size_t)(c->n_bufs + 1));
    size_t *offs = malloc(sizeof *offs * (size_t)(c->n_bufs + 1));
    int *ids = malloc(sizeof *ids * (size_t)(c->n_bufs + 1));
    if (!reqs || !offs || !ids) {
        free(reqs);
        free(offs);
        free(ids);
        return dn_fail(c, BD_ENOMEM, "out of memory");
    }
    *naive = 0;
    for (int b = 0; b < c->n_bufs; b++)
        if (c->bufs[b].kind == DN_BUF_ARENA && c->bufs[b].first >= 0) {
            reqs[n] = (bd_arena_req){ c->bufs[b].size, c->bufs[b].first, c->bufs[b].last };
            ids[n++] = b;
            *naive += align_up(c->bufs[b].size);
        }
    size_t total = bd_arena_plan(reqs, n, offs);
    for (size_t i = 0; i < n && total != (size_t)-1; i++)
        c->bufs[ids[i]].offset = offs[i];
    free(reqs);
    free(offs);
    free(ids);
    if (total == (size_t)-1)
        return dn_fail(c, BD_ENOMEM, "out of memory planning the arena");
    *arena = total;
    return 0;
}

/* ---- compile ---------------------------------------------------------------------------- */

static void free_steps(dn_step *steps, int n)
{
    for (int i = 0; i < n; i++) {
        if (steps[i].prim)
            dnnl_primitive_destroy(steps[i].prim);
        free(steps[i].args);
    }
    free(steps);
}

static void free_bufs(dn_buffer *bufs, int n)
{
    for (int i = 0; i < n; i++)
        if (bufs[i].kind == DN_BUF_CONST && bufs[i].own)
            free(bufs[i].data);
    free(bufs);
}

/* Every constant (weights reordered for their primitives) goes into one block of huge pages
 * (core/big_alloc.h): at batch 1 the weights are streamed from DRAM at every inference. The
 * block is taken before the compile, larger than the constants can need (the subgraph's
 * constant bytes, twice: a blocked layout pads channels), so each constant is written there
 * once; the pages past the last are given back at the end. Fresh pages are the load's main
 * cost on a VM (a 4 KiB page fault took ~4.5 us here: 100 MB of weights ~110 ms), and the
 * constants used to be written into pages of their own, then copied into the block: ResNet-50
 * faulted 100 MB of small pages more. A constant that does not fit gets a block of its own. */
static void block_reserve(dn_compiler *c)
{
    size_t bytes = 0;
    for (size_t i = 0; i < c->sg->n_nodes; i++) {
        const bd_node *n = c->sg->nodes[i];
        for (size_t k = 0; k < n->n_inputs; k++) {
            const bd_value *v = n->inputs[k];
            if (!v || !v->data)
                continue;
            if (v->nbytes > SIZE_MAX / 8 - bytes)
                return;                       /* no block: each constant gets its own */
            bytes += align_up(v->nbytes);
        }
    }
    /* under one huge page of constants, a block would cost a whole 2 MiB page resident (a
     * small kernel, a control-flow body's plan): those stay in heap blocks of their own */
    if (bytes < ((size_t)2 << 20))
        return;
    c->block_size = 2 * bytes + ((size_t)2 << 20);
    c->block = bd_big_alloc(c->block_size);
    if (!c->block)
        c->block_size = 0;
}

/* The kernel takes the block, cut to the constants written into it (before any context
 * exists: contexts bind the data pointers). */
static void block_adopt(dn_compiler *c, bd_kernel *k)
{
    if (!c->block)
        return;
    if (c->block_used == 0) {
        bd_big_free(c->block, c->block_size);
    } else {
        k->weights = c->block;
        k->weights_size = bd_big_shrink(c->block, c->block_size, c->block_used);
    }
    c->block = NULL;
}

static void free_own(void *p, size_t n)
{
    (void)n;
    free(p);
}

/* After a successful compile: hand K's constants to the model's cache (C->shared) so the
 * model's later kernels read them instead of laying them out again. Its weights block and
 * each constant of its own become blocks of the cache, which K holds (and frees through);
 * when memory for that is short, K keeps them as before, unpublished. */
static void publish(dn_compiler *c, bd_kernel *k)
{
    if (!c->shared || c->n_made == 0 ||
        grow(c, (void **)&c->held, &c->cap_held, c->n_held + 1 + c->n_made, sizeof *c->held))
        return;
    bd_const_block *block = NULL;
    if (k->weights && bd_const_block_create(c->shared, k->weights, k->weights_size, bd_big_free, &block) == 0) {
        k->weights = NULL;
        c->held[c->n_held++] = block;
    }
    for (int i = 0; i < c->n_made; i++) {
        dn_buffer *b = &k->bufs[c->made[i].buf];
        bd_const_block *owner = block;
        if (b->own) {
            if (bd_const_block_create(c->shared, b->data, b->size, free_own, &owner))
                continue;
            b->own = false;
            c->held[c->n_held++] = owner;
        } else if (!owner) {
            continue;                 /* in a block the cache does not hold */
        }
        bd_const_cache_put(c->shared, &c->made[i].key, sizeof c->made[i].key, owner, b->data, b->size);
    }
}

void dn_kernel_release(bd_kernel *k)
{
    if (!k)
        return;
    free_steps(k->steps, k->n_steps);
    free_bufs(k->bufs, k->n_bufs);
    bd_big_free(k->weights, k->weights_size);
    for (int i = 0; i < k->n_held; i++)
        bd_const_block_release(k->held[i]);
    free(k->held);
    free(k->in_shapes);
    free(k->out_shapes);
    free(k->io_dtypes);
    free(k->impls);
    free(k);
}

static void compiler_free(dn_compiler *c)
{
    free_steps(c->steps, c->n_steps);
    free_bufs(c->bufs, c->n_bufs);
    bd_big_free(c->block, c->block_size);
    for (int i = 0; i < c->n_held; i++)
        bd_const_block_release(c->held[i]);
    free(c->held);
    free(c->made);
    free(c->t);
    free(c->cache);
    free(c->consts);
    free(c->out_bound);
    if (c->stream)
        dnnl_stream_destroy(c->stream);
}

/* Build N's steps; SERIAL: on one thread (primitives are created with the thread count they
 * will run with, so oneDNN splits their work for it). */
static int build_threaded(dn_compiler *c, const bd_node *n, dn_build_fn_t build, bool serial)
{
    int first = c->n_steps, saved = omp_get_max_threads();
    if (serial && saved > 1)
        omp_set_num_threads(1);
    c->tail_fused = false;
    int rc = build(c, n);
    if (rc == 0 && dn_native_tail(n) && !c->tail_fused)   /* the step dn_postops_build left out */
        rc = dn_native_tail_append(c, n);
    if (serial && saved > 1)
        omp_set_num_threads(saved);
    for (int s = first; rc == 0 && s < c->n_steps; s++)
        c->steps[s].threads = serial ? 1 : 0;
    return rc;
}

static int compile_nodes(dn_compiler *c)
{
    const bd_subgraph *sg = c->sg;
    for (size_t i = 0; i < sg->n_nodes; i++) {
        const bd_node *n = sg->nodes[i];
        for (size_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] && value_ok(c, n->inputs[k]))
                c->t[n->inputs[k]->index].uses++;
    }
    for (size_t j = 0; j < sg->n_outputs; j++) {
        const bd_value *v = sg->outputs[j];
        if (!value_ok(c, v))
            return dn_fail(c, BD_EMODEL, "output '%s' is not in the graph's value table", v->name);
        dnnl_data_type_t dt;
        if (!bd_shape_is_static(&v->shape) || !dn_boundary_dt(v->dtype, &dt))
            return dn_fail(c, BD_EUNSUPPORTED, "output '%s' must be FP32 (or UINT8/INT8/INT32) with a "
                           "static shape", v->name);
        c->t[v->index].uses++;
        if (c->t[v->index].out_index < 0)
            c->t[v->index].out_index = (int)j;
    }
    int buf, rc;
    for (size_t i = 0; i < sg->n_inputs; i++) {
        const bd_value *v = sg->inputs[i];
        if (!value_ok(c, v))
            return dn_fail(c, BD_EMODEL, "input '%s' is not in the graph's value table", v->name);
        dnnl_data_type_t dt;
        if (!bd_shape_is_static(&v->shape) || !dn_boundary_dt(v->dtype, &dt))
            return dn_fail(c, BD_EUNSUPPORTED, "input '%s' must be FP32 (or UINT8/INT8/INT32) with a "
                           "static shape", v->name);
        dnnl_memory_desc_t md;
        md_boundary(&md, v);
        if ((rc = new_buffer(c, DN_BUF_INPUT, (int)i, dnnl_memory_desc_get_size(&md), &buf)))
            return rc;
        define(c, v, buf, &md, false);
    }
    for (size_t j = 0; j < sg->n_outputs; j++) {
        dnnl_memory_desc_t md;
        md_boundary(&md, sg->outputs[j]);
        if ((rc = new_buffer(c, DN_BUF_OUTPUT, (int)j, dnnl_memory_desc_get_size(&md), &buf)))
            return rc;
    }
    for (size_t i = 0; i < sg->n_nodes; i++) {
        const bd_node *n = sg->nodes[i];
        c->node = n;
        dn_build_fn_t build = dn_builder_for(n);
        if (!build)
            return dn_fail(c, BD_EUNSUPPORTED, "op not supported by the dnnl backend");
        if ((rc = build_threaded(c, n, build, dn_serial_node(n))))
            return rc;
        for (size_t k = 0; k < n->n_inputs; k++) {
            const bd_value *x = n->inputs[k];
            if (x && value_ok(c, x) && c->t[x->index].defined)
                c->bufs[c->t[x->index].buf].pending--;
        }
        for (size_t k = 0; k < n->n_outputs; k++)
            if (value_ok(c, n->outputs[k]) && !c->t[n->outputs[k]->index].defined &&
                !c->t[n->outputs[k]->index].q8 && c->t[n->outputs[k]->index].uses > 0)
                return dn_fail(c, BD_EUNSUPPORTED, "output %zu ('%s') is not computed", k,
                               n->outputs[k]->name);
    }
    c->node = NULL;
    /* Subgraph outputs not already written in place into the caller's buffer. */
    for (size_t j = 0; j < sg->n_outputs; j++) {
        const bd_value *v = sg->outputs[j];
        int obuf = (int)(sg->n_inputs + j);
        const dn_tensor *t = dn_tensor_of(c, v);
        if (!t)
            return c->err ? c->err->code : BD_EBACKEND;
        if (t->buf == obuf)
            continue;
        dnnl_memory_desc_t md;
        md_boundary(&md, v);
        bool serial = dn_serial_bytes(2 * dnnl_memory_desc_get_size(&md));
        int saved = omp_get_max_threads();
        if (serial && saved > 1)
            omp_set_num_threads(1);
        dnnl_primitive_desc_t pd;
        rc = dn_reorder_pd(c, &t->md, &md, "dnnl_reorder_primitive_desc_create (output)", &pd);
        dn_arg a[2] = { { DNNL_ARG_FROM, t->buf, t->md }, { DNNL_ARG_TO, obuf, md } };
        if (!rc)
            rc = dn_add_step(c, pd, a, 2);
        if (serial && saved > 1)
            omp_set_num_threads(saved);
        if (rc)
            return rc;
        c->steps[c->n_steps - 1].threads = serial ? 1 : 0;
    }
    return 0;
}

static int copy_shapes(bd_value *const *vals, size_t n, bd_shape **out)
{
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out)
        return BD_ENOMEM;
    for (size_t i = 0; i < n; i++)
        (*out)[i] = vals[i]->shape;
    return 0;
}

static void md_str(char *buf, size_t len, const dnnl_memory_desc_t *md)
{
    int off = 0;
    for (int i = 0; i < md->ndims && off < (int)len - 24; i++)
        off += snprintf(buf + off, len - (size_t)off, "%s%lld", i ? "x" : "", (long long)md->dims[i]);
    if (md->format_kind != dnnl_blocked)
        snprintf(buf + off, len - (size_t)off, ":opaque");
    else if (md->format_desc.blocking.inner_nblks)
        snprintf(buf + off, len - (size_t)off, ":blk%lld", (long long)md->format_desc.blocking.inner_blks[0]);
    else
        snprintf(buf + off, len - (size_t)off, dn_md_is_plain(md) ? ":plain" : ":strided");
}

/* Step I's implementation as the report names it: oneDNN's name, with the primitive kind
 * after a reference one ("ref:any pooling_v2"); *CLIFF: the guard would not accept it. */
static void step_impl_key(const bd_kernel *k, int i, char *buf, size_t len, bool *cliff)
{
    const char *impl = "native";
    dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
    const_dnnl_primitive_desc_t pd = NULL;
    if (k->steps[i].prim && dnnl_primitive_get_primitive_desc(k->steps[i].prim, &pd) == dnnl_success) {
        dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
        dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind);
    }
    *cliff = pd && dn_pd_is_cliff(pd);
    if (!strncmp(impl, "ref", 3))
        snprintf(buf, len, "%s %s", impl, dnnl_prim_kind2str(kind));
    else
        snprintf(buf, len, "%s", impl);
}

/* K's implementations deduplicated with counts, most used first ("jit:avx2 x12, native x2"),
 * and its count of cliffs; once, at compile (reports read them for free). */
static void summarize_impls(bd_kernel *k)
{
    typedef struct { char name[64]; int n; } entry;
    entry *e = calloc((size_t)k->n_steps + 1, sizeof *e);
    int ne = 0;
    k->ref_steps = 0;
    if (!e)
        return;
    for (int i = 0; i < k->n_steps; i++) {
        char key[64];
        bool cliff;
        step_impl_key(k, i, key, sizeof key, &cliff);
        k->ref_steps += cliff;
        int j = 0;
        while (j < ne && strcmp(e[j].name, key))
            j++;
        if (j == ne)
            snprintf(e[ne++].name, sizeof e[0].name, "%s", key);
        e[j].n++;
    }
    for (int a = 1; a < ne; a++)        /* by count, then first seen (stable insertion) */
        for (int b = a; b > 0 && e[b].n > e[b - 1].n; b--) {
            entry t = e[b];
            e[b] = e[b - 1];
            e[b - 1] = t;
        }
    size_t len = 1;
    for (int j = 0; j < ne; j++)
        len += strlen(e[j].name) + 16;
    k->impls = malloc(len);
    if (k->impls) {
        size_t off = 0;
        k->impls[0] = 0;
        for (int j = 0; j < ne; j++)
            off += (size_t)snprintf(k->impls + off, len - off, "%s%s x%d", j ? ", " : "", e[j].name, e[j].n);
    }
    free(e);
}

/* BRAID_DNNL_VERBOSE=1: print the compiled plan (one line per step: node, implementation,
 * t1 when it runs on one thread (dnnl_threads.c) else tN, then its arguments) to stderr. */
static void dump_plan(const bd_kernel *k)
{
    fprintf(stderr, "dnnl kernel: %d steps, arena %zu bytes (%zu without reuse), scratchpad %zu\n",
            k->n_steps, k->arena_size, k->arena_naive, k->scratch_size);
    for (int i = 0; i < k->n_steps; i++) {
        const dn_step *s = &k->steps[i];
        const char *impl = bd_dnnl_kernel_step_impl(k, i);
        char args[512];
        int off = 0;
        for (int a = 0; a < s->nargs && off < (int)sizeof args - 32; a++) {
            char md[96] = "";
            md_str(md, sizeof md, &s->args[a].md);
            off += snprintf(args + off, sizeof args - (size_t)off, " %d:b%d:%s", s->args[a].arg,
                            s->args[a].buf, md);
        }
        fprintf(stderr, "  %3d %-24s %-28s %s%s\n", i, s->node, impl, s->threads == 1 ? "t1" : "tN", args);
    }
}

int dn_compile(const bd_subgraph *sg, bd_kernel **out, bd_error *err)
{
    dn_compiler c;
    memset(&c, 0, sizeof c);
    c.sg = sg;
    c.err = err;
    for (size_t i = 0; i < sg->n_nodes; i++) {    /* never a primitive on an empty tensor */
        const bd_value *empty = dn_empty_tensor(sg->nodes[i]);
        if (empty)
            return bd_error_set(err, BD_EUNSUPPORTED, "dnnl: node '%s' (%s): tensor '%s' is empty (a zero-size "
                                "dim): oneDNN primitives need at least one element", sg->nodes[i]->name,
                                sg->nodes[i]->op_type, empty->name);
    }
    c.eng = dn_engine();
    if (!c.eng)
        return bd_error_set(err, BD_EBACKEND, "dnnl: cannot create the CPU engine");
    int rc = dn_check(&c, dnnl_stream_create(&c.stream, c.eng, dnnl_stream_default_flags),
                      "dnnl_stream_create");
    if (rc)
        return rc;
    c.n_t = bd_graph_num_values(sg->graph);
    c.shared = sg->consts;
    c.t = calloc(c.n_t ? c.n_t : 1, sizeof *c.t);
    c.out_bound = calloc(sg->n_outputs + 1, sizeof *c.out_bound);
    if (!c.t || !c.out_bound) {
        compiler_free(&c);
        return bd_error_set(err, BD_ENOMEM, "dnnl: out of memory");
    }
    for (size_t i = 0; i < c.n_t; i++)
        c.t[i].out_index = -1;

    bd_kernel *k = NULL;
    size_t arena = 0, naive = 0;
    block_reserve(&c);
    rc = compile_nodes(&c);
    if (!rc)
        rc = plan_arena(&c, &arena, &naive);
    if (!rc) {
        k = calloc(1, sizeof *k);
        if (k)
            k->io_dtypes = calloc(sg->n_inputs + sg->n_outputs + 1, sizeof *k->io_dtypes);
        if (!k || !k->io_dtypes || copy_shapes(sg->inputs, sg->n_inputs, &k->in_shapes) ||
            copy_shapes(sg->outputs, sg->n_outputs, &k->out_shapes)) {
            if (k) {
                free(k->in_shapes);
                free(k->io_dtypes);
                free(k);
            }
            k = NULL;
            rc = bd_error_set(err, BD_ENOMEM, "dnnl: out of memory");
        }
    }
    if (rc) {
        compiler_free(&c);
        return rc;
    }
    k->steps = c.steps;
    k->n_steps = c.n_steps;
    k->bufs = c.bufs;
    k->n_bufs = c.n_bufs;
    k->arena_size = arena;
    k->arena_naive = naive;
    k->n_inputs = (int)sg->n_inputs;
    for (size_t i = 0; i < sg->n_inputs + sg->n_outputs; i++)
        k->io_dtypes[i] = i < sg->n_inputs ? sg->inputs[i]->dtype : sg->outputs[i - sg->n_inputs]->dtype;
    k->n_outputs = (int)sg->n_outputs;
    for (int i = 0; i < c.n_steps; i++)
        if (c.steps[i].scratch > k->scratch_size)
            k->scratch_size = c.steps[i].scratch;
    c.steps = NULL;
    c.n_steps = 0;
    c.bufs = NULL;
    c.n_bufs = 0;
    double t0 = clock_ms();
    block_adopt(&c, k);
    publish(&c, k);
    k->held = c.held;
    k->n_held = c.n_held;
    k->shared_consts = c.shared_consts;
    k->shared_bytes = c.shared_bytes;
    c.held = NULL;
    c.n_held = 0;
    k->const_ms = c.const_ms + (clock_ms() - t0);
    compiler_free(&c);
    summarize_impls(k);
    const char *verbose = getenv("BRAID_DNNL_VERBOSE");
    if (verbose && verbose[0] == '1')
        dump_plan(k);
    *out = k;
    return 0;
}

/* ---- introspection (dnnl_backend.h) -------------------------------------------------------- */

void bd_dnnl_kernel_arena(const bd_kernel *k, size_t *arena, size_t *without_reuse)
{
    if (arena)
        *arena = k->arena_size;
    if (without_reuse)
        *without_reuse = k->arena_naive;
}

int bd_dnnl_kernel_num_steps(const bd_kernel *k)
{
    return k->n_steps;
}

const char *bd_dnnl_kernel_step_impl(const bd_kernel *k, int i)
{
    const char *impl = "native";
    const_dnnl_primitive_desc_t pd = NULL;
    if (k->steps[i].prim && dnnl_primitive_get_primitive_desc(k->steps[i].prim, &pd) == dnnl_success)
        dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    return impl;
}

bool bd_dnnl_kernel_step_is_cliff(const bd_kernel *k, int i)
{
    char key[64];
    bool cliff;
    step_impl_key(k, i, key, sizeof key, &cliff);
    return cliff;
}

/* Count step S in OUT's products (and int8_products when its source is 8-bit integers). */
static void count_product(const dn_step *s, bd_kernel_stats *out)
{
    const_dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
    if (s->kind != DN_STEP_PRIM || !s->prim ||
        dnnl_primitive_get_primitive_desc(s->prim, &pd) != dnnl_success ||
        dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind) != dnnl_success ||
        (kind != dnnl_convolution && kind != dnnl_matmul && kind != dnnl_inner_product &&
         kind != dnnl_deconvolution))
        return;
    const dnnl_memory_desc_t *src = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    out->products++;
    if (src && (src->data_type == dnnl_u8 || src->data_type == dnnl_s8))
        out->int8_products++;
}

void dn_kernel_stats(const bd_kernel *k, bd_kernel_stats *out)
{
    *out = (bd_kernel_stats){ .steps = (size_t)k->n_steps, .ref_steps = k->ref_steps, .impls = k->impls,
                              .const_ms = k->const_ms, .shared_consts = k->shared_consts,
                              .shared_const_bytes = k->shared_bytes };
    for (int i = 0; i < k->n_steps; i++) {
        if (k->steps[i].reorder_bytes) {
            out->reorders++;
            out->reorder_bytes += k->steps[i].reorder_bytes;
        }
        count_product(&k->steps[i], out);
    }
    for (int i = 0; i < k->n_bufs; i++)
        if (k->bufs[i].kind == DN_BUF_CONST)
            out->const_bytes += k->bufs[i].size;
}
