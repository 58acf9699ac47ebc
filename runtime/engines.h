/* The backends braid knows, in annotation priority order (the first whose supports()
 * accepts a node gets it): the one engine of kind BD_ENGINE_FAST_PATH first, then any native
 * engine, then the fallback engines (tests/runtime/test_engines.c holds the table to this).
 * What an engine is comes from its kind, never from its place here. Adding a backend = one
 * line in engines.c. */
#ifndef BD_RUNTIME_ENGINES_H
#define BD_RUNTIME_ENGINES_H

#include <stddef.h>

#include "core/backend.h"

/* The table of backends; *N receives its length. Never NULL. */
const bd_backend *const *bd_backends(size_t *n);
/* braid's control flow (If, Loop, Scan: runtime/control.c, which documents it), registered in
 * the table after the native engine. Declared here, not in control.h: the table names it, and
 * control.c plans (plan.c reads the table), so control.h including plans would loop. */
extern const bd_backend bd_control_backend;
/* braid's regions of run-time shapes (runtime/dynamic_region.c, which documents it): nodes
 * reading a value whose shape only the run tells, run node by node with per-shape plans.
 * After control flow in the table, before the fallbacks. Declared here for the same reason. */
extern const bd_backend bd_dynamic_backend;
/* The backend named NAME ("dnnl"), or NULL. */
const bd_backend *bd_backend_find(const char *name);
/* The engine of kind BD_ENGINE_FAST_PATH (the composites are made for it), or NULL. */
const bd_backend *bd_engines_fast_path(void);
/* The op types (comma-separated) a framework fallback runs faster than the fast path on this
 * CPU (measured): annotation offers them to the fallbacks first (prefer_fallback_ops). */
const char *bd_engines_prefer_fallback_ops(void);
/* Configure the engine named NAME through its configure() hook (core/backend.h); 0 when it
 * has none. BD_EINVAL for an unknown name; otherwise the engine's own error. */
int bd_engines_configure(const char *name, const bd_engine_config *cfg, bd_error *err);

#endif
