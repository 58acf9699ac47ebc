/* Internal to the core: building and freeing one plan (model.c owns the cache). */
#ifndef BD_PLAN_BUILD_H
#define BD_PLAN_BUILD_H

#include "model.h"

/* Specialise MODEL_GRAPH to INPUT_SHAPES (one per graph input), infer static shapes, drop
 * nodes folded to constants, run the rewrite passes (fusion needs static shapes), annotate every node with a backend, partition into steps,
 * compile each step's kernel and lay out the arena of boundary tensors. MODEL_GRAPH must
 * outlive the plan. */
int  bd_plan_build(const bd_graph *model_graph, const bd_shape *input_shapes, int threads,
                   bd_plan **out, bd_error *err);
void bd_plan_destroy(bd_plan *p);        /* NULL is allowed */
/* True when P was built for exactly these input shapes. */
bool bd_plan_matches(const bd_plan *p, const bd_shape *input_shapes, size_t n);

#endif
