/* The SIGBUS guard (shm_guard.h). The handler only reads atomics and calls mmap through
 * syscall(2): nothing that locks or allocates, so it is safe on any thread at any moment. */
#include "daemon/infer/shm_guard.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct guard_slot {
    atomic_uintptr_t start;         /* 0: free (or being filled / cleared) */
    atomic_uintptr_t end;
    atomic_bool      used;          /* claimed by bd_shm_guard_add */
    atomic_bool      broken;
} guard_slot;

static guard_slot       slots[BD_SHM_GUARD_SLOTS];
static struct sigaction previous;   /* what SIGBUS did before the guard */

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    for (size_t i = 0; i < BD_SHM_GUARD_SLOTS; i++) {
        uintptr_t s = atomic_load_explicit(&slots[i].start, memory_order_acquire);
        if (!s || a < s || a >= atomic_load_explicit(&slots[i].end, memory_order_acquire))
            continue;
        int saved = errno;
        uintptr_t e = atomic_load_explicit(&slots[i].end, memory_order_acquire);
        long r = syscall(SYS_mmap, (void *)s, (size_t)(e - s), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0L);
        errno = saved;
        if (r != -1) {
            atomic_store(&slots[i].broken, true);
            return;                 /* the faulting access now reads / writes zero pages */
        }
        break;                      /* cannot repair: fall through to the default action */
    }
    /* Not ours: what would have happened without the guard. */
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
        previous.sa_sigaction(sig, si, uctx);
        return;
    }
    if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN && previous.sa_handler) {
        previous.sa_handler(sig);
        return;
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGBUS, &dfl, NULL);  /* returning re-runs the access: the default action */
}

int bd_shm_guard_install(bd_error *err)
{
    struct sigaction cur, sa;
    if (sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigbus)
        return 0;                   /* already the handler */
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &previous) != 0)
        return bd_error_set(err, BD_EIO, "cannot install the SIGBUS handler for shared memory: %s",
                            strerror(errno));
    return 0;
}

int bd_shm_guard_add(void *start, size_t len)
{
    for (int i = 0; i < BD_SHM_GUARD_SLOTS; i++) {
        bool expect = false;
        if (!atomic_compare_exchange_strong(&slots[i].used, &expect, true))
            continue;
        atomic_store(&slots[i].broken, false);
        atomic_store_explicit(&slots[i].end, (uintptr_t)start + len, memory_order_release);
        atomic_store_explicit(&slots[i].start, (uintptr_t)start, memory_order_release);
        return i;
    }
    return -1;
}

void bd_shm_guard_remove(int slot)
{
    if (slot < 0 || slot >= BD_SHM_GUARD_SLOTS)
        return;
    atomic_store_explicit(&slots[slot].start, 0, memory_order_release);
    atomic_store_explicit(&slots[slot].end, 0, memory_order_release);
    atomic_store(&slots[slot].used, false);
}

bool bd_shm_guard_broken(int slot)
{
    return slot >= 0 && slot < BD_SHM_GUARD_SLOTS && atomic_load(&slots[slot].broken);
}
