/* ModelInferRequest -> bd_infer_request (rpc_infer_request.h). */
#include "daemon/grpc/rpc_infer_request.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *str(const char *s)
{
    return s ? s : "";
}

/* One parameter KEY = V (HAS: a value was sent) of tensor WHAT into R; 0 when KEY is no
 * shared memory parameter. */
static int shm_param(bd_infer_shm_ref *r, const char *key, bool has, const inference_InferParameter *v,
                     const char *what, bd_error *err)
{
    if (!strcmp(key, "shared_memory_region")) {
        if (!has || v->which_parameter_choice != inference_InferParameter_string_param_tag ||
            !v->parameter_choice.string_param)
            return bd_error_set(err, BD_EINVAL, "%s: parameter 'shared_memory_region' must be a "
                                "string (a registered region's name)", what);
        r->region = v->parameter_choice.string_param;
        return 0;
    }
    bool is_size = !strcmp(key, "shared_memory_byte_size");
    if (!is_size && strcmp(key, "shared_memory_offset") != 0)
        return 0;
    int64_t n = !has ? -1
              : v->which_parameter_choice == inference_InferParameter_int64_param_tag
                    ? v->parameter_choice.int64_param
              : v->which_parameter_choice == inference_InferParameter_uint64_param_tag &&
                v->parameter_choice.uint64_param <= (uint64_t)INT64_MAX
                    ? (int64_t)v->parameter_choice.uint64_param : -1;
    if (n < 0)
        return bd_error_set(err, BD_EINVAL, "%s: parameter '%s' must be a non-negative integer "
                            "(bytes)", what, key);
    if (is_size) {
        r->size = (uint64_t)n;
        r->has_size = true;
    } else {
        r->offset = (uint64_t)n;
    }
    return 0;
}

static bool is_shm_key(const char *key)
{
    return !strcmp(key, "shared_memory_region") || !strcmp(key, "shared_memory_byte_size") ||
           !strcmp(key, "shared_memory_offset");
}

static void values_of(bd_infer_input *in, const inference_InferTensorContents *tc)
{
    in->values[BD_VALUES_BOOL] = &tc->bool_contents;
    in->values[BD_VALUES_INT] = &tc->int_contents;
    in->values[BD_VALUES_INT64] = &tc->int64_contents;
    in->values[BD_VALUES_UINT] = &tc->uint_contents;
    in->values[BD_VALUES_UINT64] = &tc->uint64_contents;
    in->values[BD_VALUES_FP32] = &tc->fp32_contents;
    in->values[BD_VALUES_FP64] = &tc->fp64_contents;
    in->values[BD_VALUES_BYTES] = &tc->bytes_contents;
}

/* Input T (its raw bytes the next of RAW when it is not in shared memory) into IN. */
static int input(bd_infer_input *in, const inference_ModelInferRequest_InferInputTensor *t,
                 const bd_wire_spans *raw, size_t *next_raw, bd_error *err)
{
    in->name = str(t->name);
    in->datatype = str(t->datatype);
    in->rank = t->shape_count;
    in->shape = t->shape;
    char what[160];
    snprintf(what, sizeof what, "input '%s'", in->name);
    for (pb_size_t p = 0; p < t->parameters_count; p++) {
        int rc = shm_param(&in->shm, str(t->parameters[p].key), t->parameters[p].has_value,
                           &t->parameters[p].value, what, err);
        if (rc)
            return rc;
    }
    if (raw->list.count > 0 && !in->shm.region) {
        if (*next_raw >= raw->list.count)               /* counted by the caller; defensive */
            return bd_error_set(err, BD_EINVAL, "input '%s': no raw_input_contents entry", in->name);
        in->has_raw = true;
        in->raw = raw->list.items[(*next_raw)++];
    }
    in->has_values = t->has_contents;
    if (t->has_contents)
        values_of(in, &t->contents);
    return 0;
}

