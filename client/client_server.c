/* Server-level RPCs: liveness, readiness, metadata. */
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "proto/inference.pb.h"

/* ServerLive and ServerReady are the same message on the wire (an empty request; a reply holding
 * bool field 1; see proto/inference.proto), so the Live types carry both; METHOD picks the RPC. */
static braid_status server_flag(braid_client *c, bc_method method, bool *flag, char *err, size_t errlen)
{
    inference_ServerLiveRequest req = inference_ServerLiveRequest_init_zero;
    inference_ServerLiveResponse resp = inference_ServerLiveResponse_init_zero;
    braid_status rc = bc_simple(c, method, inference_ServerLiveRequest_fields, &req,
                                inference_ServerLiveResponse_fields, &resp, err, errlen);
    if (rc == BRAID_OK)
        *flag = resp.live;
    pb_release(inference_ServerLiveResponse_fields, &resp);
    return rc;
}

braid_status braid_server_live(braid_client *c, bool *live, char *err, size_t errlen)
{
    if (!c || !live)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_server_live: client and LIVE are required");
    return server_flag(c, BC_SERVER_LIVE, live, err, errlen);
}

braid_status braid_server_ready(braid_client *c, bool *ready, char *err, size_t errlen)
{
    if (!c || !ready)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_server_ready: client and READY are required");
    return server_flag(c, BC_SERVER_READY, ready, err, errlen);
}

void braid_server_info_free(braid_server_info *info)
{
    if (!info)
        return;
    free(info->name);
    free(info->version);
    for (size_t i = 0; i < info->n_extensions; i++)
        free(info->extensions[i]);
    free(info->extensions);
    free(info);
}

braid_status braid_server_metadata(braid_client *c, braid_server_info **out, char *err, size_t errlen)
{
    if (!c || !out)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_server_metadata: client and OUT are required");
    inference_ServerMetadataRequest req = inference_ServerMetadataRequest_init_zero;
    inference_ServerMetadataResponse resp = inference_ServerMetadataResponse_init_zero;
    braid_status rc = bc_simple(c, BC_SERVER_METADATA, inference_ServerMetadataRequest_fields, &req,
                                inference_ServerMetadataResponse_fields, &resp, err, errlen);
    if (rc == BRAID_OK) {
        braid_server_info *info = calloc(1, sizeof *info);
        bool ok = info && (info->name = bc_strdup(resp.name)) && (info->version = bc_strdup(resp.version));
        if (ok && resp.extensions_count) {
            ok = (info->extensions = calloc(resp.extensions_count, sizeof *info->extensions)) != NULL;
            for (pb_size_t i = 0; ok && i < resp.extensions_count; i++, info->n_extensions++)
                ok = (info->extensions[i] = bc_strdup(resp.extensions[i])) != NULL;
        }
        if (ok) {
            *out = info;
        } else {
            braid_server_info_free(info);
            rc = bc_fail(err, errlen, BRAID_E_NOMEM, "out of memory");
        }
    }
    pb_release(inference_ServerMetadataResponse_fields, &resp);
    return rc;
}
