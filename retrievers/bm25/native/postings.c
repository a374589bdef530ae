/* The PostingsBuilder: documents' term ids or postings -> term-major CSC postings with term
 * frequencies; documents ascend within each term (a counting sort, on threads). */
#include "fastbm25.h"
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif

void builder_free_postings(Builder *b) {
    for (int i = 0; i < b->n_sealed; i++) { free(b->sealed[i].term); free(b->sealed[i].tf); }
    free(b->sealed);
    b->sealed = NULL;
    b->n_sealed = b->cap_sealed = 0;
    b->sealed_n = 0;
    free(b->term.a); free(b->tf.a);
    memset(&b->term, 0, sizeof(b->term)); memset(&b->tf, 0, sizeof(b->tf));
}

/* Seal term/tf (if not empty) and adopt the arrays of n_pieces postings pieces as sealed segments:
 * no copy; the pieces' arrays are the builder's from now on (their pointers are set to NULL). */
int builder_adopt(Builder *b, VecI32 **terms, VecI32 **tfs, int n_pieces) {
    int need = b->n_sealed + n_pieces + 1;
    if (need > b->cap_sealed) {
        Segment *grown = realloc(b->sealed, (size_t)need * 2 * sizeof(Segment));
        if (!grown) return -1;
        b->sealed = grown;
        b->cap_sealed = need * 2;
    }
    if (b->term.n) {
        b->sealed[b->n_sealed++] = (Segment){b->term.a, b->tf.a, b->term.n};
        b->sealed_n += b->term.n;
        memset(&b->term, 0, sizeof(b->term)); memset(&b->tf, 0, sizeof(b->tf));
    }
    for (int i = 0; i < n_pieces; i++) {
        if (terms[i]->n) {
            b->sealed[b->n_sealed++] = (Segment){terms[i]->a, tfs[i]->a, terms[i]->n};
            b->sealed_n += terms[i]->n;
        } else {
            free(terms[i]->a); free(tfs[i]->a);
        }
        memset(terms[i], 0, sizeof(VecI32)); memset(tfs[i], 0, sizeof(VecI32));
    }
    return 0;
}

/* Append documents to b: counts[d] terms and pcounts[d] postings each, their postings (terms, tfs)
 * in n_pieces consecutive pieces, which the builder takes over. -1: out of memory (nothing appended). */
int builder_append(Builder *b, const int64_t *counts, const int64_t *pcounts, Py_ssize_t n_docs,
                   VecI32 **terms, VecI32 **tfs, int n_pieces) {
    if (grow((void **)&b->doc_end.a, &b->doc_end.cap, b->doc_end.n + n_docs, 8) ||
        grow((void **)&b->doc_len.a, &b->doc_len.cap, b->doc_len.n + n_docs, 4)) return -1;
    Py_ssize_t pos = b->sealed_n + b->term.n;
    if (builder_adopt(b, terms, tfs, n_pieces)) return -1;
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        pos += pcounts[d];
        b->doc_end.a[b->doc_end.n++] = pos;
        b->doc_len.a[b->doc_len.n++] = (int32_t)counts[d];
    }
    return 0;
}

/* Per-term scratch for text_postings: n_terms marks, all 0; NULL: out of memory. */
uint64_t *postings_scratch(Py_ssize_t n_terms) {
    return calloc((size_t)(n_terms ? n_terms : 1), sizeof(uint64_t));
}

/* The postings of n_texts texts with counts[d] term ids each (ids < n_terms), appended to out;
 * pcounts[d]: text d's number of postings. -1: out of memory. */
int ids_to_postings(const int32_t *ids, const int64_t *counts, Py_ssize_t n_texts, Py_ssize_t n_terms,
                           Postings *out, int64_t *pcounts) {
    Py_ssize_t total = 0;
    for (Py_ssize_t d = 0; d < n_texts; d++) total += counts[d];
    uint64_t *mark = postings_scratch(n_terms);
    if (!mark || n_texts >= UINT32_MAX || grow((void **)&out->term.a, &out->term.cap, out->term.n + total, 4) ||
        grow((void **)&out->tf.a, &out->tf.cap, out->tf.n + total, 4)) {
        free(mark);
        return -1;
    }
    for (Py_ssize_t d = 0, pos = 0; d < n_texts; pos += counts[d++])
        pcounts[d] = text_postings(ids + pos, counts[d], d, mark, out);
    free(mark);
    return 0;
}


