/* When a batch goes and how many jobs it takes (batch_form.h). */
#include "daemon/sched/batch_form.h"

static bool may_join(const bd_job *head, const bd_job *j)
{
    return j == head || (j->rows > 0 && j->joins && head->joins(head, j));
}

static bool listed(const int *sizes, int n, uint64_t rows)
{
    for (int i = 0; i < n; i++)
        if ((uint64_t)sizes[i] == rows)
            return true;
    return false;
}

size_t bd_batch_form(const bd_batch_rule *r, const bd_job *h, bool busy, uint64_t now,
                     uint64_t *wake)
{
    uint64_t max = r->max_rows;
    if (h->rows == 0 || !h->joins || h->rows >= max)
        return 1;
    uint64_t max_pref = 0;
    for (int p = 0; p < r->n_preferred; p++)
        if ((uint64_t)r->preferred[p] > max_pref)
            max_pref = (uint64_t)r->preferred[p];
    uint64_t rows = 0;
    size_t n = 0, pref = 0, ladder = 1;       /* longest prefixes on each list */
    bool full = false;
    for (const bd_job *j = h; j; j = j->next) {
        if (!may_join(h, j))
            continue;
        if (rows + j->rows > max) {           /* rows <= max: no overflow */
            full = true;
            break;
        }
        rows += j->rows;
        n++;
        if (!r->ladder || listed(r->ladder, r->n_ladder, rows)) {
            ladder = n;
            if (listed(r->preferred, r->n_preferred, rows))
                pref = n;
        }
        if (rows == max) {
            full = true;
            break;
        }
    }
    /* As full as the ladder allows (a measured ladder of [1] on a model that batching cannot
     * speed up): waiting for more would only idle the worker. */
    bool ladder_full = r->ladder && (r->n_ladder == 0 || rows >= (uint64_t)r->ladder[r->n_ladder - 1]);
    if (full || ladder_full || (max_pref > 0 && rows >= max_pref))
        return pref ? pref : ladder;
    uint64_t due = h->enqueue_ns + r->delay_ns;
    if (r->delay_ns == 0 || now >= due || (!busy && !r->wait_when_idle))
        return ladder;
    if (due < *wake)
        *wake = due;
    return 0;
}
