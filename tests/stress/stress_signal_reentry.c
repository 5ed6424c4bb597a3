/* SPDX-License-Identifier: MIT */
/* malloc and free from a signal handler that interrupted malloc or free: a worker process
 * allocates and frees (small and page-backed sizes) in a loop while a 100 us interval timer
 * runs a handler that does the same. That must never hang: libhwtag either serves it or
 * prints "hwtag: malloc re-entered from a signal handler" and aborts. Each attempt has its
 * own timeout; prints how many ended which way. STRESS_SECONDS / STRESS_LONG. */
#include <fcntl.h>
#include <sys/time.h>

#include "stress.h"

static volatile sig_atomic_t handled;

static void handler(int sig)
{
    (void)sig;
    void *a = malloc(32);
    void *b = malloc(40000);
    free(b);
    free(a);
    handled++;
}

static void worker(double seconds)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 100}, {0, 100}};
    setitimer(ITIMER_REAL, &it, NULL);
    uint64_t rng = (uint64_t)getpid() * 0x9e3779b97f4a7c15u + 1;
    double end = stress_now() + seconds;
    void *live[16] = {0};
    while (stress_now() < end) {
        for (unsigned i = 0; i < 100; i++) {
            unsigned k = (unsigned)(stress_rand(&rng) % 16);
            free(live[k]);
            uint64_t r = stress_rand(&rng);
            live[k] = malloc(r % 3 == 0 ? 20000 + r % 30000 : 16 + r % 1000);
        }
    }
    _exit(0);
}

int main(void)
{
    double budget = stress_seconds(20), deadline = stress_now() + budget;
    unsigned attempts = 0, aborted = 0, finished = 0, hung = 0, other = 0;
    while (stress_now() < deadline && attempts < 40) {
        int fds[2];
        if (pipe(fds) != 0)
            return 1;
        pid_t pid = fork();
        if (pid == 0) {
            dup2(fds[1], 2);
            close(fds[0]);
            worker(5);
        }
        close(fds[1]);
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
        attempts++;
        char err[4096];
        size_t len = 0;
        int status = 0;
        double end = stress_now() + 20;
        pid_t done = 0;
        while ((done = waitpid(pid, &status, WNOHANG)) == 0 && stress_now() < end) {
            ssize_t n = read(fds[0], err + len, sizeof(err) - 1 - len);
            if (n > 0)
                len += (size_t)n;
            usleep(10000);
        }
        if (done == 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            hung++;
            printf("attempt %u: HUNG (killed after 20 s)\n", attempts);
        }
        ssize_t n;
        while ((n = read(fds[0], err + len, sizeof(err) - 1 - len)) > 0)
            len += (size_t)n;
        err[len] = '\0';
        close(fds[0]);
        if (done == 0)
            continue;
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
            strstr(err, "hwtag: malloc re-entered from a signal handler") != NULL)
            aborted++;
        else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            finished++;
        else {
            other++;
            printf("attempt %u: status %#x, stderr: %s\n", attempts, status, err);
        }
    }
    printf("%u attempts: %u aborted with the re-entry message, %u served to the end, %u hung, "
           "%u other\n",
           attempts, aborted, finished, hung, other);
    return hung == 0 && other == 0 ? 0 : 1;
}
