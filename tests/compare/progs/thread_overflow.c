/* SPDX-License-Identifier: MIT */
// A bug in a thread created by another thread, on memory allocated in a third thread:
// main starts "loader", which allocates the job; main starts "dispatcher", which starts
// "worker", which writes one int past the job's buffer.
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>

static int *job;

__attribute__((noinline)) void *loader_main(void *arg)
{
    (void)arg;
    job = malloc(8 * sizeof(int));
    return NULL;
}

__attribute__((noinline)) void worker_process(int *j)
{
    for (int i = 0; i <= 8; i++)         /* BUG: j[8] */
        j[i] = i;
}

__attribute__((noinline)) void *worker_main(void *arg)
{
    worker_process(arg);
    return NULL;
}

__attribute__((noinline)) void *dispatcher_main(void *arg)
{
    pthread_t w;
    pthread_create(&w, NULL, worker_main, arg);
    pthread_join(w, NULL);
    return NULL;
}

int main(void)
{
    pthread_t l, d;
    pthread_create(&l, NULL, loader_main, NULL);
    pthread_join(l, NULL);
    pthread_create(&d, NULL, dispatcher_main, job);
    pthread_join(d, NULL);
    printf("%d\n", job[0]);
    free(job);
    return 0;
}
