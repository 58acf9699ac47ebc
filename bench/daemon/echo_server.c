/* echo-server: the floor braidd's RPC latency is measured against.
 *
 *   echo-server [--address 127.0.0.1:0] [--port-file PATH] [--method PATH]
 *
 * A bare gRPC C-core server with one registered method (default
 * /inference.GRPCInferenceService/ModelInfer) that answers every call with the request's own
 * bytes. Same completion-queue pattern as braidd (one thread blocking in
 * grpc_completion_queue_next, registered methods, payload read with the call) but no libuv, no
 * decoding, no model: what is left is gRPC + HTTP/2 + loopback TCP, so braidd's p50 over this
 * server's p50 is what braidd itself adds. SIGTERM/SIGINT: shut down and exit 0. */
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POSTED 16      /* calls requested ahead: up to this many served concurrently */

typedef struct echo_call {
    int                 state;       /* 0: requested, 1: answering */
    grpc_call          *call;
    gpr_timespec        deadline;
    grpc_metadata_array md;
    grpc_byte_buffer   *payload;
    int                 cancelled;
} echo_call;

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { (void)sig; g_stop = 1; }

static int request_call(grpc_server *srv, void *method, grpc_completion_queue *cq)
{
    echo_call *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    grpc_metadata_array_init(&c->md);
    grpc_call_error e = grpc_server_request_registered_call(srv, method, &c->call, &c->deadline,
                                                            &c->md, &c->payload, cq, cq, c);
    if (e != GRPC_CALL_OK) {
        grpc_metadata_array_destroy(&c->md);
        free(c);
        return -1;
    }
    return 0;
}

static void call_free(echo_call *c)
{
    if (c->payload)
        grpc_byte_buffer_destroy(c->payload);
    grpc_metadata_array_destroy(&c->md);
    if (c->call)
        grpc_call_unref(c->call);
    free(c);
}

static int answer(echo_call *c)
{
    grpc_op ops[4];
    memset(ops, 0, sizeof ops);
    if (!c->payload)     /* the client sent no message: echo an empty one */
        c->payload = grpc_raw_byte_buffer_create(NULL, 0);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = c->payload;     /* the request's bytes, as is */
    ops[2].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[2].data.recv_close_on_server.cancelled = &c->cancelled;
    ops[3].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[3].data.send_status_from_server.status = GRPC_STATUS_OK;
    c->state = 1;
    return grpc_call_start_batch(c->call, ops, 4, c, NULL) == GRPC_CALL_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *address = "127.0.0.1:0", *port_file = NULL;
    const char *method_path = "/inference.GRPCInferenceService/ModelInfer";
    static const struct option opts[] = {
        { "address", required_argument, 0, 'a' }, { "port-file", required_argument, 0, 'p' },
        { "method", required_argument, 0, 'm' }, { "help", no_argument, 0, 'h' }, { 0 },
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "a:p:m:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'a': address = optarg; break;
        case 'p': port_file = optarg; break;
        case 'm': method_path = optarg; break;
        case 'h':
            printf("usage: echo-server [--address HOST:PORT] [--port-file PATH] [--method PATH]\n");
            return 0;
        default: return 2;
        }
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);

    grpc_init();
    grpc_arg arg = { .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
                     .value.integer = 256 * 1024 * 1024 };
    grpc_channel_args args = { .num_args = 1, .args = &arg };
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    grpc_server *srv = grpc_server_create(&args, NULL);
    void *method = grpc_server_register_method(srv, method_path, NULL,
                                               GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
    grpc_server_register_completion_queue(srv, cq, NULL);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    int port = grpc_server_add_http2_port(srv, address, creds);
    grpc_server_credentials_release(creds);
    if (port == 0) {
        fprintf(stderr, "echo-server: cannot listen on %s\n", address);
        return 1;
    }
    grpc_server_start(srv);
    for (int i = 0; i < POSTED; i++)
        if (request_call(srv, method, cq)) {
            fprintf(stderr, "echo-server: cannot post a call\n");
            return 1;
        }
    if (port_file) {
        FILE *f = fopen(port_file, "w");
        if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f)) {
            fprintf(stderr, "echo-server: cannot write %s\n", port_file);
            return 1;
        }
    }
    fprintf(stderr, "echo-server: %s on port %d\n", method_path, port);

    static char shutdown_tag;
    int shutting_down = 0;
    for (;;) {
        if (g_stop && !shutting_down) {
            grpc_server_shutdown_and_notify(srv, cq, &shutdown_tag);
            grpc_server_cancel_all_calls(srv);
            shutting_down = 1;
        }
        grpc_event ev = grpc_completion_queue_next(
            cq, gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(200, GPR_TIMESPAN)),
            NULL);
        if (ev.type == GRPC_QUEUE_TIMEOUT)
            continue;
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.tag == &shutdown_tag) {
            grpc_completion_queue_shutdown(cq);
            continue;
        }
        echo_call *c = ev.tag;
        if (c->state == 0 && ev.success) {
            if (!shutting_down)
                request_call(srv, method, cq);
            if (answer(c) == 0)
                continue;
        }
        call_free(c);     /* answered, or a posted request that shutdown completed */
    }
    grpc_server_destroy(srv);
    grpc_completion_queue_destroy(cq);
    grpc_shutdown();
    return 0;
}
