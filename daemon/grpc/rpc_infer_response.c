/* ModelInferResponse by hand (rpc_infer_response.h). Field numbers from proto/inference.proto;
 * every tag here is < 16, so one byte. As nanopb encodes proto3: a string is written when
 * its pointer is set (even empty), a repeated int64 packed and only when non-empty, a bytes
 * element always (an empty one too). */
#include "daemon/grpc/rpc_infer_response.h"

#include <string.h>

#include "proto/wire_span.h"

enum { WT_LEN = 2 };   /* length-delimited */

/* Tag + length + payload of a length-delimited field of PAYLOAD bytes. */
static size_t len_field_size(size_t payload)
{
    return 1 + bd_wire_varint_size(payload) + payload;
}

static size_t string_size(const char *s)
{
    return s ? len_field_size(strlen(s)) : 0;
}

static size_t shape_payload(const inference_ModelInferResponse_InferOutputTensor *o)
{
    size_t n = 0;
    for (pb_size_t d = 0; d < o->shape_count; d++)
        n += bd_wire_varint_size((uint64_t)o->shape[d]);     /* int64: negatives take 10 bytes */
    return n;
}

static size_t output_payload(const inference_ModelInferResponse_InferOutputTensor *o)
{
    size_t n = string_size(o->name) + string_size(o->datatype);
    if (o->shape_count)
        n += len_field_size(shape_payload(o));
    return n;
}

bool bd_infer_response_size(const inference_ModelInferResponse *rsp, size_t *size)
{
    if (rsp->parameters_count)
        return false;
    size_t n = string_size(rsp->model_name) + string_size(rsp->model_version) + string_size(rsp->id);
    for (pb_size_t k = 0; k < rsp->outputs_count; k++) {
        const inference_ModelInferResponse_InferOutputTensor *o = &rsp->outputs[k];
        if (o->parameters_count || o->has_contents)
            return false;
        n += len_field_size(output_payload(o));
    }
    const bd_wire_spans *raw = &rsp->raw_output_contents;
    for (size_t k = 0; k < raw->list.count; k++) {
        size_t len = raw->list.items[k].size;
        if (__builtin_add_overflow(n, 1 + bd_wire_varint_size(len), &n) || __builtin_add_overflow(n, len, &n))
            return false;                            /* nanopb then says it cannot */
    }
    *size = n;
    return true;
}

static uint8_t *put_len(uint8_t *p, uint32_t field, size_t len)
{
    *p++ = (uint8_t)(field << 3 | WT_LEN);
    return p + bd_wire_put_varint(p, len);
}

static uint8_t *put_string(uint8_t *p, uint32_t field, const char *s)
{
    if (!s)
        return p;
    size_t len = strlen(s);
    p = put_len(p, field, len);
    memcpy(p, s, len);
    return p + len;
}

void bd_infer_response_write(const inference_ModelInferResponse *rsp, uint8_t *dst)
{
    uint8_t *p = dst;
    p = put_string(p, inference_ModelInferResponse_model_name_tag, rsp->model_name);
    p = put_string(p, inference_ModelInferResponse_model_version_tag, rsp->model_version);
    p = put_string(p, inference_ModelInferResponse_id_tag, rsp->id);
    for (pb_size_t k = 0; k < rsp->outputs_count; k++) {
        const inference_ModelInferResponse_InferOutputTensor *o = &rsp->outputs[k];
        p = put_len(p, inference_ModelInferResponse_outputs_tag, output_payload(o));
        p = put_string(p, inference_ModelInferResponse_InferOutputTensor_name_tag, o->name);
        p = put_string(p, inference_ModelInferResponse_InferOutputTensor_datatype_tag, o->datatype);
        if (o->shape_count) {
            p = put_len(p, inference_ModelInferResponse_InferOutputTensor_shape_tag, shape_payload(o));
            for (pb_size_t d = 0; d < o->shape_count; d++)
                p += bd_wire_put_varint(p, (uint64_t)o->shape[d]);
        }
    }
    const bd_wire_spans *raw = &rsp->raw_output_contents;
    for (size_t k = 0; k < raw->list.count; k++) {
        const bd_wire_span *s = &raw->list.items[k];
        p = put_len(p, inference_ModelInferResponse_raw_output_contents_tag, s->size);
        if (s->size)
            memcpy(p, s->data, s->size);
        p += s->size;
    }
}
