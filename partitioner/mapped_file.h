/* A model file mapped read-only into memory, for importers that reference weights in
 * place (the graph then adopts the mapping: bd_graph_adopt_mapping). */
#ifndef BRAID_MAPPED_FILE_H
#define BRAID_MAPPED_FILE_H

#include <stddef.h>

#include "partitioner/error.h"

/* Map the regular file PATH (private, read-only) into *ADDR, *LEN; the caller munmaps it
 * (or hands it to a graph). Errors name PATH: BD_ENOTFOUND if it does not exist, BD_EIO if
 * it cannot be opened, is not a regular file or cannot be mapped, BD_EMODEL "the WHAT is
 * empty (0 bytes)" for an empty file (WHAT: "model", "GraphDef"). */
int bd_map_file(const char *path, const char *what, void **addr, size_t *len, bd_error *err);

#endif
