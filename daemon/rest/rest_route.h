/* The REST port's router: an HTTP method and a request path turned into the operation braidd
 * will execute and its arguments, once, before anything else. The role check (operation.h)
 * and the handler both take this result, so a request is authorized on exactly what it
 * executes (docs/security.md, "Authorization").
 *
 * Paths must be canonical. The path is split at '/', each segment percent-decoded; a path
 * with an empty segment ("//", a trailing '/'), a "." or ".." segment, or a segment that
 * decodes to '/', a NUL or another control character is refused whole (400): no second
 * spelling reaches a handler. Segments are case-sensitive; the query string is not part of
 * the path (the HTTP server splits it off) and selects nothing.
 *
 *   GET  /v2/health/live | /v2/health/ready              ServerLive / ServerReady (open)
 *   GET  /v2                                              ServerMetadata
 *   GET  /v2/models/NAME[/versions/V]                     ModelMetadata
 *   GET  /v2/models/NAME[/versions/V]/ready|config|stats  ModelReady / ModelConfig / ModelStatistics
 *   GET  /v2/models/stats                                 ModelStatistics, every model
 *   POST /v2/models/NAME[/versions/V]/infer               ModelInfer
 *   POST /v2/repository/index                             RepositoryIndex
 *   POST /v2/repository/models/NAME/load | unload         RepositoryModelLoad / Unload (admin)
 *   GET  /v2/systemsharedmemory[/region/NAME]/status      SystemSharedMemoryStatus
 *   POST /v2/systemsharedmemory/region/NAME/register      SystemSharedMemoryRegister
 *   POST /v2/systemsharedmemory[/region/NAME]/unregister  SystemSharedMemoryUnregister
 *   any  /v2/cudasharedmemory/...                         answered 501
 * (HEAD wherever GET is.) Pure: no I/O, no allocation; any thread. */
#ifndef BD_DAEMON_REST_REST_ROUTE_H
#define BD_DAEMON_REST_REST_ROUTE_H

#include "daemon/security/operation.h"

#define BD_REST_PATH_MAX 8192          /* decoded bytes of a path; longer is refused */

typedef struct bd_rest_route {
    bd_op       op;                 /* BD_OP_NONE: nothing runs; STATUS and MESSAGE say why */
    int         status;             /* 0 when OP runs, else the HTTP status to answer */
    const char *message;            /* for STATUS (a constant string) */
    const char *allow;              /* for 405: the methods the path takes */
    const char *model;              /* model operations, load/unload: the model's name */
    const char *version;            /* "" when not given */
    const char *region;             /* shared memory: the region's name, "" = every region */
    char        buf[BD_REST_PATH_MAX + 16];   /* the decoded segments the pointers point into */
} bd_rest_route;

/* Route METHOD (http_parser's enum http_method) on PATH (NUL-terminated, without the query)
 * into *OUT. Always fills *OUT: OUT->op is the operation to run, or BD_OP_NONE with
 * OUT->status 400 (not canonical), 404 (no such route) or 405 (method not allowed). */
void bd_rest_route_resolve(int method, const char *path, bd_rest_route *out);

#endif
