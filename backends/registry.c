#include "registry.h"

#include <string.h>

#include "dnnl/dnnl_backend.h"
#include "ort/ort_backend.h"
#include "tf/tf_backend.h"

/* Annotation order: the fast path first, then the fallback engines. */
static const bd_backend *const table[] = {
    &bd_dnnl_backend,
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