/* Requested output O into OUT. */
static int output(bd_infer_output *out, const inference_ModelInferRequest_InferRequestedOutputTensor *o,
                  bd_error *err)
{
    out->name = str(o->name);
    char what[160];
    snprintf(what, sizeof what, "output '%s'", out->name);
    for (pb_size_t p = 0; p < o->parameters_count; p++) {
        const char *key = str(o->parameters[p].key);
        const inference_InferParameter *v = &o->parameters[p].value;
        if (is_shm_key(key)) {
            int rc = shm_param(&out->shm, key, o->parameters[p].has_value, v, what, err);
            if (rc)
                return rc;
        } else if (!strcmp(key, "classification")) {
            int64_t n = v->which_parameter_choice == inference_InferParameter_int64_param_tag
                            ? v->parameter_choice.int64_param
                      : v->which_parameter_choice == inference_InferParameter_uint64_param_tag &&
                        v->parameter_choice.uint64_param <= UINT32_MAX
                            ? (int64_t)v->parameter_choice.uint64_param : -1;
            if (!o->parameters[p].has_value || n < 1 || n > (int64_t)UINT32_MAX)
                return bd_error_set(err, BD_EINVAL, "output '%s': parameter 'classification' must "
                                    "be an integer from 1 to %" PRIu32 " (the number of classes "
                                    "to return)", out->name, UINT32_MAX);
            out->classify = (uint32_t)n;
        } else if (strcmp(key, "binary_data") != 0) {
            return bd_error_set(err, BD_EINVAL, "output '%s': unknown parameter '%s' (braid "
                                "knows 'classification', 'binary_data' and the shared_memory_* "
                                "ones)", out->name, key);
        }
    }
    return 0;
}

/* An integer request parameter (int64 or uint64, >= 0) into *OUT; false otherwise. */
static bool uint_parameter(const inference_InferParameter *v, bool has, uint64_t *out)
{
    if (has && v->which_parameter_choice == inference_InferParameter_uint64_param_tag)
        *out = v->parameter_choice.uint64_param;
    else if (has && v->which_parameter_choice == inference_InferParameter_int64_param_tag &&
             v->parameter_choice.int64_param >= 0)
        *out = (uint64_t)v->parameter_choice.int64_param;
    else
        return false;
    return true;
}

/* "priority" and "timeout": the first malformed one is remembered, not refused. */
static void queue_parameters(bd_infer_request *out, const inference_ModelInferRequest *msg)
{
    for (pb_size_t p = 0; p < msg->parameters_count && !out->bad_queue_param; p++) {
        const char *key = str(msg->parameters[p].key);
        uint64_t *dst = !strcmp(key, "priority") ? &out->priority
                      : !strcmp(key, "timeout") ? &out->timeout_us : NULL;
        if (dst && !uint_parameter(&msg->parameters[p].value, msg->parameters[p].has_value, dst))
            out->bad_queue_param = key;
    }
}

int bd_rpc_infer_request(bd_infer_request *out, const inference_ModelInferRequest *msg,
                         bd_error *err)
{
    size_t n_shm = 0;
    for (pb_size_t k = 0; k < msg->inputs_count; k++) {
        bool in_shm = false;                /* a key given twice counts once */
        for (pb_size_t p = 0; p < msg->inputs[k].parameters_count; p++)
            in_shm |= !strcmp(str(msg->inputs[k].parameters[p].key), "shared_memory_region");
        n_shm += in_shm;
    }
    const bd_wire_spans *raw = &msg->raw_input_contents;
    size_t n_raw = msg->inputs_count - n_shm;
    if (raw->list.count > 0 && raw->list.count != n_raw)
        return bd_error_set(err, BD_EINVAL, "raw_input_contents has %zu entries for %zu inputs (expected "
                            "one per input not in shared memory, in the order of 'inputs')",
                            raw->list.count, n_raw);
    if (!bd_infer_request_alloc(out, msg->inputs_count, msg->outputs_count))
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    out->model = str(msg->model_name);
    out->version = msg->model_version;
    out->id = msg->id;
    size_t next_raw = 0;
    for (pb_size_t k = 0; k < msg->inputs_count; k++) {
        int rc = input(&out->inputs[k], &msg->inputs[k], raw, &next_raw, err);
        if (rc)
            return rc;
    }
    for (pb_size_t k = 0; k < msg->outputs_count; k++) {
        int rc = output(&out->outputs[k], &msg->outputs[k], err);
        if (rc)
            return rc;
    }
    queue_parameters(out, msg);
    return 0;
}