static void Builder_dealloc(Builder *b) {
    builder_free_postings(b);
    free(b->doc_end.a); free(b->doc_len.a); free(b->last); free(b->slot);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

/* Room for term t in the builder's per-term scratch (last, slot), new entries' last = -1. -1: no memory. */
static int builder_scratch(Builder *b, int32_t t) {
    Py_ssize_t old = b->scratch, cap = b->scratch, cap2 = b->scratch;
    if (grow((void **)&b->last, &cap, (Py_ssize_t)t + 1, sizeof(int64_t)) ||
        grow((void **)&b->slot, &cap2, (Py_ssize_t)t + 1, sizeof(int64_t))) return -1;
    b->scratch = cap < cap2 ? cap : cap2;
    for (Py_ssize_t q = old; q < b->scratch; q++) b->last[q] = -1;
    return 0;
}

/* add(counts, term_ids): documents with counts[d] terms each (int64), their term ids (int32) in order */
static PyObject *Builder_add(Builder *b, PyObject *args) {
    PyObject *co, *io;
    if (!PyArg_ParseTuple(args, "OO", &co, &io)) return NULL;
    Py_buffer cb, ib;
    if (get_buffer(co, &cb, 8, "counts")) return NULL;
    if (get_buffer(io, &ib, 4, "term_ids")) { PyBuffer_Release(&cb); return NULL; }
    const int64_t *counts = cb.buf;
    const int32_t *ids = ib.buf;
    Py_ssize_t n_docs = cb.len / 8, n_ids = ib.len / 4, pos = 0;
    PyObject *ret = NULL;
    /* check everything first, so that refused input adds nothing */
    int bad = 0;
    for (Py_ssize_t d = 0; d < n_docs && !bad; d++) {
        bad = counts[d] < 0 || counts[d] > n_ids - pos || counts[d] > INT32_MAX;
        if (!bad) pos += counts[d];
    }
    if (bad || pos != n_ids) {
        PyErr_SetString(PyExc_ValueError, "counts do not add up to the number of term ids");
        goto done;
    }
    for (Py_ssize_t j = 0; j < n_ids; j++)
        if (ids[j] < 0) { PyErr_SetString(PyExc_ValueError, "negative term id"); goto done; }
    pos = 0;
    for (Py_ssize_t d = 0; d < n_docs; d++) { /* (counts and ids checked above) */
        int64_t doc = b->doc_len.n;
        for (Py_ssize_t j = pos; j < pos + counts[d]; j++) {
            int32_t t = ids[j];
            if (t >= b->scratch && builder_scratch(b, t)) { PyErr_NoMemory(); goto done; }
            if (b->last[t] != doc) {
                b->last[t] = doc;
                b->slot[t] = b->term.n;
                if (push32(&b->term, t) || push32(&b->tf, 1)) { PyErr_NoMemory(); goto done; }
            } else {
                b->tf.a[b->slot[t]]++;
            }
        }
        if (push64(&b->doc_end, b->sealed_n + b->term.n) || push32(&b->doc_len, (int32_t)counts[d])) { PyErr_NoMemory(); goto done; }
        pos += counts[d];
    }
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    PyBuffer_Release(&cb);
    PyBuffer_Release(&ib);
    return ret;
}

/* add_postings(counts, posting_counts, terms, tfs): documents with counts[d] terms (int64) and
 * posting_counts[d] postings (int64) each, their postings (int32 term, int32 tf) document after
 * document: what Encoder.encode(postings=True) returns. */
static PyObject *Builder_add_postings(Builder *b, PyObject *args) {
    PyObject *o[4];
    if (!PyArg_ParseTuple(args, "OOOO", &o[0], &o[1], &o[2], &o[3])) return NULL;
    Py_buffer v[4];
    static const Py_ssize_t item[4] = {8, 8, 4, 4};
    static const char *what[4] = {"counts", "posting_counts", "terms", "tfs"};
    int n_views = 0;
    PyObject *ret = NULL;
    for (int i = 0; i < 4; i++) {
        if (get_buffer(o[i], &v[i], item[i], what[i])) goto done;
        n_views++;
    }
    const int64_t *counts = v[0].buf, *pcounts = v[1].buf;
    const int32_t *terms = v[2].buf, *tfs = v[3].buf;
    Py_ssize_t n_docs = v[0].len / 8, n_post = v[2].len / 4;
    if (v[1].len / 8 != n_docs || v[3].len / 4 != n_post) {
        PyErr_SetString(PyExc_ValueError, "add_postings: counts and posting_counts, terms and tfs must have equal lengths");
        goto done;
    }
    /* check everything first, so that refused input adds nothing: each document's postings hold
     * distinct terms >= 0, tfs >= 1 adding up to its count */
    Py_ssize_t pos = 0;
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        if (pcounts[d] < 0 || pcounts[d] > n_post - pos || counts[d] < 0 || counts[d] > INT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "add_postings: posting counts do not add up to the number of postings");
            goto done;
        }
        int64_t sum = 0;
        for (Py_ssize_t j = pos; j < pos + pcounts[d]; j++) {
            int32_t t = terms[j];
            if (t < 0 || tfs[j] < 1) {
                PyErr_SetString(PyExc_ValueError, t < 0 ? "add_postings: negative term id" : "add_postings: tf < 1");
                goto done;
            }
            if (t >= b->scratch && builder_scratch(b, t)) { PyErr_NoMemory(); goto done; }
            /* b->last holds -1 or documents numbered below b->doc_len.n: mark with -(2 + d) here */
            if (b->last[t] == -2 - (int64_t)d) {
                PyErr_SetString(PyExc_ValueError, "add_postings: a term repeats within a document's postings");
                goto done;
            }
            b->last[t] = -2 - (int64_t)d;
            sum += tfs[j];
        }
        if (sum != counts[d]) {
            PyErr_SetString(PyExc_ValueError, "add_postings: a document's tfs do not add up to its count");
            goto done;
        }
        pos += pcounts[d];
    }
    if (pos != n_post) {
        PyErr_SetString(PyExc_ValueError, "add_postings: posting counts do not add up to the number of postings");
        goto done;
    }
    if (grow((void **)&b->term.a, &b->term.cap, b->term.n + n_post, 4) || grow((void **)&b->tf.a, &b->tf.cap, b->tf.n + n_post, 4) ||
        grow((void **)&b->doc_end.a, &b->doc_end.cap, b->doc_end.n + n_docs, 8) ||
        grow((void **)&b->doc_len.a, &b->doc_len.cap, b->doc_len.n + n_docs, 4)) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(b->term.a + b->term.n, terms, (size_t)n_post * 4);
    memcpy(b->tf.a + b->tf.n, tfs, (size_t)n_post * 4);
    pos = b->sealed_n + b->term.n;
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        pos += pcounts[d];
        b->doc_end.a[b->doc_end.n++] = pos;
        b->doc_len.a[b->doc_len.n++] = (int32_t)counts[d];
    }
    b->term.n += n_post;
    b->tf.n += n_post;
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    if (b->last) /* undo the marks: -1 again where they were set (those are the only negatives below -1) */
        for (Py_ssize_t t = 0; t < b->scratch; t++) if (b->last[t] < -1) b->last[t] = -1;
    for (int i = 0; i < n_views; i++) PyBuffer_Release(&v[i]);
    return ret;
}

