/* The gRPC port's encoding of an answer: a ModelInferResponse encoded without nanopb, for
 * the shape every plain inference answers with: model name, version and id, outputs with
 * name, datatype and shape, and their raw bytes. nanopb walks its field descriptors twice per output (a sizing pass per submessage)
 * and once more to size the whole; here sizing is arithmetic and writing one pass — a few
 * thousand instructions less on a microsecond model's call. The bytes are nanopb's
 * (tests/daemon/test_infer_response.c compares them); anything else (parameters, typed
 * contents) is left to nanopb. */
#ifndef BD_DAEMON_GRPC_RPC_INFER_RESPONSE_H
#define BD_DAEMON_GRPC_RPC_INFER_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/inference.pb.h"

/* RSP's exact encoded size into *SIZE (raw_output_contents: its borrowed span list), or
 * false when RSP has a field this encoder does not write (response or output parameters,
 * output contents): encode it with nanopb then. Any thread. */
bool bd_infer_response_size(const inference_ModelInferResponse *rsp, size_t *size);

/* Write RSP (for which bd_infer_response_size said true) into DST: exactly that many
 * bytes. Any thread. */
void bd_infer_response_write(const inference_ModelInferResponse *rsp, uint8_t *dst);

#endif
