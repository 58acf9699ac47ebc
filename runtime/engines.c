#include "runtime/engines.h"

#include <string.h>

#include "backends/dnnl/dnnl_backend.h"
#include "backends/native/native_backend.h"
#include "backends/ort/ort_backend.h"
#include "backends/tf/tf_backend.h"

/* Annotation order: the fast path first, then braid's native kernels, then the fallback
 * engines (engines.h). */
static const bd_backend *const table[] = {
    &bd_dnnl_backend,
    &bd_native_backend,
    &bd_control_backend,
    &bd_dynamic_backend,
    &bd_ort_backend,
    &bd_tf_backend,
};

const bd_backend *const *bd_backends(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
}

const bd_backend *bd_backend_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i]->name, name) == 0)
            return table[i];
    return NULL;
}

const bd_backend *bd_engines_fast_path(void)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i]->kind == BD_ENGINE_FAST_PATH)
            return table[i];
    return NULL;
}

const char *bd_engines_prefer_fallback_ops(void)
{
    return bd_dnnl_slower_ops();
}

int bd_engines_configure(const char *name, const bd_engine_config *cfg, bd_error *err)
{
    const bd_backend *b = bd_backend_find(name);
    if (!b)
        return bd_error_set(err, BD_EINVAL, "no engine named '%s'", name);
    return b->configure ? b->configure(cfg, err) : 0;
}
