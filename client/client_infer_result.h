/* The braid_infer_result object (private): outputs copied out of the response into
 * aligned buffers, reference counted so DLManagedTensors can outlive the caller's handle. */
#ifndef BD_CLIENT_CLIENT_INFER_RESULT_H
#define BD_CLIENT_CLIENT_INFER_RESULT_H

#include "client/client_internal.h"
#include "proto/inference.pb.h"

/* Build *OUT from RESP (whose tensor spans must still be valid). Returns BRAID_E_PROTOCOL
 * when RESP's outputs and payloads do not agree, BRAID_E_NOMEM, or BRAID_OK. */
braid_status bc_result_from_response(const inference_ModelInferResponse *resp, braid_infer_result **out,
                                     char *err, size_t errlen);

#endif
