/*
 * test_pool_fork.c: the thread pool in a process forked after its threads started (Python's
 * multiprocessing, a program that forks workers after writing): the child's jobs run inline and finish
 * with every task done, and freeing the inherited pool does not wait for threads the child does not have.
 */
#include "runner.h"

#include <signal.h>
#include <sys/wait.h>

#include "h5zarr/zarr.h"

#define NTASKS 64

static int
mark(void *job, size_t i, int worker)
{
    int *done = job;
    (void)worker;
    done[i] = (int)i + 1;
    return ZARR_OK;
}

static int
run_and_check(zarr_pool *p)
{
    int done[NTASKS] = {0};
    if (zarr_pool_run(p, mark, done, NTASKS, false) != ZARR_OK)
        return 1;
    for (int i = 0; i < NTASKS; i++)
        if (done[i] != i + 1)
            return 2;
    return 0;
}

static int
test_job_after_fork(void)
{
    zarr_pool *p = NULL;
    pid_t      c;
    int        status;
    ASSERT_OK(zarr_pool_new(3, &p));
    ASSERT_EQ_INT(run_and_check(p), 0); /* the threads are running */
    fflush(NULL);
    if ((c = fork()) == 0) {
        int rc;
        alarm(20); /* a hang (a job waiting for the parent's threads) ends the child */
        rc = run_and_check(p);
        if (rc == 0)
            rc = run_and_check(p) ? 3 : 0;
        zarr_pool_free(p);
        _exit(rc);
    }
    ASSERT(c > 0);
    ASSERT(waitpid(c, &status, 0) == c);
    if (WIFSIGNALED(status))
        FAILF("the child died of signal %d (SIGALRM: it hung)", WTERMSIG(status));
    ASSERT(WIFEXITED(status));
    ASSERT_EQ_INT(WEXITSTATUS(status), 0);
    ASSERT_EQ_INT(run_and_check(p), 0); /* the parent's pool still works */
    zarr_pool_free(p);
    return 0;
}

static const test_entry tests[] = {TEST_ENTRY(job_after_fork)};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
