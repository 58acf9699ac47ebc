/* NonMaxSuppression cases and reference: corner boxes suppressed by IoU (ONNX's example),
 * centre boxes over two classes with a score threshold, equal scores (the lower index first),
 * no max_output_boxes_per_class (nothing selected), two batch elements and two classes, and
 * more rows than one pass keeps (random boxes, none suppressed: the count is known). The output's row count is the run's.
 * The reference picks the best remaining candidate again and again. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

static double iou_ref(const double *a, const double *b, bool centre)
{
    double ea[4], eb[4];                /* x0, x1, y0, y1 */
    const double *p[2] = { a, b };
    double *e[2] = { ea, eb };
    for (int k = 0; k < 2; k++) {
        if (centre) {
            e[k][0] = p[k][0] - p[k][2] / 2;
            e[k][1] = p[k][0] + p[k][2] / 2;
            e[k][2] = p[k][1] - p[k][3] / 2;
            e[k][3] = p[k][1] + p[k][3] / 2;
        } else {
            e[k][0] = fmin(p[k][1], p[k][3]);
            e[k][1] = fmax(p[k][1], p[k][3]);
            e[k][2] = fmin(p[k][0], p[k][2]);
            e[k][3] = fmax(p[k][0], p[k][2]);
        }
    }
    double w = fmin(ea[1], eb[1]) - fmax(ea[0], eb[0]), h = fmin(ea[3], eb[3]) - fmax(ea[2], eb[2]);
    if (w <= 0 || h <= 0)
        return 0;
    double inter = w * h;
    return inter / ((ea[1] - ea[0]) * (ea[3] - ea[2]) + (eb[1] - eb[0]) * (eb[3] - eb[2]) - inter);
}

static void ref_nms(const op_case *c, const tensor *in, tensor *out)
{
    int64_t B = in[0].dims[0], N = in[0].dims[1], C = in[1].dims[1];
    int64_t max_out = c->n_in > 2 ? in[2].i[0] : 0;
    double iou = c->n_in > 3 ? in[3].f[0] : 0;
    bool has_min = c->n_in > 4, centre = attr_i(c, "center_point_box", 0);
    size_t row = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t k = 0; k < C; k++) {
            const double *sc = in[1].f + (b * C + k) * N;
            bool done[64] = { false };
            int64_t kept[64], nk = 0;
            while (nk < max_out) {
                int64_t best = -1;
                for (int64_t i = 0; i < N; i++)
                    if (!done[i] && (!has_min || sc[i] > in[4].f[0]) &&
                        (best < 0 || sc[i] > sc[best]))
                        best = i;
                if (best < 0)
                    break;
                done[best] = true;
                bool keep = true;
                for (int64_t q = 0; q < nk && keep; q++)
                    keep = iou_ref(in[0].f + (b * N + best) * 4, in[0].f + (b * N + kept[q]) * 4,
                                   centre) <= iou;
                if (!keep)
                    continue;
                kept[nk++] = best;
                out->i[row * 3] = b;
                out->i[row * 3 + 1] = k;
                out->i[row * 3 + 2] = best;
                row++;
            }
        }
}

#define k_boxes_iou   VF(0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, \
                         0, 10.1f, 1, 11.1f, 0, 100, 1, 101)
#define k_scores_iou  VF(0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f)
#define k_boxes_ctr   VF(0.5f, 0.5f, 1, 1, 0.55f, 0.5f, 1, 1, 3, 3, 1, 1, 3.2f, 3, 1, 1)
#define k_scores_ctr  VF(0.9f, 0.8f, 0.7f, 0.6f, 0.1f, 0.95f, 0.3f, 0.85f)
#define k_boxes_apart VF(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5)
#define k_scores_tie  VF(0.5f, 0.7f, 0.5f)
#define k_boxes_batches  VF(0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f, \
                            0, 0, 1, 1, 5, 5, 6, 6, 0, 0.05f, 1, 1.05f, 5, 5.1f, 6, 6.1f)
#define k_scores_batches VF(0.9f, 0.8f, 0.7f, 0.6f, 0.6f, 0.7f, 0.8f, 0.9f, \
                            0.5f, 0.9f, 0.6f, 0.8f, 0.9f, 0.5f, 0.8f, 0.6f)

static const op_case k_cases[] = {
    { "nms_corners_iou", "NonMaxSuppression", NULL, 5, { FEDF(F32, k_boxes_iou, 1, 6, 4),
      FEDF(F32, k_scores_iou, 1, 1, 6), FEDS(INT64, 3), FEDSF(F32, 0.5f), FEDSF(F32, 0) },
      NO_ATTR, OUTT(INT64, 3, 3), ref_nms, .runtime_shape = true },
    { "nms_centre_classes_threshold", "NonMaxSuppression", NULL, 5,
      { FEDF(F32, k_boxes_ctr, 1, 4, 4), FEDF(F32, k_scores_ctr, 1, 2, 4), FEDS(INT64, 10),
        FEDSF(F32, 0.5f), FEDSF(F32, 0.2f) }, { AI("center_point_box", 1) },
      OUTT(INT64, 4, 3), ref_nms, .runtime_shape = true },
    { "nms_equal_scores_lower_index_first", "NonMaxSuppression", NULL, 4,
      { FEDF(F32, k_boxes_apart, 1, 3, 4), FEDF(F32, k_scores_tie, 1, 1, 3), FEDS(INT64, 2),
        FEDSF(F32, 0.5f) }, NO_ATTR, OUTT(INT64, 2, 3), ref_nms, .runtime_shape = true },
    { "nms_no_max_output", "NonMaxSuppression", NULL, 2, { FEDF(F32, k_boxes_apart, 1, 3, 4),
      FEDF(F32, k_scores_tie, 1, 1, 3) }, NO_ATTR, OUTT(INT64, 0, 3), ref_nms,
      .runtime_shape = true },
    /* two batch elements whose overlapping pairs differ ((0,1), (2,3) in the first; (0,2),
     * (1,3) in the second), two classes: 2 boxes kept per batch element and class */
    { "nms_batches_classes", "NonMaxSuppression", NULL, 4,
      { FEDF(F32, k_boxes_batches, 2, 4, 4), FEDF(F32, k_scores_batches, 2, 2, 4), FEDS(INT64, 4),
        FEDSF(F32, 0.5f) }, NO_ATTR, OUTT(INT64, 8, 3), ref_nms, .runtime_shape = true },
    /* IoU threshold 1 keeps all 1200 x 60 boxes: 72,000 rows, past what one pass keeps in
     * scratch (NMS_ONE_PASS_ROWS), so the second pass writes them */
    { "nms_rows_past_one_pass", "NonMaxSuppression", NULL, 4,
      { FEDR(F32, 0, 10, 1, 60, 4), FEDR(F32, 0, 1, 1, 1200, 60), FEDS(INT64, 60), FEDSF(F32, 1.0f) },
      NO_ATTR, OUTT(INT64, 72000, 3), ref_nms, .runtime_shape = true },
};

const case_table ops_nms_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
