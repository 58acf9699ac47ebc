/* Indexing: Gather, GatherElements, GatherND, ScatterND, ScatterElements, OneHot, NonZero. */
#include "backends/native/native_internal.h"

const nv_op nv_index_ops[] = { { NULL, NULL, NULL } };
const size_t nv_index_n = 0;
