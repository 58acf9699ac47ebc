/* Load-once bookkeeping for the fallback engines' shared libraries (see dynlib.h). */
#include "core/dynlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bd_dynlib_configure(bd_dynlib_once *o, const char *loaded_path, const char *library_path,
                        int threads, bd_error *err)
{
    pthread_mutex_lock(&o->lock);
    o->threads = threads;
    int rc = 0;
    if (o->loaded && library_path && strcmp(library_path, loaded_path) != 0) {
        rc = bd_error_set(err, BD_EBUSY, "%s is already loaded from '%s'; a process loads it "
                          "once (restart to use '%s')", o->label, loaded_path, library_path);
    } else if (!o->loaded) {
        free(o->configured_path);
        o->configured_path = library_path ? strdup(library_path) : NULL;
        if (library_path && !o->configured_path)
            rc = bd_error_set(err, BD_ENOMEM, "out of memory");
        o->attempted = false;       /* the next use tries again with the new setting */
    }
    pthread_mutex_unlock(&o->lock);
    return rc;
}

int bd_dynlib_threads(bd_dynlib_once *o)
{
    pthread_mutex_lock(&o->lock);
    int n = o->threads;
    pthread_mutex_unlock(&o->lock);
    return n;
}

const char *bd_dynlib_explicit_path(const bd_dynlib_once *o, const char *env)
{
    const char *p = o->configured_path ? o->configured_path : getenv(env);
    return p && p[0] ? p : NULL;
}

bool bd_dynlib_get(bd_dynlib_once *o, bool (*load)(bd_dynlib_once *o), char *why, size_t why_len)
{
    pthread_mutex_lock(&o->lock);
    if (!o->loaded && !o->attempted) {
        o->attempted = true;
        o->loaded = load(o);
    }
    bool ok = o->loaded;
    if (!ok && why && why_len)
        snprintf(why, why_len, "%s", o->failure);
    pthread_mutex_unlock(&o->lock);
    return ok;
}
