/* NonMaxSuppression: per batch element and class, the boxes whose score is above
 * score_threshold (when given), best first (equal scores by lower index), each kept unless it
 * overlaps a kept one by an IoU above iou_threshold, at most max_output_boxes_per_class (0 when
 * absent) of them. The output, [selected, 3] INT64 rows (batch, class, box) in that order, is
 * shaped by the run: one pass keeps the rows in scratch (up to NMS_ONE_PASS_ROWS of them) and
 * copies them out once their count is known; past that, a second pass writes them. Boxes are
 * corners ([y1, x1, y2, x2], in either order) or centres ([x, y, w, h], center_point_box 1);
 * IoU is computed in float as ONNX's reference does, so thresholds split alike. A NaN score
 * ranks below every number. */
#include <math.h>
#include <string.h>

#include "backends/native/native_internal.h"

static bool scalar_ok(const bd_value *v, int dtype)
{
    return !v || (nv_value_ok(v, NV_DT(dtype)) && v->shape.rank <= 1 &&
                  nv_shape_numel(&v->shape) <= 1);
}

static bool nms_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 2 || n->n_inputs > 5 || !n->inputs[0] || !n->inputs[1] || n->n_outputs != 1)
        return nv_why(why, len, "NonMaxSuppression: expects boxes, scores, three optional "
                      "scalars and one output");
    const bd_value *b = n->inputs[0], *s = n->inputs[1], *y = n->outputs[0];
    if (!nv_value_ok(b, NV_DT(BD_DT_FLOAT)) || !nv_value_ok(s, NV_DT(BD_DT_FLOAT)) ||
        b->shape.rank != 3 || b->shape.dims[2] != 4 || s->shape.rank != 3 ||
        s->shape.dims[0] != b->shape.dims[0] || s->shape.dims[2] != b->shape.dims[1])
        return nv_why(why, len, "NonMaxSuppression: FLOAT boxes [B, N, 4] and scores [B, C, N]");
    if (!scalar_ok(bd_node_input(n, 2), BD_DT_INT64) || !scalar_ok(bd_node_input(n, 3), BD_DT_FLOAT) ||
        !scalar_ok(bd_node_input(n, 4), BD_DT_FLOAT))
        return nv_why(why, len, "NonMaxSuppression: max_output_boxes_per_class must be one "
                      "INT64, the thresholds one FLOAT each");
    if (!nv_output_ok(y, NV_DT(BD_DT_INT64)) || (y->shape.rank >= 0 && y->shape.rank != 2) ||
        (y->shape.rank == 2 && y->shape.dims[1] >= 0 && y->shape.dims[1] != 3))
        return nv_why(why, len, "NonMaxSuppression: the output must be INT64 [?, 3]");
    int64_t cpb = bd_node_attr_int(n, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        return nv_why(why, len, "NonMaxSuppression: center_point_box %lld", (long long)cpb);
    return true;
}

/* A box as its extent and area, computed once per box: the pair test runs O(boxes x kept)
 * times. NAN: an extent is NaN, whose comparisons the pair test makes as fmaxf/fminf do. */
typedef struct extent {
    float x0, x1, y0, y1, area;
    bool  nan;
} extent;

/* Box I of BOXES as x_min, x_max, y_min, y_max and its area. */
static extent box_extent(const float *boxes, int64_t i, bool centre)
{
    const float *b = boxes + i * 4;
    extent e;
    if (centre) {
        float hw = b[2] / 2, hh = b[3] / 2;
        e.x0 = b[0] - hw;
        e.x1 = b[0] + hw;
        e.y0 = b[1] - hh;
        e.y1 = b[1] + hh;
    } else {
        e.x0 = fminf(b[1], b[3]);
        e.x1 = fmaxf(b[1], b[3]);
        e.y0 = fminf(b[0], b[2]);
        e.y1 = fmaxf(b[0], b[2]);
    }
    e.area = (e.x1 - e.x0) * (e.y1 - e.y0);
    e.nan = isnan(e.x0) || isnan(e.x1) || isnan(e.y0) || isnan(e.y1);
    return e;
}

/* fmaxf / fminf where neither operand is NaN: plain comparisons the compiler inlines. */
static inline float max_num(float a, float b) { return a > b ? a : b; }
static inline float min_num(float a, float b) { return a < b ? a : b; }

/* Boxes A and B overlap by an IoU above THRESHOLD. */
static bool suppresses(const extent *a, const extent *b, float threshold)
{
    float x0, x1, y0, y1;
    if (a->nan || b->nan) {
        x0 = fmaxf(a->x0, b->x0);
        x1 = fminf(a->x1, b->x1);
        y0 = fmaxf(a->y0, b->y0);
        y1 = fminf(a->y1, b->y1);
    } else {
        x0 = max_num(a->x0, b->x0);
        x1 = min_num(a->x1, b->x1);
        y0 = max_num(a->y0, b->y0);
        y1 = min_num(a->y1, b->y1);
    }
    if (!(x1 > x0) || !(y1 > y0))
        return false;
    float inter = (x1 - x0) * (y1 - y0);
    float uni = a->area + b->area - inter;
    if (!(inter > 0) || !(a->area > 0) || !(b->area > 0) || !(uni > 0))
        return false;
    return inter / uni > threshold;
}

/* Candidate A ranks before B: a higher score, or an equal one and a lower index. */
static bool ranks_before(const float *sc, int64_t a, int64_t b)
{
    float x = sc[a], y = sc[b];
    if (x != y && !(isnan(x) && isnan(y)))
        return isnan(y) || (!isnan(x) && x > y);
    return a < b;
}

