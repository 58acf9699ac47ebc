/* Window geometry of Conv, MaxPool and AveragePool: kernel, strides, dilations and the
 * explicit pads that auto_pad (SAME_UPPER / SAME_LOWER / VALID) and ceil_mode imply.
 * Shape inference uses it for output dims; backends use it so that the pads they compile
 * agree with the shapes inference produced. */
#ifndef BD_PARTITIONER_SHAPE_SHAPE_CONV_H
#define BD_PARTITIONER_SHAPE_SHAPE_CONV_H

#include <stdbool.h>
#include <stdint.h>

#include "core/ir/graph.h"

#define BD_MAX_SPATIAL (BD_MAX_RANK - 2)

typedef struct bd_window {
    int     n_spatial;                      /* spatial dims (rank of X minus 2)          */
    int64_t kernel[BD_MAX_SPATIAL];
    int64_t strides[BD_MAX_SPATIAL];
    int64_t dilations[BD_MAX_SPATIAL];
    int64_t pad_begin[BD_MAX_SPATIAL];      /* explicit pads, auto_pad resolved          */
    int64_t pad_end[BD_MAX_SPATIAL];        /* ceil_mode extra padding not included      */
    int64_t out[BD_MAX_SPATIAL];            /* output spatial dims, -1 when input dynamic */
    bool    ceil_mode;
} bd_window;

/* Resolve the window of Conv/MaxPool/AveragePool node N for input shape X (rank >= 3) and,
 * for Conv, weight shape W (NULL for pools: kernel_shape comes from the attribute). Pads of
 * a dynamic spatial dim under SAME_* are left 0 and its output -1. BD_EMODEL naming N when
 * attributes are malformed (wrong lengths, strides < 1, negative pads, unknown auto_pad) or
 * the window does not fit the padded input. */
int bd_window_resolve(const bd_node *n, const bd_shape *x, const bd_shape *w,
                      bd_window *out, bd_error *err);

#endif
