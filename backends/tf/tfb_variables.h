/* A SavedModel's variables read by TensorFlow itself: the TensorFlow engine's
 * read_variables() hook (core/backend.h). Internal to backends/tf.
 *
 * TensorFlow loads the SavedModel (TF_LoadSessionFromSavedModel with the given tag, which
 * restores the variables from variables/ and rejects what it finds malformed); a TF2
 * resource variable (VarHandleOp) is read through a ReadVariableOp added to the loaded
 * graph, a TF1 VariableV2 is fetched directly; one TF_SessionRun reads them all. A handle the
 * restore left uninitialized (VarIsInitializedOp) that has a restored copy
 * (bd_saved_variable.restored) is read from the copy. The session is closed before returning:
 * nothing stays loaded. TensorFlow's refusal is BD_EINVAL with its message; no TensorFlow is
 * BD_EUNSUPPORTED saying how to install it. */
#ifndef BD_BACKENDS_TF_TFB_VARIABLES_H
#define BD_BACKENDS_TF_TFB_VARIABLES_H

#include <stddef.h>

#include "core/backend.h"

int tfb_read_variables(const char *dir, const char *tag, bd_saved_variable *vars, size_t n,
                       bd_error *err);

#endif
