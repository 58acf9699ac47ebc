/* The backends braid knows, in annotation priority order (the first whose supports()
 * accepts a node gets it). Adding a backend = one line in registry.c. */
#ifndef BD_REGISTRY_H
#define BD_REGISTRY_H

#include <stddef.h>

#include "backend.h"

/* The table of backends; *N receives its length. Never NULL. */
const bd_backend *const *bd_backends(size_t *n);
/* The backend named NAME ("dnnl"), or NULL. */
const bd_backend *bd_backend_find(const char *name);

#endif
