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
 * A body the parser accepts becomes a neutral request (daemon/infer/infer_request.h) whose
 * every input is in shared memory or has raw bytes (a view into the body or a converted copy:
 * every byte is read, so ASan sees one past its buffer); then its inputs are echoed as an
 * answer through bd_rest_infer_response (JSON "data" for every datatype, binary outputs,
 * BYTES parsing), so both directions run on whatever the fuzzer finds. Deterministic, no
 * I/O.
 * Seeds: tests/fuzz/corpus/rest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ir/graph.h"
#include "daemon/rest/rest_codec.h"
#include "daemon/rest/rest_infer.h"

static void echo(const bd_infer_request *req, bool binary_all, const bd_rest_outputs *o)
{
    size_t n = req->n_inputs;
    bd_infer_reply_output *outs = calloc(n ? n : 1, sizeof *outs);
    bd_wire_span *spans = calloc(n ? n : 1, sizeof *spans);
    volatile uint8_t sink = 0;
    if (!outs || !spans)
        goto done;
    for (size_t i = 0; i < n; i++) {
        const bd_infer_input *in = &req->inputs[i];
        if (!in->has_raw != !!in->shm.region || in->has_values)
            abort();                                   /* raw bytes or shared memory, one */
        for (size_t k = 0; k < in->raw.size; k++)
            sink ^= in->raw.data[k];
        outs[i].name = in->name;
        outs[i].datatype = in->datatype;
        outs[i].ndim = (int)in->rank;
        if (in->rank > BD_MAX_RANK)
            abort();
        for (size_t d = 0; d < in->rank; d++)
            outs[i].shape[d] = in->shape[d];
        spans[i] = in->raw;
    }
    bd_infer_reply rsp = { .model = req->model, .id = req->id, .n = n, .out = outs, .data = spans };
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
    (void)sink;
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
    bd_rest_request *rq = NULL;
    bd_rest_outputs outs = {0};
    if (bd_rest_infer_request(copy, len, hdr, "m", "", &rq, &outs, &err) == 0) {
        bd_rest_request_adopt(rq, copy);               /* as braidd hands it the body */
        copy = NULL;
        echo(bd_rest_request_get(rq), binary_all, &outs);
        bd_rest_request_free(rq);
        bd_rest_outputs_free(&outs);
    } else if (rq) {
        abort();                                       /* failure leaves *OUT NULL */
    }
    free(copy);
    free(plain);
    return 0;
}