/* finish(n_terms) -> (indptr int64, indices int32, tf int32, doc_lengths int32) as bytes; frees the builder's memory */
/* finish on threads: each job takes a run of consecutive segments (whole documents, in order),
 * counts their postings per term, then (once indptr and the job's first slot per term are known)
 * scatters them. */
typedef struct {
    const Segment *segs;    /* the job's segments */
    int n_segs;
    Py_ssize_t p0, d0;      /* the job's first posting and its document */
    const int64_t *doc_end;
    Py_ssize_t n_terms;
    int64_t *count;         /* pass 1: postings per term; pass 2: the next slot per term */
    int32_t *indices, *tf;
    const float *idf, *inv; /* with a scorer: each posting's Lucene score goes to tf's slot (see finish) */
    int bad;                /* a term id >= n_terms */
} FinishJob;

static void *finish_count(void *arg) {
    FinishJob *j = arg;
    for (int s = 0; s < j->n_segs; s++) {
        const int32_t *term = j->segs[s].term;
        for (Py_ssize_t i = 0; i < j->segs[s].n; i++) {
            if ((uint64_t)(uint32_t)term[i] >= (uint64_t)j->n_terms) { j->bad = 1; return NULL; } /* negatives too */
            j->count[term[i]]++;
        }
    }
    return NULL;
}

