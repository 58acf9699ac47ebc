/* TensorFlow layouts carried as attributes (see docs on the TF frontends): `data_format`
 * NHWC puts channels last, `filter_format` HWIO / HWCM describes TF's filter order. The
 * rules reason in ONNX's channels-first order on permuted copies of the shapes and permute
 * their results back, so the geometry code exists once. */
#include "partitioner/shape/shape_rules.h"

#include <string.h>

int shp_channels_last(const bd_node *n, bool *last, bd_error *err)
{
    const bd_attr *a = bd_node_attr(n, "data_format");
    *last = false;
    if (!a)
        return 0;
    if (a->type != BD_ATTR_STRING || !a->s)
        return shp_fail(err, n, "attribute 'data_format' must be a STRING");
    static const char *const first[] = { "NCHW", "NCW", "NCDHW", "" };
    static const char *const lastf[] = { "NHWC", "NWC", "NDHWC" };
    for (size_t i = 0; i < sizeof first / sizeof *first; i++)
        if (strcmp(a->s, first[i]) == 0)
            return 0;
    for (size_t i = 0; i < sizeof lastf / sizeof *lastf; i++)
        if (strcmp(a->s, lastf[i]) == 0) {
            *last = true;
            return 0;
        }
    return shp_fail(err, n, "attribute 'data_format' is '%s', expected NCHW or NHWC", a->s);
}

void shp_to_channels_first(const bd_shape *src, bd_shape *out)
{
    bd_shape copy = *src;                  /* OUT may be SRC */
    const bd_shape *in = &copy;
    *out = *in;
    if (in->rank < 3)
        return;
    int r = in->rank;
    out->dims[1] = in->dims[r - 1];
    out->sym[1]  = in->sym[r - 1];
    for (int i = 1; i < r - 1; i++) {
        out->dims[i + 1] = in->dims[i];
        out->sym[i + 1]  = in->sym[i];
    }
}

void shp_to_channels_last(const bd_shape *src, bd_shape *out)
{
    bd_shape copy = *src;                  /* OUT may be SRC */
    const bd_shape *in = &copy;
    *out = *in;
    if (in->rank < 3)
        return;
    int r = in->rank;
    out->dims[r - 1] = in->dims[1];
    out->sym[r - 1]  = in->sym[1];
    for (int i = 2; i < r; i++) {
        out->dims[i - 1] = in->dims[i];
        out->sym[i - 1]  = in->sym[i];
    }
}

int shp_filter_oihw(const bd_node *n, const bd_shape *w, bd_shape *out, bd_error *err)
{
    const bd_attr *a = bd_node_attr(n, "filter_format");
    *out = *w;
    if (!a || w->rank < 0)
        return 0;
    if (a->type != BD_ATTR_STRING || !a->s)
        return shp_fail(err, n, "attribute 'filter_format' must be a STRING");
    bool hwio = strcmp(a->s, "HWIO") == 0, hwcm = strcmp(a->s, "HWCM") == 0;
    if (!hwio && !hwcm && strcmp(a->s, "OIHW") != 0)
        return shp_fail(err, n, "attribute 'filter_format' is '%s', expected OIHW, HWIO or HWCM",
                        a->s);
    if (!hwio && !hwcm)
        return 0;
    if (w->rank < 3)
        return shp_fail(err, n, "filter of rank %d cannot be %s (kernel dims, then 2)", w->rank,
                        a->s);
    int r = w->rank, ns = r - 2;
    int64_t i = w->dims[ns], o = w->dims[ns + 1];
    if (hwcm && i >= 0 && o >= 0 && !shp_mul(i, o, &o))
        return shp_fail(err, n, "filter channels %lld x multiplier overflow", (long long)i);
    out->dims[0] = hwcm && (i < 0 || w->dims[ns + 1] < 0) ? -1 : o;
    out->dims[1] = hwcm ? 1 : i;
    out->sym[0] = out->sym[1] = NULL;
    for (int k = 0; k < ns; k++) {
        out->dims[2 + k] = w->dims[k];
        out->sym[2 + k]  = w->sym[k];
    }
    return 0;
}
