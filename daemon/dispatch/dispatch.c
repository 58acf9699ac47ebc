/* The port-neutral hand-over (dispatch.h): the cancellation both sides share, and the one
 * door a port calls. */
#include "daemon/dispatch/dispatch.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

/* FLAG (the handler's) is only touched under LOCK, and cleared before the call's state goes. */
struct bd_dispatch_cancel {
    pthread_mutex_t lock;
    int             refs;
    bool            fired;
    atomic_bool    *flag;
};

bd_dispatch_cancel *bd_dispatch_cancel_new(void)
{
    bd_dispatch_cancel *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    pthread_mutex_init(&k->lock, NULL);
    k->refs = 1;
    return k;
}

void bd_dispatch_cancel_fire(bd_dispatch_cancel *k)
{
    if (!k)
        return;
    pthread_mutex_lock(&k->lock);
    k->fired = true;
    if (k->flag)
        atomic_store(k->flag, true);
    pthread_mutex_unlock(&k->lock);
}

void bd_dispatch_cancel_retain(bd_dispatch_cancel *k)
{
    if (!k)
        return;
    pthread_mutex_lock(&k->lock);
    k->refs++;
    pthread_mutex_unlock(&k->lock);
}

void bd_dispatch_cancel_watch(bd_dispatch_cancel *k, atomic_bool *flag)
{
    if (!k)
        return;
    pthread_mutex_lock(&k->lock);
    k->flag = flag;
    if (flag && k->fired)
        atomic_store(flag, true);
    pthread_mutex_unlock(&k->lock);
}

void bd_dispatch_cancel_release(bd_dispatch_cancel *k)
{
    if (!k)
        return;
    pthread_mutex_lock(&k->lock);
    int left = --k->refs;
    pthread_mutex_unlock(&k->lock);
    if (left == 0) {
        pthread_mutex_destroy(&k->lock);
        free(k);
    }
}

int bd_dispatch_run(const bd_dispatch *d, const bd_dispatch_call *call)
{
    return d->run(d->impl, call);
}
