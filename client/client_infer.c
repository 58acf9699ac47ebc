/* ModelInfer: build the request (tensor bytes appended as borrowed slices, not copied),
 * run it, and turn the response into a braid_infer_result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/slice.h>

#include "client/client_infer_result.h"
#include "client/client_internal.h"
#include "proto/inference.pb.h"

#define MAX_TENSORS 64

/* Elements of SHAPE, or -1 when a dim is negative or the product overflows. */
static int64_t numel(const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0 || (shape[d] && n > INT64_MAX / shape[d]))
            return -1;
        n *= shape[d];
    }
    return n;
}

/* Check IN before anything is sent, so a caller's mistake is named here, not by the server. */
static braid_status check_input(const braid_tensor *in, size_t i, char *err, size_t errlen)
{
    if (!in->name || !*in->name)
        return bc_fail(err, errlen, BRAID_E_ARG, "input %zu has no name", i);
    if (!in->datatype)
        return bc_fail(err, errlen, BRAID_E_ARG, "input '%s' has no datatype", in->name);
    if (in->ndim < 0 || in->ndim > 32 || (in->ndim && !in->shape))
        return bc_fail(err, errlen, BRAID_E_ARG, "input '%s': bad rank %d", in->name, in->ndim);
    if (in->nbytes && !in->data)
        return bc_fail(err, errlen, BRAID_E_ARG, "input '%s': data is NULL", in->name);
    int64_t n = numel(in->shape, in->ndim);
    if (n < 0)
        return bc_fail(err, errlen, BRAID_E_ARG, "input '%s': bad shape (negative or too large)", in->name);
    if (strcmp(in->datatype, "BYTES") == 0)
        return BRAID_OK;
    size_t esize = braid_datatype_size(in->datatype);
    if (!esize)
        return bc_fail(err, errlen, BRAID_E_ARG,
                       "input '%s': unknown datatype '%s' (expected BOOL, UINT8..UINT64, INT8..INT64, FP16, BF16, FP32, FP64 or BYTES)",
                       in->name, in->datatype);
    if ((uint64_t)n * esize != in->nbytes)
        return bc_fail(err, errlen, BRAID_E_ARG, "input '%s': %s with %lld elements needs %llu bytes, got %zu",
                       in->name, in->datatype, (long long)n, (unsigned long long)n * esize, in->nbytes);
    return BRAID_OK;
}

braid_status braid_model_infer(braid_client *c, const braid_infer_request *req,
                               braid_infer_result **out, char *err, size_t errlen)
{
    if (!c || !req || !out || !req->model || !*req->model)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_infer: client, request with a model name and OUT are required");
    if (req->n_inputs > MAX_TENSORS || req->n_outputs > MAX_TENSORS)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_infer: at most %d inputs and %d requested outputs",
                       MAX_TENSORS, MAX_TENSORS);
    if ((req->n_inputs && !req->inputs) || (req->n_outputs && !req->outputs))
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_infer: inputs/outputs array is NULL");
    for (size_t i = 0; i < req->n_inputs; i++) {
        braid_status rc = check_input(&req->inputs[i], i, err, errlen);
        if (rc)
            return rc;
    }

    inference_ModelInferRequest_InferInputTensor ins[MAX_TENSORS];
    inference_ModelInferRequest_InferRequestedOutputTensor outs[MAX_TENSORS];
    memset(ins, 0, sizeof ins);
    memset(outs, 0, sizeof outs);
    /* raw_input_contents[i]: a small copied header slice, then the caller's bytes, borrowed
     * (bc_unary returns only after the call is gone). */
    grpc_slice tail[2 * MAX_TENSORS];
    size_t n_tail = 0;
    for (size_t i = 0; i < req->n_inputs; i++) {
        const braid_tensor *in = &req->inputs[i];
        ins[i].name = (char *)in->name;
        ins[i].datatype = (char *)in->datatype;
        ins[i].shape_count = (pb_size_t)in->ndim;
        ins[i].shape = (int64_t *)in->shape;
        uint8_t hdr[BD_WIRE_HEADER_MAX];
        size_t hlen = bd_wire_field_header(hdr, inference_ModelInferRequest_raw_input_contents_tag, in->nbytes);
        tail[n_tail++] = grpc_slice_from_copied_buffer((const char *)hdr, hlen);
        if (in->nbytes)
            tail[n_tail++] = grpc_slice_from_static_buffer(in->data, in->nbytes);
    }
    for (size_t i = 0; i < req->n_outputs; i++) {
        if (!req->outputs[i] || !*req->outputs[i]) {
            for (size_t t = 0; t < n_tail; t++)
                grpc_slice_unref(tail[t]);
            return bc_fail(err, errlen, BRAID_E_ARG, "requested output %zu has no name", i);
        }
        outs[i].name = (char *)req->outputs[i];
    }
    inference_ModelInferRequest msg = {
        .model_name = (char *)req->model, .model_version = (char *)req->version, .id = (char *)req->id,
        .inputs_count = (pb_size_t)req->n_inputs, .inputs = req->n_inputs ? ins : NULL,
        .outputs_count = (pb_size_t)req->n_outputs, .outputs = req->n_outputs ? outs : NULL,
    };
    bc_request r = { .fields = inference_ModelInferRequest_fields, .msg = &msg, .tail = tail, .n_tail = n_tail };
    inference_ModelInferResponse resp = inference_ModelInferResponse_init_zero;
    bc_reply reply;
    braid_status rc = bc_unary(c, BC_MODEL_INFER, &r, inference_ModelInferResponse_fields, &resp, &reply,
                               err, errlen);
    for (size_t t = 0; t < n_tail; t++)
        grpc_slice_unref(tail[t]);
    if (rc == BRAID_OK) {
        rc = bc_result_from_response(&resp, out, err, errlen);
        bc_reply_free(&reply);
    }
    pb_release(inference_ModelInferResponse_fields, &resp);
    return rc;
}

braid_status braid_model_infer_dl(braid_client *c, const char *model, const char *version,
                                  const char *const *names, const DLTensor *inputs, size_t n,
                                  braid_infer_result **out, char *err, size_t errlen)
{
    if (n > MAX_TENSORS)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_infer_dl: at most %d inputs", MAX_TENSORS);
    if (n && (!names || !inputs))
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_infer_dl: NAMES and INPUTS are required");
    braid_tensor t[MAX_TENSORS];
    for (size_t i = 0; i < n; i++) {
        braid_status rc = braid_tensor_from_dl(names[i], &inputs[i], &t[i], err, errlen);
        if (rc)
            return rc;
    }
    braid_infer_request req = { .model = model, .version = version, .inputs = t, .n_inputs = n };
    return braid_model_infer(c, &req, out, err, errlen);
}
