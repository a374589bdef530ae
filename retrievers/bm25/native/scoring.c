/* Lucene's BM25 score of every posting, in float32 operations (retrievers/bm25/scoring.py). */
#include "fastbm25.h"

/* score_lucene on threads: each job a run of terms, checked then scored. */
typedef int32_t __attribute__((may_alias)) tf_t; /* data may be tf's own memory (score_lucene's out) */
typedef float __attribute__((may_alias)) score_t;
typedef struct {
    const int64_t *indptr;
    const int32_t *indices;
    const tf_t *tf;
    const float *idf, *inv;
    Py_ssize_t t0, t1, n_docs, n_post;
    score_t *data;
    int bad;
} ScoreJob;

static void *score_run(void *arg) {
    ScoreJob *j = arg;
    const int64_t *indptr = j->indptr;
    if (indptr[j->t0] < 0 || indptr[j->t1] > j->n_post) { j->bad = 1; return NULL; } /* the run's postings exist */
    for (Py_ssize_t t = j->t0; t < j->t1; t++) /* ascending from >= 0 to <= n_post: all postings exist */
        if (indptr[t] > indptr[t + 1]) { j->bad = 1; return NULL; }
    for (int64_t p = indptr[j->t0]; p < indptr[j->t1]; p++)
        if ((uint64_t)(uint32_t)j->indices[p] >= (uint64_t)j->n_docs) { j->bad = 2; return NULL; }
    for (Py_ssize_t t = j->t0; t < j->t1; t++) {
        float w = j->idf[t];
        for (int64_t p = indptr[t]; p < indptr[t + 1]; p++) /* (tf[p] is read before data[p] is written) */
            j->data[p] = lucene_score(w, j->tf[p], j->inv[j->indices[p]]);
    }
    return NULL;
}

/* score_lucene(indptr, indices, tf, idf, inv, n_threads=1, out=None) -> float32 bytes: posting p of
 * term t in document d scores  w - w / (1 + tf * inv[d])  with w = idf[t], in float32 operations
 * (Lucene's BM25 similarity; inv[d] = 1 / (k1 (1 - b + b dl/avgdl)), precomputed per document).
 * With out (a writable buffer of one float32 per posting, which may be tf's own memory: each tf is
 * read before its score is written there), the scores go to out and None is returned. */
PyObject *score_lucene(PyObject *self, PyObject *args) {
    PyObject *o[5], *out_arg = Py_None;
    int n_threads = 1;
    if (!PyArg_ParseTuple(args, "OOOOO|iO", &o[0], &o[1], &o[2], &o[3], &o[4], &n_threads, &out_arg)) return NULL;
    Py_buffer v[5], out = {0};
    static const Py_ssize_t item[5] = {8, 4, 4, 4, 4};
    static const char *what[5] = {"indptr", "indices", "tf", "idf", "inv"};
    int n_views = 0, has_out = 0;
    PyObject *ret = NULL;
    for (int i = 0; i < 5; i++) {
        if (get_buffer(o[i], &v[i], item[i], what[i])) goto done;
        n_views++;
    }
    if (out_arg != Py_None) {
        if (PyObject_GetBuffer(out_arg, &out, PyBUF_WRITABLE)) goto done;
        has_out = 1;
    }
    const int64_t *indptr = v[0].buf;
    Py_ssize_t n_terms = v[0].len / 8 - 1, n_post = v[1].len / 4, n_docs = v[4].len / 4;
    if (n_terms < 0 || v[2].len / 4 != n_post || v[3].len / 4 != n_terms || indptr[0] != 0 || indptr[n_terms] != n_post) {
        PyErr_SetString(PyExc_ValueError, "score_lucene: array sizes do not fit together");
        goto done;
    }
    if (has_out) {
        if (out.len != n_post * 4) {
            PyErr_SetString(PyExc_ValueError, "score_lucene: out must hold one float32 per posting");
            goto done;
        }
        Py_INCREF(Py_None);
        ret = Py_None;
    } else {
        ret = PyBytes_FromStringAndSize(NULL, n_post * 4);
        if (!ret) goto done;
    }
    score_t *scores = has_out ? (score_t *)out.buf : (score_t *)PyBytes_AS_STRING(ret);
    int n_jobs = n_threads < 1 ? 1 : n_threads > MAX_THREADS ? MAX_THREADS : n_threads;
    if (n_post < 65536) n_jobs = 1;
    ScoreJob jobs[MAX_THREADS];
    Py_ssize_t t = 0;
    for (int i = 0; i < n_jobs; i++) { /* runs of terms of about n_post / n_jobs postings */
        Py_ssize_t t0 = t;
        int64_t goal = (int64_t)(n_post / n_jobs) * (i + 1);
        if (i == n_jobs - 1) t = n_terms;
        else while (t < n_terms && indptr[t] < goal) t++; /* (indptr checked as the jobs run) */
        jobs[i] = (ScoreJob){indptr, v[1].buf, v[2].buf, v[3].buf, v[4].buf, t0, t, n_docs, n_post, scores, 0};
    }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    run_jobs(jobs, sizeof(ScoreJob), n_jobs, score_run);
    Py_END_ALLOW_THREADS
    for (int i = 0; i < n_jobs; i++) if (jobs[i].bad) bad = jobs[i].bad;
    if (bad) {
        PyErr_SetString(PyExc_ValueError, bad == 1 ? "score_lucene: indptr is not ascending"
                                                   : "score_lucene: a posting's document is out of range");
        Py_CLEAR(ret);
    }
done:
    for (int i = 0; i < n_views; i++) PyBuffer_Release(&v[i]);
    if (has_out) PyBuffer_Release(&out);
    return ret;
}
