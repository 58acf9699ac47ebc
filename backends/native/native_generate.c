/* Tensors made from shapes: Shape, Size, Range, ConstantOfShape, EyeLike. */
#include "backends/native/native_internal.h"

const nv_op nv_generate_ops[] = { { NULL, NULL, NULL } };
const size_t nv_generate_n = 0;
