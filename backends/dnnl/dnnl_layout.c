/* Channels-last (TF `data_format` NHWC) without transposes. An IR tensor [N, spatial..., C]
 * keeps its IR-order md in the compiler; a primitive that wants oneDNN's logical order
 * [N, C, spatial...] sees the same bytes through a permuted md (plain NHWC becomes the
 * `acdb`-style strided md; a blocked layout a conv chose stays blocked). TF filters (HWIO,
 * HWCM) are described the same way: strided mds over the constant's bytes. */
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

bool dn_channels_last(const bd_node *n)
{
    const char *f = bd_node_attr_string(n, "data_format", "NCHW");
    return !strcmp(f, "NHWC") || !strcmp(f, "NWC") || !strcmp(f, "NDHWC");
}

bool dn_data_format_ok(const bd_node *n, char *why, size_t len)
{
    const char *f = bd_node_attr_string(n, "data_format", "NCHW");
    if (dn_channels_last(n) || !strcmp(f, "NCHW") || !strcmp(f, "NCW") || !strcmp(f, "NCDHW") || !f[0])
        return true;
    return dn_why(why, len, "%s data_format '%s' is not supported", n->op_type, f);
}

void dn_dims_cf(const bd_shape *s, bool last, int64_t *dims)
{
    int r = s->rank;
    memcpy(dims, s->dims, sizeof *dims * (size_t)r);
    if (!last || r < 3)
        return;
    dims[1] = s->dims[r - 1];
    for (int i = 1; i < r - 1; i++)
        dims[i + 1] = s->dims[i];
}

/* permute_axes semantics: out.dims[perm[i]] = in.dims[i]. */
int dn_md_to_cf(dn_compiler *c, dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in)
{
    int r = in->ndims, perm[DNNL_MAX_NDIMS];
    if (r < 3) {
        *out = *in;
        return 0;
    }
    perm[0] = 0;
    perm[r - 1] = 1;
    for (int i = 1; i < r - 1; i++)
        perm[i] = i + 1;
    return dn_check(c, dnnl_memory_desc_permute_axes(out, in, perm), "dnnl_memory_desc_permute_axes");
}

int dn_md_to_cl(dn_compiler *c, dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in)
{
    int r = in->ndims, perm[DNNL_MAX_NDIMS];
    if (r < 3) {
        *out = *in;
        return 0;
    }
    perm[0] = 0;
    perm[1] = r - 1;
    for (int i = 2; i < r; i++)
        perm[i] = i - 1;
    return dn_check(c, dnnl_memory_desc_permute_axes(out, in, perm), "dnnl_memory_desc_permute_axes");
}

int dn_md_cf(dn_compiler *c, bool last, dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in)
{
    if (!last) {
        *out = *in;
        return 0;
    }
    return dn_md_to_cf(c, out, in);
}

int dn_md_ir(dn_compiler *c, bool last, dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in)
{
    if (!last) {
        *out = *in;
        return 0;
    }
    return dn_md_to_cl(c, out, in);
}

int dn_input_cf(dn_compiler *c, const bd_value *v, bool last, int *buf, dnnl_memory_desc_t *md)
{
    int rc = dn_input(c, v, NULL, buf);
    if (rc)
        return rc;
    dnnl_memory_desc_t ir = c->t[v->index].md;
    if (c->t[v->index].strided_view)
        dn_md_of_shape(&ir, v);
    return dn_md_cf(c, last, md, &ir);
}

/* ---- filters ------------------------------------------------------------------------------ */

dn_filter_format dn_filter_format_of(const bd_node *n)
{
    const char *f = bd_node_attr_string(n, "filter_format", "OIHW");
    if (!strcmp(f, "HWIO"))
        return DN_FILTER_HWIO;
    if (!strcmp(f, "HWCM"))
        return DN_FILTER_HWCM;
    if (!strcmp(f, "OIHW") || !f[0])
        return DN_FILTER_OIHW;
    return DN_FILTER_UNKNOWN;
}

bool dn_filter_oihw(const bd_node *n, const bd_shape *w, int64_t *dims)
{
    dn_filter_format f = dn_filter_format_of(n);
    int r = w->rank, ns = r - 2;
    if (f == DN_FILTER_UNKNOWN || r < 3)
        return false;
    if (f == DN_FILTER_OIHW) {
        memcpy(dims, w->dims, sizeof *dims * (size_t)r);
        return true;
    }
    dims[0] = f == DN_FILTER_HWCM ? w->dims[ns] * w->dims[ns + 1] : w->dims[ns + 1];
    dims[1] = f == DN_FILTER_HWCM ? 1 : w->dims[ns];
    for (int i = 0; i < ns; i++)
        dims[2 + i] = w->dims[i];
    return true;
}

