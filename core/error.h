/* braid's one error type: a negative code from bd_status plus a message the caller owns.
 *
 * Every fallible function returns 0 or a negative BD_E* code and, on failure, fills a
 * caller-provided bd_error (which may be NULL when the caller does not want the text).
 * There is no global "last error": errors are values, safe across threads. */
#ifndef BD_CORE_ERROR_H
#define BD_CORE_ERROR_H

#include <stddef.h>

typedef enum bd_status {
    BD_OK         = 0,
    BD_EINVAL     = -1,   /* the caller's input is wrong (bad tensor, bad argument)       */
    BD_EMODEL     = -2,   /* the model file is malformed or violates the IR's invariants  */
    BD_EUNSUPPORTED = -3, /* valid, but braid cannot run it (op, attribute, dtype)       */
    BD_ENOMEM     = -4,   /* an allocation failed                                         */
    BD_EIO        = -5,   /* a file could not be opened, read, mapped or written          */
    BD_EBACKEND   = -6,   /* a backend library failed while compiling or running          */
    BD_ENOTFOUND  = -7,   /* a named thing (model, tensor, library) does not exist        */
    BD_EBUSY      = -8,   /* a queue or limit is full; retry later                        */
    BD_ETIMEDOUT  = -9,   /* a deadline passed                                            */
    BD_ECANCELLED = -10,  /* the caller gave up                                           */
    BD_EUNAVAIL   = -11,  /* exists but is not ready                                      */
    BD_EEXIST     = -12,  /* a named thing to create exists already                       */
} bd_status;

#define BD_ERROR_MSG_MAX 512

typedef struct bd_error {
    int  code;                      /* 0 or a bd_status */
    char msg[BD_ERROR_MSG_MAX];     /* NUL-terminated, empty when code == 0 */
} bd_error;

/* Record CODE and a printf-style message in ERR (ERR may be NULL). Returns CODE, so a
 * failing path can say `return bd_error_set(err, BD_EINVAL, "...")`. */
int bd_error_set(bd_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix ERR's existing message with a printf-style context ("model 'x': "). Returns
 * ERR's code. Does nothing but return 0 when ERR is NULL or holds no error. */
int bd_error_prefix(bd_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reset ERR to "no error" (ERR may be NULL). */
void bd_error_clear(bd_error *err);

/* A short stable name for CODE ("EINVAL", "EMODEL", ...). */
const char *bd_status_name(int code);

#endif
