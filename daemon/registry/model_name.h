/* Internal to registry/: what a model may be called (model_name.c): the repository's folder
 * names, the names a load or an upload may write under. */
#ifndef BD_DAEMON_REGISTRY_MODEL_NAME_H
#define BD_DAEMON_REGISTRY_MODEL_NAME_H

#include "core/error.h"

/* Model names: [A-Za-z0-9_.-]{1,128}, not starting with '.'. */
int  model_name_check(const char *name, bd_error *err);

#endif