int dn_filter_md(dn_compiler *c, const bd_node *n, const bd_shape *w, int64_t group,
                 dnnl_memory_desc_t *md)
{
    dn_filter_format f = dn_filter_format_of(n);
    int r = w->rank, ns = r - 2;
    int64_t od[BD_MAX_RANK];
    if (!dn_filter_oihw(n, w, od))
        return dn_fail(c, BD_EUNSUPPORTED, "filter_format '%s' of rank %d is not supported",
                       bd_node_attr_string(n, "filter_format", ""), r);
    /* strides of [O, I, k...] over the stored bytes */
    int64_t st[BD_MAX_RANK];
    if (f == DN_FILTER_OIHW) {
        st[r - 1] = 1;
        for (int i = r - 2; i >= 0; i--)
            st[i] = st[i + 1] * od[i + 1];
    } else {
        /* stored [k..., X, Y]: the last two dims are contiguous, kernel dims outside */
        int64_t inner = w->dims[ns] * w->dims[ns + 1];
        st[r - 1] = inner;
        for (int i = ns - 1; i > 0; i--)
            st[2 + i - 1] = st[2 + i] * w->dims[i];
        if (f == DN_FILTER_HWIO) {
            st[0] = 1;                   /* O */
            st[1] = w->dims[ns + 1];     /* I */
        } else {
            st[0] = 1;                   /* C*M, contiguous as c*M + m */
            st[1] = inner;               /* the one input channel per group */
        }
    }
    dnnl_dims_t d, s;
    int wr = r;
    if (group > 1) {
        /* [G, O/G, I/G, k...]: output channel g*(O/G) + o */
        d[0] = group;
        s[0] = st[0] * (od[0] / group);
        d[1] = od[0] / group;
        s[1] = st[0];
        for (int i = 1; i < r; i++) {
            d[i + 1] = od[i];
            s[i + 1] = st[i];
        }
        wr = r + 1;
    } else {
        for (int i = 0; i < r; i++) {
            d[i] = od[i];
            s[i] = st[i];
        }
    }
    return dn_check(c, dnnl_memory_desc_init_by_strides(md, wr, d, dnnl_f32, s),
                    "dnnl_memory_desc_init_by_strides (filter)");
}

/* ---- activation layouts by tag ------------------------------------------------------------ */

/* The layouts oneDNN picks for activations, by rank (3, 4, 5): plain, channels-last, and
 * channels blocked by 8 and 16. */
static const dnnl_format_tag_t k_tags[3][4] = {
    { dnnl_abc,   dnnl_acb,   dnnl_aBc8b,   dnnl_aBc16b },
    { dnnl_abcd,  dnnl_acdb,  dnnl_aBcd8b,  dnnl_aBcd16b },
    { dnnl_abcde, dnnl_acdeb, dnnl_aBcde8b, dnnl_aBcde16b },
};

dnnl_format_tag_t dn_md_tag(const dnnl_memory_desc_t *md)
{
    if (md->ndims < 3 || md->ndims > 5 || md->format_kind != dnnl_blocked || md->offset0 != 0)
        return dnnl_format_tag_undef;
    for (int i = 0; i < 4; i++) {
        dnnl_format_tag_t t = k_tags[md->ndims - 3][i];
        dnnl_memory_desc_t m;
        if (dnnl_memory_desc_init_by_tag(&m, md->ndims, md->dims, md->data_type, t) == dnnl_success &&
            dnnl_memory_desc_equal(&m, md))
            return t;
    }
    return dnnl_format_tag_undef;
}

void dn_md_like(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *md, const int64_t *dims)
{
    dnnl_format_tag_t t = dn_md_tag(md);
    dnnl_dims_t d;
    for (int i = 0; i < md->ndims; i++)
        d[i] = dims[i];
    if (t == dnnl_format_tag_undef ||
        dnnl_memory_desc_init_by_tag(out, md->ndims, d, dnnl_f32, t) != dnnl_success)
        dn_md_plain(out, md->ndims, dims);
}

bool dn_md_dense(const dnnl_memory_desc_t *md)
{
    if (md->format_kind != dnnl_blocked || md->data_type != dnnl_f32 || md->offset0 != 0)
        return false;
    size_t n = 1;
    for (int i = 0; i < md->ndims; i++)
        n *= (size_t)md->padded_dims[i];
    return dnnl_memory_desc_get_size(md) == n * sizeof(float);
}