static void sift_down(const float *sc, int64_t *h, int64_t size, int64_t i)
{
    for (;;) {                          /* a heap whose root ranks last: sorted in place */
        int64_t worst = i, l = 2 * i + 1, r = l + 1;
        if (l < size && ranks_before(sc, h[worst], h[l]))
            worst = l;
        if (r < size && ranks_before(sc, h[worst], h[r]))
            worst = r;
        if (worst == i)
            return;
        int64_t t = h[i];
        h[i] = h[worst];
        h[worst] = t;
        i = worst;
    }
}

/* The selections of one class (scores SC over N boxes) into SEL (best first): their count. */
static int64_t select_class(const extent *boxes, const float *sc, int64_t n, int64_t max_out,
                            float iou, const float *score_min, int64_t *order, int64_t *sel)
{
    int64_t m = 0, kept = 0;
    if (max_out == 0)
        return 0;
    for (int64_t i = 0; i < n; i++)
        if (!score_min || sc[i] > *score_min)
            order[m++] = i;
    for (int64_t i = m / 2 - 1; i >= 0; i--)
        sift_down(sc, order, m, i);
    for (int64_t end = m - 1; end > 0; end--) {   /* heapsort: the worst go last */
        int64_t t = order[0];
        order[0] = order[end];
        order[end] = t;
        sift_down(sc, order, end, 0);
    }
    for (int64_t k = 0; k < m && kept < max_out; k++) {
        bool keep = true;
        for (int64_t q = 0; q < kept && keep; q++)
            keep = !suppresses(&boxes[order[k]], &boxes[sel[q]], iou);
        if (keep)
            sel[kept++] = order[k];
    }
    return kept;
}

static int nms_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                   bd_error *err)
{
    const nv_tensor *bx = &in[0], *sc = &in[1];
    int64_t nb = bx->dims[0], nbox = bx->dims[1], nc = sc->dims[1], max_out = 0;
    float iou = 0, smin = 0;
    bool has_smin = false;
    if (s->n_in > 2 && s->in[2] >= 0 && in[2].numel) {
        int64_t count = nv_run_ints(&in[2], &max_out, 1, "max_output_boxes_per_class", err);
        if (count < 0)
            return (int)count;
        max_out = max_out < 0 ? 0 : max_out;
    }
    if (s->n_in > 3 && s->in[3] >= 0 && in[3].numel)
        iou = *(const float *)in[3].data;
    if (s->n_in > 4 && s->in[4] >= 0 && in[4].numel) {
        smin = *(const float *)in[4].data;
        has_smin = true;
    }
    bool centre = s->ip[0];
    /* Scratch: one class's order and selections, one batch element's extents, then what room
     * is left for every selection, so that one pass is enough when they fit (the output's
     * row count must be known before its first row is written; else a second pass). */
    int64_t *order = nv_scratch(env), *sel = order + nbox, total = 0;
    extent *ext = (extent *)(sel + nbox);
    int64_t *rows = (int64_t *)(ext + nbox), room = s->ip[1];
    const float *boxes = bx->data, *scores = sc->data;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            int64_t dims[2] = { total, 3 };
            int rc = nv_output_shape(env, s, out, 0, 2, dims, err);
            if (rc)
                return rc;
            if (total <= room) {       /* every row is in ROWS: written, done */
                if (total)
                    memcpy(out[0].data, rows, (size_t)total * 3 * sizeof *rows);
                return 0;
            }
        }
        int64_t row = 0;
        for (int64_t b = 0; b < nb; b++) {
            for (int64_t i = 0; i < nbox; i++)
                ext[i] = box_extent(boxes + b * nbox * 4, i, centre);
            for (int64_t c = 0; c < nc; c++) {
                int64_t k = select_class(ext, scores + (b * nc + c) * nbox, nbox, max_out, iou,
                                         has_smin ? &smin : NULL, order, sel);
                int64_t *dst = pass == 1 ? out[0].data : rows;
                for (int64_t q = 0; q < k; q++, row++)
                    if (pass == 1 || row < room) {
                        int64_t *y = dst + row * 3;
                        y[0] = b;
                        y[1] = c;
                        y[2] = sel[q];
                    }
                total += pass == 0 ? k : 0;
            }
        }
    }
    return 0;
}

#define NMS_ONE_PASS_ROWS (1 << 16)    /* 1.5 MiB of rows */

static int nms_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = bd_node_attr_int(n, "center_point_box", 0) != 0;
    size_t nbox = (size_t)n->inputs[0]->shape.dims[1];
    /* room for every row in one pass up to NMS_ONE_PASS_ROWS (more: a second pass) */
    size_t all = (size_t)n->inputs[0]->shape.dims[0] * (size_t)n->inputs[1]->shape.dims[1] * nbox;
    s->ip[1] = (int64_t)(all < NMS_ONE_PASS_ROWS ? all : NMS_ONE_PASS_ROWS);
    s->scratch = 2 * nbox * sizeof(int64_t) + nbox * sizeof(extent) + (size_t)s->ip[1] * 3 * sizeof(int64_t);
    s->run = nms_run;
    return 0;
}

const nv_op nv_nms_ops[] = {
    { "NonMaxSuppression", nms_supports, nms_prepare },
};
const size_t nv_nms_n = sizeof nv_nms_ops / sizeof nv_nms_ops[0];
