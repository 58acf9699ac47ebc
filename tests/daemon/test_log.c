/* The log line format (one write per line, ISO-8601 UTC, level, model/version) and the
 * metrics primitives (histogram buckets, durations, clocks, reason names). */
#include <fcntl.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/log.h"
#include "daemon/stats/metrics.h"
#include "tests/daemon/daemon_testlib.h"

/* Run the log calls in FN with stderr sent to a file; return what was written. */
static char *capture(void (*fn)(void))
{
    char dir[4096], path[4200];
    tl_mkdtemp(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/stderr", dir);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    fn();
    dup2(saved, STDERR_FILENO);
    close(saved);
    static char buf[8192];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    tl_rmtree(dir);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static void log_some(void)
{
    bd_log_set_level(BD_LOG_INFO);
    bd_log(BD_LOG_INFO, "resnet50", "1", "loaded in %d ms", 812);
    bd_log(BD_LOG_DEBUG, NULL, NULL, "dropped: below the level");
    bd_log(BD_LOG_ERROR, NULL, NULL, "two\nlines");
    bd_log(BD_LOG_WARN, "m", NULL, "no version");
}

static void test_log_format(void **state)
{
    char *out = capture(log_some);
    regex_t re;
    assert_int_equal(regcomp(&re,
        "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z INFO  model=resnet50 version=1 loaded in 812 ms\n"
        "[0-9T:.Z-]+ ERROR two lines\n"
        "[0-9T:.Z-]+ WARN  model=m no version\n$", REG_EXTENDED), 0);
    if (regexec(&re, out, 0, NULL, 0) != 0)
        fail_msg("unexpected log output:\n%s", out);
    regfree(&re);
}

static void long_line(void)
{
    static char big[5000];
    memset(big, 'x', sizeof big - 1);
    bd_log(BD_LOG_INFO, NULL, NULL, "%s", big);
}

static void test_log_truncates_long_lines(void **state)
{
    char *out = capture(long_line);
    size_t n = strlen(out);
    assert_true(n <= 2048);
    assert_int_equal(out[n - 1], '\n');
    assert_non_null(strstr(out, "...\n"));
    assert_null(strchr(out, '\n') == out + n - 1 ? NULL : "more than one line");
}

static void test_log_level_parse(void **state)
{
    assert_int_equal(bd_log_level_parse("debug"), BD_LOG_DEBUG);
    assert_int_equal(bd_log_level_parse("INFO"), BD_LOG_INFO);
    assert_int_equal(bd_log_level_parse("warn"), BD_LOG_WARN);
    assert_int_equal(bd_log_level_parse("error"), BD_LOG_ERROR);
    assert_int_equal(bd_log_level_parse("verbose"), -1);
    assert_int_equal(bd_log_level_parse(NULL), -1);
}

static void test_histogram_buckets(void **state)
{
    bd_histogram h = { 0 };
    bd_histogram_observe(&h, 0);               /* <= 0.5 ms */
    bd_histogram_observe(&h, 500000);          /* exactly 0.5 ms: first bucket (le) */
    bd_histogram_observe(&h, 500001);          /* second */
    bd_histogram_observe(&h, 3000000000ull);   /* 3 s: le 5 */
    bd_histogram_observe(&h, 60000000000ull);  /* 60 s: +Inf */
    assert_int_equal(h.bucket[0], 2);
    assert_int_equal(h.bucket[1], 1);
    assert_int_equal(h.bucket[12], 1);
    assert_int_equal(h.bucket[BD_HIST_BUCKETS - 1], 1);
    assert_int_equal(h.count, 5);
    assert_int_equal(h.sum_ns, 500000ull + 500001ull + 3000000000ull + 60000000000ull);
    assert_true(bd_hist_bounds_s[0] == 0.0005 && bd_hist_bounds_s[BD_HIST_BUCKETS - 2] == 10);

    bd_duration d = { 0 };
    bd_duration_add(&d, 7);
    bd_duration_add(&d, 3);
    assert_int_equal(d.count, 2);
    assert_int_equal(d.ns, 10);
}

static void test_clocks_and_names(void **state)
{
    uint64_t a = bd_now_ns(), b = bd_now_ns();
    assert_true(b >= a);
    assert_true(bd_wall_ms() > 1600000000000ull);   /* after 2020 */
    assert_string_equal(bd_fail_reason_name(BD_FAIL_QUEUE_FULL), "queue_full");
    assert_string_equal(bd_fail_reason_name(BD_FAIL_DEADLINE), "deadline");
    for (int r = 0; r < BD_FAIL_REASONS; r++)
        assert_non_null(bd_fail_reason_name((bd_fail_reason)r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_format),
        cmocka_unit_test(test_log_truncates_long_lines),
        cmocka_unit_test(test_log_level_parse),
        cmocka_unit_test(test_histogram_buckets),
        cmocka_unit_test(test_clocks_and_names),
    };
    return cmocka_run_group_tests_name("daemon log+metrics", tests, NULL, NULL);
}