/* Prefetch distances of finish_scatter, in postings: a term's next slot is fetched SCATTER_FAR postings
 * ahead, the two output lines it points at SCATTER_NEAR ahead (a hint only: the slot may have moved on
 * by that posting's turn). A rare term's posting otherwise waits for its slot's cache miss, then its
 * two stores' misses. 1M synthetic documents (45M postings, one thread, outputs in RAM): 0.59-0.64 s ->
 * 0.49-0.50 s (best of 3, alternated), same arrays; distances 16/8 to 64/32 all within 0.49-0.57 s. */
#define SCATTER_FAR 32
#define SCATTER_NEAR 16

/* finish_scatter when every slot fits an int32 (under 2^31 postings): each term's next slot and its idf
 * side by side in 8 bytes, written over the job's int64 next slots in place, so that a posting reads one
 * line of per-term state where it read two (the next slot, then the idf). The same stores, in the same
 * order, as finish_scatter. */
typedef struct {
    int32_t at;
    float w;
} TermSlot;
_Static_assert(sizeof(TermSlot) == sizeof(int64_t), "a TermSlot takes an int64 next slot's place");

static void *finish_scatter32(void *arg) {
    FinishJob *j = arg;
    const int64_t *doc_end = j->doc_end;
    TermSlot *slot = (TermSlot *)j->count;
    int32_t *indices = j->indices, *out_tf = j->tf;
    const float *idf = j->idf, *inv = j->inv;
    for (Py_ssize_t t = 0; t < j->n_terms; t++) { /* (in place: entry t is read before it is written; memcpy */
        TermSlot ts = {(int32_t)j->count[t], idf ? idf[t] : 0.0f}; /* gives the memory its new type) */
        memcpy(j->count + t, &ts, sizeof ts);
    }
    Py_ssize_t d = j->d0, p = j->p0;
    for (int s = 0; s < j->n_segs; s++) {
        const int32_t *term = j->segs[s].term, *f = j->segs[s].tf;
        Py_ssize_t n = j->segs[s].n;
        for (Py_ssize_t i = 0; i < n; i++, p++) {
            if (i + SCATTER_FAR < n) __builtin_prefetch(slot + term[i + SCATTER_FAR], 1);
            if (i + SCATTER_NEAR < n) {
                int32_t ahead = slot[term[i + SCATTER_NEAR]].at;
                __builtin_prefetch(indices + ahead, 1);
                __builtin_prefetch(out_tf + ahead, 1);
            }
            while (doc_end[d] <= p) d++;
            TermSlot *ts = slot + term[i];
            int32_t dest = ts->at++;
            indices[dest] = (int32_t)d;
            if (idf) {
                float score = lucene_score(ts->w, f[i], inv[d]);
                memcpy(out_tf + dest, &score, 4);
            } else {
                out_tf[dest] = f[i];
            }
        }
        free((void *)term); free((void *)f);
    }
    return NULL;
}

