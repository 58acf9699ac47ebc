/* Reductions and scans: Reduce*, ArgMax/ArgMin, CumSum, TopK, Softmax family. */
#include "backends/native/native_internal.h"

const nv_op nv_reduce_ops[] = { { NULL, NULL, NULL } };
const size_t nv_reduce_n = 0;
