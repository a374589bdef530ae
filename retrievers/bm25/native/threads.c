/* Threads: run a function on an array of jobs, one thread each (see fastbm25.h). */
#include "fastbm25.h"

void threads_start(Threads *g, void *jobs, size_t size, int first, int n, void *(*fn)(void *)) {
    g->jobs = jobs;
    g->size = size;
    g->first = first;
    g->n = n;
    g->fn = fn;
    for (int i = first; i < n; i++) g->started[i] = pthread_create(&g->thread[i], NULL, fn, g->jobs + i * size) == 0;
}

void threads_join(Threads *g) { /* call without the GIL */
    for (int i = g->first; i < g->n; i++) {
        if (g->started[i]) pthread_join(g->thread[i], NULL);
        else g->fn(g->jobs + i * g->size);
    }
}

/* fn on jobs 0..n-1: job 0 on the calling thread (without the GIL), the others on threads. */
void run_jobs(void *jobs, size_t size, int n, void *(*fn)(void *)) {
    Threads g;
    threads_start(&g, jobs, size, 1, n, fn);
    if (n > 0) fn(jobs);
    threads_join(&g);
}