static void *finish_scatter(void *arg) {
    FinishJob *j = arg;
    const int64_t *doc_end = j->doc_end;
    int64_t *count = j->count;
    int32_t *indices = j->indices, *out_tf = j->tf;
    const float *idf = j->idf, *inv = j->inv;
    Py_ssize_t d = j->d0, p = j->p0;
    for (int s = 0; s < j->n_segs; s++) {
        const int32_t *term = j->segs[s].term, *f = j->segs[s].tf;
        Py_ssize_t n = j->segs[s].n;
        for (Py_ssize_t i = 0; i < n; i++, p++) {
            if (i + SCATTER_FAR < n) __builtin_prefetch(count + term[i + SCATTER_FAR], 1);
            if (i + SCATTER_NEAR < n) {
                int64_t ahead = count[term[i + SCATTER_NEAR]];
                __builtin_prefetch(indices + ahead, 1);
                __builtin_prefetch(out_tf + ahead, 1);
            }
            while (doc_end[d] <= p) d++;
            int64_t dest = count[term[i]]++;
            indices[dest] = (int32_t)d;
            if (idf) {
                float score = lucene_score(idf[term[i]], f[i], inv[d]);
                memcpy(out_tf + dest, &score, 4);
            } else {
                out_tf[dest] = f[i];
            }
        }
        /* scattered: free the segment now, so the input shrinks as the output fills */
        free((void *)term); free((void *)f);
    }
    return NULL;
}

/* finish(n_terms, n_threads=1, allocate=None) -> (indptr int64, indices int32, tf int32, doc_lengths int32)
 * as bytes (tf as a bytearray, which score_lucene may overwrite with the scores); frees the builder's
 * memory. allocate: None, or a callable allocate(n_postings) -> (indices, tf), two writable contiguous
 * buffers of n_postings * 4 bytes each (e.g. arrays mapped on the files of an index cache entry being
 * written) that the postings are scattered into, and which finish returns in place of its own. */
