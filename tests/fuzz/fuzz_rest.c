/* Fuzz the REST infer path without a server (daemon/rest/rest_infer.h, rest_codec.h): the code
 * braidd runs on a POST .../infer body before anything reaches the gRPC method.
 *
 * Input: byte 0 picks the mode, the rest is the body.
 *   bit 0-1   0: no Inference-Header-Content-Length; 1: bytes 1-2 (little-endian) are its
 *             value; 2: the value is the decimal text up to the first NUL (then the body);
 *             3: as 0, but the body is gzip-inflated first (bounded at 1 MiB), as a
 *             Content-Encoding: gzip body is
 *   bit 2     binary outputs by default (binary_data_output) in the echoed response
 *
 * A body the parser accepts must encode a ModelInferRequest that braidd's own decoder
 * (bd_wire_decode with the request limits) accepts, with every raw input inside the body or
 * the converted copies; then the decoded inputs are echoed as a ModelInferResponse through
 * bd_rest_infer_response (JSON "data" for every datatype, binary outputs, BYTES parsing), so
 * both directions run on whatever the fuzzer finds. Deterministic, no I/O.
 * Seeds: tests/fuzz/corpus/rest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pb_decode.h>

#include "daemon/rest/rest_codec.h"
#include "daemon/rest/rest_infer.h"
#include "proto/inference.pb.h"
#include "proto/wire_span.h"

static void echo(const inference_ModelInferRequest *req, bool binary_all, const bd_rest_outputs *o)
{
    size_t n = req->inputs_count;
    inference_ModelInferResponse_InferOutputTensor *outs = calloc(n ? n : 1, sizeof *outs);
    bd_wire_span *spans = calloc(n ? n : 1, sizeof *spans);
    if (!outs || !spans)
        goto done;
    for (size_t i = 0; i < n; i++) {
        outs[i].name = req->inputs[i].name;
        outs[i].datatype = req->inputs[i].datatype;
        outs[i].shape = req->inputs[i].shape;
        outs[i].shape_count = req->inputs[i].shape_count;
        if (i < req->raw_input_contents.list.count)
            spans[i] = req->raw_input_contents.list.items[i];
    }
    inference_ModelInferResponse rsp = { .model_name = req->model_name, .id = req->id,
                                         .outputs_count = (pb_size_t)n, .outputs = outs };
    bd_wire_spans_borrow(&rsp.raw_output_contents, spans, n);
    bd_rest_outputs echo_outs = { .binary_all = binary_all, .n = o->n, .binary = o->binary,
                                .shm = o->shm };
    char *body = NULL;
    size_t len = 0, json_len = 0;
    bd_error err = {0};
    if (bd_rest_infer_response(&rsp, &echo_outs, 1u << 24, &body, &len, &json_len, &err) == 0) {
        if (json_len > len)
            abort();
        free(body);
    }
done:
    free(outs);
    free(spans);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int mode = data[0] & 3;
    bool binary_all = data[0] & 4;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    char hl[32], *hdr = NULL, *plain = NULL;
    bd_error err = {0};
    if (mode == 1 && len >= 2) {
        snprintf(hl, sizeof hl, "%u", (unsigned)(data[1] | data[2] << 8));
        hdr = hl;
        body += 2;
        len -= 2;
    } else if (mode == 2) {
        const char *nul = memchr(body, '\0', len < sizeof hl - 1 ? len : sizeof hl - 1);
        if (!nul)
            return 0;
        memcpy(hl, body, (size_t)(nul - body) + 1);
        hdr = hl;
        len -= (size_t)(nul - body) + 1;
        body = nul + 1;
    } else if (mode == 3) {
        size_t plain_len = 0;
        if (bd_rest_inflate(BD_CODING_GZIP, body, len, 1u << 20, &plain, &plain_len, &err) != 0)
            return 0;
        if (plain[plain_len] != '\0')
            abort();                                   /* promised NUL */
        body = plain;
        len = plain_len;
    }
    /* the body as braidd holds it: its own buffer, NUL after it */
    char *copy = malloc(len + 1);
    if (!copy) {
        free(plain);
        return 0;
    }
    memcpy(copy, body, len);
    copy[len] = '\0';
    uint8_t *pb = NULL;
    size_t pb_len = 0;
    bd_rest_outputs outs = {0};
    if (bd_rest_infer_request(copy, len, hdr, "m", "", &pb, &pb_len, &outs, &err) == 0) {
        inference_ModelInferRequest req = inference_ModelInferRequest_init_zero;
        bd_wire_reader rd = BD_WIRE_READER_INIT;
        rd.limits = &bd_wire_request_limits;
        if (!bd_wire_decode(&rd, pb, pb_len, inference_ModelInferRequest_fields, &req)) {
            fprintf(stderr, "fuzz_rest: the encoded request does not decode: %s\n",
                    rd.error ? rd.error : "?");
            abort();
        }
        echo(&req, binary_all, &outs);
        pb_release(inference_ModelInferRequest_fields, &req);
        bd_wire_reader_free(&rd);
        free(pb);
        bd_rest_outputs_free(&outs);
    } else if (pb) {
        abort();                                       /* failure leaves *OUT NULL */
    }
    free(copy);
    free(plain);
    return 0;
}