static PyObject *Builder_finish(Builder *b, PyObject *args) {
    Py_ssize_t n_terms;
    int n_threads = 1;
    PyObject *allocate = Py_None, *given = NULL, *scorer = Py_None, *scored = NULL;
    Py_buffer sv[2];
    int n_sv = 0;
    PyObject *indptr_b = NULL, *indices_b = NULL, *tf_b = NULL, *len_b = NULL, *ret = NULL;
    Py_buffer out[2];
    int n_out = 0;
    int64_t *counts = NULL;
    Segment *segs = NULL;
    FinishJob jobs[MAX_THREADS];
    int wide = 0; /* (1: the int64 scatter, which only corpora of 2^31 postings or more take: tested with it) */
    if (!PyArg_ParseTuple(args, "n|iOOp", &n_terms, &n_threads, &allocate, &scorer, &wide)) return NULL;
    if (n_terms < 0) return PyErr_Format(PyExc_ValueError, "n_terms must be >= 0, got %zd", n_terms);
    Py_ssize_t n_post = b->sealed_n + b->term.n;
    if (allocate != Py_None) { /* before anything is taken apart: a failure leaves the builder whole */
        given = PyObject_CallFunction(allocate, "n", n_post);
        if (!given) return NULL;
        if (b->sealed_n + b->term.n != n_post) { /* the callback added to this builder: the buffers would not fit */
            Py_DECREF(given);
            return PyErr_Format(PyExc_RuntimeError, "allocate changed the builder it allocates for");
        }
        if (!PyTuple_Check(given) || PyTuple_GET_SIZE(given) != 2) {
            Py_DECREF(given);
            return PyErr_Format(PyExc_TypeError, "allocate must return a tuple (indices, tf)");
        }
        for (; n_out < 2; n_out++) {
            if (PyObject_GetBuffer(PyTuple_GET_ITEM(given, n_out), &out[n_out], PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS))
                break;
            if (out[n_out].len != n_post * 4) {
                PyErr_Format(PyExc_ValueError, "allocate gave a buffer of %zd bytes for %zd postings (4 bytes each)",
                             out[n_out].len, n_post);
                PyBuffer_Release(&out[n_out]);
                break;
            }
        }
        if (n_out == 2 && n_post && (char *)out[0].buf < (char *)out[1].buf + out[1].len &&
            (char *)out[1].buf < (char *)out[0].buf + out[0].len) {
            PyErr_SetString(PyExc_ValueError, "allocate gave overlapping buffers");
            n_out = 2;
            for (int i = 0; i < n_out; i++) PyBuffer_Release(&out[i]);
            Py_DECREF(given);
            return NULL;
        }
        if (n_out < 2) {
            for (int i = 0; i < n_out; i++) PyBuffer_Release(&out[i]);
            Py_DECREF(given);
            return NULL;
        }
    }
    /* all segments in order: the sealed ones, then term/tf */
    segs = malloc((size_t)(b->n_sealed + 1) * sizeof(Segment));
    if (!segs) {
        PyErr_NoMemory();
        goto done;
    }
    int n_seg = 0;
    for (int i = 0; i <= b->n_sealed; i++) {
        Segment sg = i < b->n_sealed ? b->sealed[i] : (Segment){b->term.a, b->tf.a, b->term.n};
        if (sg.n) segs[n_seg++] = sg;
    }
    int n_jobs = n_threads < 1 ? 1 : n_threads > MAX_THREADS ? MAX_THREADS : n_threads;
    if (n_jobs > n_seg) n_jobs = n_seg ? n_seg : 1;
    size_t per = (size_t)(n_terms ? n_terms : 1);
    counts = calloc((size_t)n_jobs * per, sizeof(int64_t));
    indptr_b = PyBytes_FromStringAndSize(NULL, (n_terms + 1) * 8);
    if (given) { /* the caller's buffers */
        indices_b = PyTuple_GET_ITEM(given, 0);
        tf_b = PyTuple_GET_ITEM(given, 1);
        Py_INCREF(indices_b);
        Py_INCREF(tf_b);
    } else {
        indices_b = PyBytes_FromStringAndSize(NULL, n_post * 4);
        tf_b = PyByteArray_FromStringAndSize(NULL, n_post * 4); /* writable: the scores may be written over it */
    }
    len_b = bytes_of(b->doc_len.a, b->doc_len.n * 4);
    if (!counts || !indptr_b || !indices_b || !tf_b || !len_b) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    int64_t *indptr = (int64_t *)PyBytes_AS_STRING(indptr_b);
    int32_t *out_indices = given ? out[0].buf : (int32_t *)PyBytes_AS_STRING(indices_b);
    int32_t *out_tf = given ? out[1].buf : (int32_t *)PyByteArray_AS_STRING(tf_b);
    { /* jobs: runs of consecutive segments of about n_post / n_jobs postings */
        Py_ssize_t p0 = 0, d0 = 0;
        int s = 0;
        for (int i = 0; i < n_jobs; i++) {
            int s0 = s;
            Py_ssize_t goal = n_post / n_jobs * (i + 1), p = p0;
            while (s < n_seg && (i == n_jobs - 1 || s == s0 || (p < goal && n_seg - s > n_jobs - 1 - i))) p += segs[s++].n;
            jobs[i] = (FinishJob){segs + s0, s - s0, p0, d0, b->doc_end.a, n_terms, counts + (size_t)i * per,
                                  out_indices, out_tf, NULL, NULL, 0};
            p0 = p;
            while (d0 < b->doc_end.n && b->doc_end.a[d0] <= p0 && p0 < n_post) d0++; /* the next job's first document */
        }
    }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    run_jobs(jobs, sizeof(FinishJob), n_jobs, finish_count);
    for (int i = 0; i < n_jobs; i++) bad |= jobs[i].bad;
    if (!bad) {
        indptr[0] = 0;
        for (Py_ssize_t t = 0; t < n_terms; t++) { /* indptr, and each job's first slot per term */
            int64_t at = indptr[t];
            for (int i = 0; i < n_jobs; i++) {
                int64_t c = jobs[i].count[t];
                jobs[i].count[t] = at;
                at += c;
            }
            indptr[t + 1] = at;
        }
    }
    Py_END_ALLOW_THREADS
    if (!bad && scorer != Py_None) { /* the scores' factors, now that the document frequencies are known */
        Py_ssize_t want[2] = {n_terms, b->doc_len.n};
        scored = PyObject_CallFunctionObjArgs(scorer, indptr_b, len_b, NULL);
        if (!scored) goto done; /* (nothing taken apart yet: the builder is whole) */
        static const char *what[2] = {"idf", "inv"};
        if (b->sealed_n + b->term.n != n_post || b->doc_len.n != want[1] || b->doc_end.n != want[1]) {
            PyErr_SetString(PyExc_RuntimeError, "scorer changed the builder it scores for"); /* (the jobs hold */
            goto done;                                                                        /* its arrays) */
        }
        if (!PyTuple_Check(scored) || PyTuple_GET_SIZE(scored) != 2) {
            PyErr_SetString(PyExc_TypeError, "scorer must return a tuple (idf, inv) of float32 buffers");
            goto done;
        }
        for (; n_sv < 2; n_sv++) {
            if (PyObject_GetBuffer(PyTuple_GET_ITEM(scored, n_sv), &sv[n_sv], PyBUF_C_CONTIGUOUS)) goto done;
            if (sv[n_sv].len != want[n_sv] * 4) {
                PyErr_Format(PyExc_ValueError, "scorer gave %zd bytes of %s for %zd values (float32 each)",
                             sv[n_sv].len, what[n_sv], want[n_sv]);
                n_sv++;
                goto done;
            }
        }
        for (int i = 0; i < n_jobs; i++) {
            jobs[i].idf = sv[0].buf;
            jobs[i].inv = sv[1].buf;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    if (!bad) {
        /* (frees every segment) */
        run_jobs(jobs, sizeof(FinishJob), n_jobs, n_post <= INT32_MAX && !wide ? finish_scatter32 : finish_scatter);
        /* the builder's segment pointers now dangle: forget them (builder_free_postings frees none) */
        b->n_sealed = 0;
        if (!b->term.n) { free(b->term.a); free(b->tf.a); } /* (an empty one was not a segment) */
        memset(&b->term, 0, sizeof(b->term)); memset(&b->tf, 0, sizeof(b->tf));
#ifdef __GLIBC__
        /* the segments were blocks of a few MB in the encoding threads' malloc arenas, which keep
         * freed memory: give those pages back to the system now, before the scores are allocated
         * (2.5 GB at 8.8M documents otherwise counted in the process's RSS until it exits) */
        malloc_trim(0);
#endif
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_Format(PyExc_ValueError, "a term id >= n_terms %zd", n_terms);
        goto done;
    }
    ret = PyTuple_Pack(4, indptr_b, indices_b, tf_b, len_b);
    builder_free_postings(b);
    free(b->doc_end.a); free(b->doc_len.a); free(b->last); free(b->slot);
    memset(&b->doc_end, 0, sizeof(b->doc_end)); memset(&b->doc_len, 0, sizeof(b->doc_len));
    b->last = b->slot = NULL;
    b->scratch = 0;
done:
    free(counts); free(segs);
    for (int i = 0; i < n_out; i++) PyBuffer_Release(&out[i]);
    for (int i = 0; i < n_sv; i++) PyBuffer_Release(&sv[i]);
    Py_XDECREF(scored);
    Py_XDECREF(given);
    Py_XDECREF(indptr_b); Py_XDECREF(indices_b); Py_XDECREF(tf_b); Py_XDECREF(len_b);
    return ret;
}

static PyMethodDef Builder_methods[] = {
    {"add", (PyCFunction)Builder_add, METH_VARARGS, "add(counts, term_ids): append documents"},
    {"add_postings", (PyCFunction)Builder_add_postings, METH_VARARGS,
     "add_postings(counts, posting_counts, terms, tfs): append documents given as postings (Encoder.encode(postings=True))"},
    {"finish", (PyCFunction)Builder_finish, METH_VARARGS,
     "finish(n_terms, n_threads=1, allocate=None, scorer=None, wide=False) -> (indptr, indices, tf, doc_lengths)"
     " as bytes (int64, int32, int32, int32); allocate(n_postings) -> (indices, tf): writable buffers to fill instead; scorer(indptr, doc_lengths)"
     " -> (idf, inv), float32 buffers of n_terms and n_docs values: each posting's Lucene score w - w / (1 + tf * inv[d])"
     " with w = idf[t] (score_lucene's float32 operations) is written in tf's place, as float32; wide: the scatter"
     " of corpora of 2^31 postings or more (int64 slots), whatever the size (the same output)"},
    {NULL}};

PyTypeObject BuilderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "retrievers.bm25._fastbm25.PostingsBuilder",
    .tp_basicsize = sizeof(Builder),
    .tp_dealloc = (destructor)Builder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PostingsBuilder(): documents' term ids -> term-major postings with term frequencies",
    .tp_methods = Builder_methods,
    .tp_new = PyType_GenericNew,
};
