/* Search an index: the Index type. */
#include "fastbm25.h"
#include <float.h>
#include <math.h>

/* ------------------------------------------------------------------ Index: search
 * Index(indptr, indices, data, n_docs, id_rank, doc_of_rank) holds an index's arrays, checked once
 * when it is made, or by check_postings before (every position search reads or writes at is then in
 * bounds); the arrays must not change afterwards. Index.search(query_offsets, query_terms, k, constants=None, n_threads=1, doc_block)
 * checks only the queries. Per thread, documents are scored DOC_BLOCK at a time (each query term's postings for
 * the block found by galloping from an interpolated guess: documents ascend within a term), so the scratch is bounded by
 * the block and k, not the corpus; every document's terms are still added in the same order, so
 * the sums, the scores and the ranking are those of one pass over the whole corpus.
 *
 * Dynamic pruning (MaxScore, exact): each term has an upper bound, the largest score among its
 * postings (bounds[t]; +inf when a posting is negative or not finite: such a query is searched
 * exhaustively). Once the best kk keys are known (at a block's start), the query's terms are taken
 * in ascending bound order and the longest prefix whose bounds add up to a score below the kk-th
 * best score (strictly: an equal score could still win on document id) is non-essential: a document
 * holding only those terms cannot enter the top kk. The block's candidates are then the documents of
 * the essential terms; every candidate is scored with all its terms, in the same term order as the
 * exhaustive pass (the non-essential terms' postings looked up for the candidates only), so scores,
 * keys and ranking are those of the exhaustive pass, which search(prune=False) still runs. Before
 * the bar has risen on its own, a speculative one (the first block's m-th best score, checked at the
 * end: see speculative_rank) stands in for it. */
#define DOC_BLOCK 65536
#define BOUND_SLACK 1e-9 /* relative: covers the rounding of double sums of up to MAX_PRUNED_TERMS values */
#define MAX_PRUNED_TERMS 4096 /* longer queries are searched exhaustively (their terms are insertion-sorted) */
#ifndef PRUNE_RATIO
#define PRUNE_RATIO 16 /* a block is pruned when its essential terms hold under 1/PRUNE_RATIO of its postings (1M synthetic documents, one thread, k = 10 / 100 / 1,001: 0.23 / 0.25 / 0.33 s at 16, 0.27 / 0.29 / 0.37 s at 4: an exhaustive block reads back the essential terms only) */
#endif

typedef struct {
    PyObject_HEAD
    Py_buffer v[5]; /* indptr int64, indices int32, data float32, id_rank int64, doc_of_rank int64 */
    int n_views;
    Py_ssize_t n_docs, n_terms, n_post;
    float *bounds; /* per term: the largest posting score, +inf when one is negative or not finite */
    int64_t spec_tries, spec_fails; /* speculative bars tried and dropped by this index's searches (atomics) */
} Index;

#if defined(__GNUC__) && !defined(__clang__)
#define VECTORIZE __attribute__((optimize("tree-vectorize"))) /* GCC before 12 vectorizes only at -O3 */
#else
#define VECTORIZE
#endif

/* The postings check: each term's documents indices[indptr[t]..indptr[t+1]) strictly ascending in
 * [0, limit). Search relies on it twice: a term's postings for a block are found by binary search,
 * and every posting so found is written at its document's place in the block's scratch. A term out
 * of order could put a far document in a block's range, to be written past the scratch; so the
 * order is checked, not only the range (strict ascent from a first >= 0 to a last < limit bounds
 * every value). Terms t0..t1 per job; the jobs split the postings, not the terms. */
typedef struct {
    const int64_t *indptr;
    const int32_t *indices;
    Py_ssize_t t0, t1;
    uint32_t limit;
    int bad;
} OrderJob;

static VECTORIZE void *postings_order_job(void *arg) {
    OrderJob *j = arg;
    const int32_t *a = j->indices;
    uint32_t bad = 0;
    for (Py_ssize_t t = j->t0; t < j->t1; t++) {
        int64_t s = j->indptr[t], e = j->indptr[t + 1];
        if (s == e) continue;
        bad |= (a[s] < 0) | ((uint32_t)a[e - 1] >= j->limit);
        for (int64_t p = s + 1; p < e; p++) bad |= a[p] <= a[p - 1];
    }
    j->bad = bad != 0;
    return NULL;
}

/* NULL when indptr (n_terms + 1 entries) rises from 0 to n_post and every term's postings are
 * strictly ascending documents in [0, n_docs), else what is wrong. The postings are read on up to
 * n_threads threads (call without the GIL). */
static const char *postings_problem(const int64_t *indptr, Py_ssize_t n_terms, const int32_t *indices,
                                    Py_ssize_t n_post, Py_ssize_t n_docs, int n_threads) {
    if (n_docs > INT32_MAX) return "n_docs must be below 2^31 (documents are int32 numbers in blocks)";
    if (indptr[0] != 0) return "indptr must start at 0";
    if (indptr[n_terms] != n_post) return "indptr does not span the postings";
    for (Py_ssize_t t = 0; t < n_terms; t++)
        if (indptr[t] > indptr[t + 1]) return "indptr is not ascending";
    if (n_threads < 1) n_threads = 1;
    if (n_threads > MAX_THREADS) n_threads = MAX_THREADS;
    if (n_post < ((Py_ssize_t)1 << 20)) n_threads = 1; /* not worth a thread */
    OrderJob jobs[MAX_THREADS];
    Py_ssize_t t0 = 0;
    for (int i = 0; i < n_threads; i++) { /* job i ends at the first term ending past (i + 1) / n of the postings */
        Py_ssize_t lo = t0, hi = n_terms;
        int64_t goal = (int64_t)((double)n_post * (i + 1) / n_threads);
        if (i == n_threads - 1) lo = n_terms;
        while (lo < hi) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (indptr[mid + 1] < goal) lo = mid + 1;
            else hi = mid;
        }
        Py_ssize_t t1 = lo < n_terms ? lo + 1 : n_terms;
        jobs[i] = (OrderJob){indptr, indices, t0, t1, (uint32_t)n_docs, 0};
        t0 = t1;
    }
    run_jobs(jobs, sizeof(OrderJob), n_threads, postings_order_job);
    for (int i = 0; i < n_threads; i++)
        if (jobs[i].bad) return "a posting's document is out of range or out of order (each term's must ascend)";
    return NULL;
}

/* check_postings(indptr, indices, n_docs, n_threads=1): raises ValueError unless indptr rises from 0
 * to len(indices) and each term's documents are strictly ascending in [0, n_docs). */
PyObject *check_postings(PyObject *self, PyObject *args) {
    PyObject *o[2];
    Py_ssize_t n_docs;
    int n_threads = 1;
    if (!PyArg_ParseTuple(args, "OOn|i", &o[0], &o[1], &n_docs, &n_threads)) return NULL;
    Py_buffer v[2];
    if (get_buffer(o[0], &v[0], 8, "indptr")) return NULL;
    if (get_buffer(o[1], &v[1], 4, "indices")) {
        PyBuffer_Release(&v[0]);
        return NULL;
    }
    const char *why = NULL;
    if (v[0].len < 8) why = "indptr needs at least one entry";
    else if (n_docs < 0) why = "n_docs must be >= 0";
    else {
        Py_BEGIN_ALLOW_THREADS
        why = postings_problem(v[0].buf, v[0].len / 8 - 1, v[1].buf, v[1].len / 4, n_docs, n_threads);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&v[0]);
    PyBuffer_Release(&v[1]);
    if (why) return PyErr_Format(PyExc_ValueError, "%s", why);
    Py_RETURN_NONE;
}

/* The bound of each term's postings data[indptr[t]..indptr[t+1]): their maximum (0 for a term
 * without postings), +inf when one of them is negative (-0.0 included) or not finite (never pruned
 * on). On the float32 bits as unsigned integers: those of the floats in [+0, FLT_MAX] are
 * 0..0x7F7FFFFF, in the floats' order, and every other float's are larger; so one integer maximum
 * (vectorized) gives both the bound and whether it is usable. */
static VECTORIZE void term_bounds(const int64_t *indptr, const float *data, Py_ssize_t n_terms, float *out) {
    typedef uint32_t __attribute__((may_alias)) bits32; /* read as integers: no aliasing assumption broken */
    const bits32 *bits = (const bits32 *)data;
    for (Py_ssize_t t = 0; t < n_terms; t++) {
        uint32_t m = 0;
        for (int64_t p = indptr[t]; p < indptr[t + 1]; p++) m = bits[p] > m ? bits[p] : m;
        float v;
        memcpy(&v, &m, 4);
        out[t] = m > 0x7F7FFFFFu ? INFINITY : v;
    }
}

static void Index_dealloc(Index *x) {
    for (int i = 0; i < x->n_views; i++) PyBuffer_Release(&x->v[i]);
    free(x->bounds);
    Py_TYPE(x)->tp_free((PyObject *)x);
}

static int Index_init(Index *x, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"indptr", "indices", "data", "n_docs", "id_rank", "doc_of_rank", "bounds", "checked",
                             "n_threads", NULL};
    PyObject *o[5], *bounds_arg = Py_None;
    Py_ssize_t n_docs;
    int checked = 0, n_threads = 1;
    if (x->n_views) {
        PyErr_SetString(PyExc_RuntimeError, "Index is already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOnOO|Opi", kwlist, &o[0], &o[1], &o[2], &n_docs, &o[3], &o[4],
                                     &bounds_arg, &checked, &n_threads))
        return -1;
    static const Py_ssize_t item[5] = {8, 4, 4, 8, 8};
    static const char *what[5] = {"indptr", "indices", "data", "id_rank", "doc_of_rank"};
    for (int i = 0; i < 5; i++) {
        if (get_buffer(o[i], &x->v[i], item[i], what[i])) return -1;
        x->n_views++;
    }
    const int64_t *indptr = x->v[0].buf, *rank = x->v[3].buf, *order = x->v[4].buf;
    const int32_t *indices = x->v[1].buf;
    Py_ssize_t n_terms = x->v[0].len / 8 - 1, n_post = x->v[1].len / 4;
    if (n_terms < 0) {
        PyErr_SetString(PyExc_ValueError, "Index: indptr needs at least one entry");
        return -1;
    }
    if (n_docs > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "Index: n_docs must be below 2^31 (documents are int32 numbers in blocks)");
        return -1;
    }
    if (n_docs < 0 || x->v[2].len / 4 != n_post || x->v[3].len / 8 != n_docs || x->v[4].len / 8 != n_docs ||
        indptr[n_terms] != n_post) {
        PyErr_SetString(PyExc_ValueError, "Index: array sizes do not fit together");
        return -1;
    }
    if (!checked) { /* (the caller's SparseIndex.validate ran check_postings on these very arrays) */
        const char *why;
        Py_BEGIN_ALLOW_THREADS
        why = postings_problem(indptr, n_terms, indices, n_post, n_docs, n_threads);
        Py_END_ALLOW_THREADS
        if (why) {
            PyErr_Format(PyExc_ValueError, "Index: %s", why);
            return -1;
        }
    }
    uint64_t bad = 0;
    for (Py_ssize_t d = 0; d < n_docs; d++) bad |= ((uint64_t)rank[d] >= (uint64_t)n_docs) | ((uint64_t)order[d] >= (uint64_t)n_docs);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "Index: id_rank and doc_of_rank values must lie in [0, n_docs)");
        return -1;
    }
    x->n_docs = n_docs;
    x->n_terms = n_terms;
    x->n_post = n_post;
    x->bounds = malloc((size_t)(n_terms ? n_terms : 1) * sizeof(float));
    if (!x->bounds) {
        PyErr_NoMemory();
        return -1;
    }
    if (bounds_arg == Py_None) {
        Py_BEGIN_ALLOW_THREADS
        term_bounds(indptr, x->v[2].buf, n_terms, x->bounds);
        Py_END_ALLOW_THREADS
    } else { /* bounds made by bounds() earlier (a cache): copied, each checked to be a number >= 0 */
        Py_buffer b;
        if (get_buffer(bounds_arg, &b, 4, "bounds")) return -1;
        int ok = b.len / 4 == n_terms;
        if (ok) memcpy(x->bounds, b.buf, (size_t)n_terms * sizeof(float));
        PyBuffer_Release(&b);
        for (Py_ssize_t t = 0; ok && t < n_terms; t++) ok = x->bounds[t] >= 0.0f; /* false for NaN */
        if (!ok) {
            PyErr_SetString(PyExc_ValueError, "Index: bounds needs one float32 >= 0 (or +inf) per term");
            return -1;
        }
    }
    return 0;
}

static PyObject *Index_bounds(Index *x, PyObject *unused) {
    if (!x->n_views) {
        PyErr_SetString(PyExc_RuntimeError, "Index is not initialised");
        return NULL;
    }
    return bytes_of(x->bounds, x->n_terms * (Py_ssize_t)sizeof(float));
}

/* One thread's share of a search: it takes the next query of 0..q1 from the shared counter *next
 * until none is left (threads stay busy whatever the queries cost), each written at q * kk of the
 * outputs, so the results do not depend on which thread searched which query. The queries are taken
 * in by_cost's order, most postings first (when given), so that the last to finish is a short one. */
typedef struct {
    const int64_t *indptr, *qoff, *rank, *order;
    const int32_t *indices, *qterms;
    const float *data, *consts, *qweights; /* qweights: NULL, or a float32 weight per query term */
    const float *bounds;                   /* per term (Index.bounds), or NULL: no pruning */
    Py_ssize_t n_docs, kk, longest, q1, block;
    int64_t *hits, *docs_out;
    double *scores_out;
    int failed;
    Py_ssize_t *next;
    const Py_ssize_t *by_cost; /* the order in which the queries are taken, or NULL: 0..q1 */
    int64_t *spec_tries, *spec_fails; /* the Index's counts: speculation stops when most bars fail */
} SearchJob;

/* First position in indices[lo..hi) (ascending) holding a document >= d. */
static inline int64_t lower_bound(const int32_t *indices, int64_t lo, int64_t hi, int32_t d) {
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (indices[mid] < d) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* lower_bound from lo, galloping: cheap when the answer is near lo. */
static inline int64_t gallop(const int32_t *indices, int64_t lo, int64_t hi, int32_t d) {
    if (lo >= hi || indices[lo] >= d) return lo;
    int64_t step = 1; /* indices[lo] < d */
    while (lo + step < hi && indices[lo + step] < d) {
        lo += step;
        step <<= 1;
    }
    return lower_bound(indices, lo + 1, lo + step < hi ? lo + step : hi, d);
}

/* lower_bound from a guess g in [lo, hi): galloping out of g (forward when indices[g] < d, else
 * backward), then a binary search of the last step. Cheap when the answer is near g: a block's end
 * in a term's postings is guessed by interpolation (postings spread evenly over the documents). */
static inline int64_t seek(const int32_t *indices, int64_t lo, int64_t hi, int32_t d, int64_t g) {
    if (lo >= hi) return lo;
    if (g < lo) g = lo;
    if (g >= hi) g = hi - 1;
    int64_t step = 1;
    if (indices[g] < d) { /* the answer is in (g, hi] */
        int64_t from = g + 1;
        while (g + step < hi && indices[g + step] < d) {
            from = g + step + 1;
            step <<= 1;
        }
        return lower_bound(indices, from, g + step < hi ? g + step : hi, d);
    }
    int64_t to = g; /* indices[to] >= d: the answer is in [lo, to] */
    while (g - step >= lo && indices[g - step] >= d) {
        to = g - step;
        step <<= 1;
    }
    return lower_bound(indices, g - step >= lo ? g - step + 1 : lo, to, d);
}

/* Sort a[0..n) (values in [0, limit)) ascending, tmp[0..n) as scratch: LSD radix by bytes. */
static void sort_block_docs(int32_t *a, int32_t *tmp, Py_ssize_t n, Py_ssize_t limit) {
    if (n <= 32) {
        sort_i32(a, n);
        return;
    }
    int32_t *src = a, *dst = tmp;
    for (int shift = 0; shift < 32 && (limit - 1) >> shift; shift += 8) {
        Py_ssize_t count[257] = {0};
        for (Py_ssize_t i = 0; i < n; i++) count[((uint32_t)src[i] >> shift & 255) + 1]++;
        for (int b = 0; b < 256; b++) count[b + 1] += count[b];
        for (Py_ssize_t i = 0; i < n; i++) dst[count[(uint32_t)src[i] >> shift & 255]++] = src[i];
        int32_t *t = src; src = dst; dst = t;
    }
    if (src != a) memcpy(a, src, (size_t)n * 4);
}

/* Add the postings indices/data[p..stop) (documents from b0, of one block), each score times boost
 * in float32, to acc in double; documents not seen yet are marked and appended to touched (one slot
 * past the block's size is written to, branch-free). Returns the new number of touched documents. */
static inline Py_ssize_t add_postings(const int32_t *indices, const float *data, int64_t p, int64_t stop, int32_t b0,
                                      float boost, double *acc, unsigned char *seen, int32_t *touched,
                                      Py_ssize_t n_touched) {
    for (; p < stop; p++) {
        int32_t d = indices[p] - b0;
        float val = data[p] * boost; /* (x * 1.0f is x: exact, and no branch) */
        acc[d] += (double)val;
        touched[n_touched] = d; /* kept when d is new */
        n_touched += !seen[d];
        seen[d] = 1;
    }
    return n_touched;
}

/* An exhaustive block of a BM25 query without constants, in two passes over its postings (cursor[u]
 * to stops[u] of each term u) and no list of the documents seen (whose upkeep put a load on the
 * add's critical path): the first adds every posting to acc (zero on entry) in term order, as the
 * listed pass does; the second reads each posting's document's sum, sets it back to 0 (so a
 * document's first posting reads its sum, a later one 0) and keeps the document when its float32
 * score is > 0 with bits >= least_bits. The listed pass keeps the same documents with the same bits:
 * an unlisted document's sum is 0, never kept. The second pass reads only the postings of the
 * essential terms, by_bound[n_cheap..nt) (all terms when by_bound is NULL), and sets the others'
 * documents to 0 unread: a document of non-essential terms only scores below the bar (least_bits),
 * as non_essential chose them, so is never kept. acc is zero again on return; the cursors are moved
 * to the stops. Returns the number kept (bits in sbits, block positions in docs). (Out of line: its
 * loops get their registers whatever search_run holds.) */
static __attribute__((noinline)) Py_ssize_t scan_block(const int32_t *indices, const float *data, int64_t *cursor, const int64_t *stops,
                             const float *boosts, Py_ssize_t nt, const Py_ssize_t *by_bound, Py_ssize_t n_cheap,
                             int32_t b0, double *acc, int32_t least_bits, int32_t *sbits, int32_t *docs,
                             const int64_t *rank_b0) {
    for (Py_ssize_t u = 0; u < nt; u++) {
        float boost = boosts[u];
        if (boost == 1.0f)
            for (int64_t p = cursor[u]; p < stops[u]; p++) acc[indices[p] - b0] += (double)data[p];
        else
            for (int64_t p = cursor[u]; p < stops[u]; p++) acc[indices[p] - b0] += (double)(data[p] * boost);
    }
    Py_ssize_t n_pos = 0;
    for (Py_ssize_t i = n_cheap; i < nt; i++) { /* the essential terms' documents: read, kept or not */
        Py_ssize_t u = by_bound ? by_bound[i] : i;
        for (int64_t p = cursor[u]; p < stops[u]; p++) {
            int32_t d = indices[p] - b0, bits;
            float s = (float)acc[d];
            acc[d] = 0.0;
            memcpy(&bits, &s, 4);
            if (s > 0 && bits >= least_bits) { /* rare once the bar has risen: predicted not taken */
                __builtin_prefetch(rank_b0 + d); /* its key reads it */
                sbits[n_pos] = bits;
                docs[n_pos++] = d;
            }
        }
    }
    for (Py_ssize_t i = 0; i < n_cheap; i++) { /* the others' (scores below the bar when alone): zeroed */
        Py_ssize_t u = by_bound[i];
        for (int64_t p = cursor[u]; p < stops[u]; p++) acc[indices[p] - b0] = 0.0;
    }
    for (Py_ssize_t u = 0; u < nt; u++) cursor[u] = stops[u];
    return n_pos;
}

/* How many of the query's terms, taken in ascending bound order (by_bound), are non-essential: the
 * longest prefix whose bounds, summed (with slack for the rounding of a sum in another order), give
 * a float32 score (+ c) strictly below the kk-th best score so far, thr. */
static Py_ssize_t non_essential(const float *ub, const Py_ssize_t *by_bound, Py_ssize_t nt, int has_c, float c,
                                float thr) {
    double sum = 0.0;
    Py_ssize_t i = 0;
    for (; i < nt; i++) {
        double s2 = sum + (double)ub[by_bound[i]];
        float bound = (float)(s2 * (1.0 + BOUND_SLACK));
        if (has_c) bound = bound + c;
        if (!(bound < thr)) break;
        sum = s2;
    }
    return i;
}

/* SELECT_DESC(name, T): T name(T *a, n, kk) moves the kk largest of a[0..n) to a[0..kk) (in no
 * particular order), 0 < kk <= n, and returns the kk-th largest: quickselect (median of three,
 * Hoare partition: a[lo..j] >= pivot >= a[j+1..hi], lo <= j < hi), no sorting. */
#define SELECT_DESC(name, T)                                                                              \
    static T name(T *a, Py_ssize_t n, Py_ssize_t kk) {                                                    \
        Py_ssize_t lo = 0, hi = n - 1, want = kk - 1;                                                     \
        while (hi - lo > 16) {                                                                            \
            Py_ssize_t mid = lo + (hi - lo) / 2;                                                          \
            T x = a[lo], y = a[mid], z = a[hi];                                                           \
            T pivot = (x < y) ? ((y < z) ? y : (x < z ? z : x)) : ((x < z) ? x : (y < z ? z : y));        \
            Py_ssize_t i = lo, j = hi;                                                                    \
            for (;;) {                                                                                    \
                while (a[i] > pivot) i++;                                                                 \
                while (a[j] < pivot) j--;                                                                 \
                if (i >= j) break;                                                                        \
                T t = a[i]; a[i] = a[j]; a[j] = t;                                                        \
                i++;                                                                                      \
                j--;                                                                                      \
            }                                                                                             \
            if (want <= j) hi = j;                                                                        \
            else lo = j + 1;                                                                              \
        }                                                                                                 \
        for (Py_ssize_t i = lo + 1; i <= hi; i++) { /* insertion sort, descending */                     \
            T v = a[i];                                                                                   \
            Py_ssize_t j = i;                                                                             \
            while (j > lo && a[j - 1] < v) { a[j] = a[j - 1]; j--; }                                      \
            a[j] = v;                                                                                     \
        }                                                                                                 \
        return a[want];                                                                                   \
    }
SELECT_DESC(top_select, int64_t)
SELECT_DESC(kth_largest_i32, int32_t)

/* The best kk keys so far: keys[0..kk) a binary min-heap (keys[0] the kk-th best, the bar a later
 * key must pass), the keys of the last block appended after them. At a block's start they are
 * merged: a few new keys (under kk / HEAP_SHARE) each replace the root when larger, which sinks to
 * its place (log kk steps); many are merged by a selection over all of them (O(kk + new)), and the
 * best kk made a heap again. The keys are distinct; the final top k is sorted once, by top_sorted,
 * so the order in which they are kept never shows. */
#define HEAP_SHARE 4
static void heap_sink(int64_t *h, Py_ssize_t n, Py_ssize_t i) {
    int64_t v = h[i];
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

static void heap_make(int64_t *h, Py_ssize_t n) {
    for (Py_ssize_t i = n / 2; i-- > 0;) heap_sink(h, n, i);
}

/* Speculative bar: a query's best kk are usually spread over the corpus, so once the first block is
 * scored, the score of its spec_m-th best document, spec_m sized for about SPEC_MARGIN * kk documents
 * of the whole corpus to reach it (when documents are in no order of score), is likely at most the
 * final kk-th best score; taken as the bar for the later blocks (candidates and pruning, as the
 * kk-th best so far is), it skips most of the work the bar would otherwise rise through. It is
 * checked, never trusted: when the search ends with at least kk documents at or above it, the true
 * kk-th best is at or above it too, so nothing below it could have entered and the results are
 * those of the search without it; when fewer reached it, the query is searched again without it
 * (exact either way; the second search costs what the first saved, e.g. on a corpus in an order that
 * puts a query's best documents first). Returns spec_m, or 0 for no bar: a corpus of one block,
 * pruning off (search(prune=False) scores every posting as it did), kk too small to gain, or an
 * index whose searches dropped more than a quarter of their bars once SPEC_PROBATION were tried
 * (the Index's counts, over its calls and threads: a corpus whose order puts the queries' best
 * documents first would otherwise search most queries twice; only the speed depends on them). */
#define SPEC_MARGIN 1.5 /* 1M synthetic documents, k = 1,001, one thread: 0.36 s against 2.0's 0.39 s (fewer keys, a rank read each), no bar of 5,970 dropped (1.25: 108 dropped) */
#define SPEC_MIN_RANK 16
#define SPEC_PROBATION 32
/* (The speculation's helpers are kept out of line: inlined, their few values cost search_run's hot
 * loops registers: ~10% slower on one thread.) */
static __attribute__((noinline)) Py_ssize_t speculative_rank(const SearchJob *j, Py_ssize_t block, Py_ssize_t kk) {
    if (!j->bounds || j->n_docs <= block) return 0;
    int64_t tries = __atomic_load_n(j->spec_tries, __ATOMIC_RELAXED), fails = __atomic_load_n(j->spec_fails, __ATOMIC_RELAXED);
    if (tries >= SPEC_PROBATION && 4 * fails > tries) return 0; /* most bars of this index's searches were dropped */
    double want = SPEC_MARGIN * (double)kk * (double)block / (double)j->n_docs;
    Py_ssize_t m = want < SPEC_MIN_RANK ? SPEC_MIN_RANK : (Py_ssize_t)ceil(want);
    return 2 * m <= kk ? m : 0;
}

/* Counts a speculative bar tried, and dropped when `failed`; returns `failed`. */
static __attribute__((noinline)) int speculation_failed(const SearchJob *j, int failed) {
    __atomic_fetch_add(j->spec_tries, 1, __ATOMIC_RELAXED);
    if (failed) __atomic_fetch_add(j->spec_fails, 1, __ATOMIC_RELAXED);
    return failed;
}

static void *search_run(void *arg) {
    SearchJob *j = arg;
    Py_ssize_t n_docs = j->n_docs, kk = j->kk;
    Py_ssize_t block = n_docs < j->block ? (n_docs ? n_docs : 1) : j->block, cap = kk + block;
    double *acc = calloc((size_t)block, sizeof(double));
    unsigned char *seen = calloc((size_t)block, 1);
    int32_t *touched = malloc((size_t)(block + 1) * 4), *qbuf = malloc((size_t)j->longest * 4);
    int32_t *sorted_tmp = malloc((size_t)block * 4), *sbits = malloc((size_t)block * 4);
    int32_t *uniq = malloc((size_t)j->longest * 4);
    int64_t *keys = malloc((size_t)cap * 8), *scratch = malloc((size_t)cap * 8);
    int64_t *cursor = malloc((size_t)j->longest * 8), *stops = malloc((size_t)j->longest * 8);
    float *boosts = malloc((size_t)j->longest * sizeof(float)), *ub = malloc((size_t)j->longest * sizeof(float));
    Py_ssize_t *by_bound = malloc((size_t)j->longest * sizeof(Py_ssize_t));
    unsigned char *essential = malloc((size_t)j->longest);
    if (!acc || !seen || !touched || !qbuf || !uniq || !keys || !scratch || !cursor || !boosts || !stops || !ub ||
        !by_bound || !essential || !sorted_tmp || !sbits) {
        j->failed = 1;
        goto done;
    }
    const int64_t *indptr = j->indptr, *qoff = j->qoff, *rank = j->rank, *order = j->order;
    const int32_t *indices = j->indices;
    const float *data = j->data;
    Py_ssize_t q;
    while ((q = __atomic_fetch_add(j->next, 1, __ATOMIC_RELAXED)) < j->q1) {
        if (j->by_cost) q = j->by_cost[q];
        /* the query's distinct terms in ascending id order (as np.unique), each with its count */
        Py_ssize_t m = qoff[q + 1] - qoff[q], nt = 0;
        if (j->qweights) { /* weighted terms: distinct and ascending (checked), each with its weight */
            memcpy(uniq, j->qterms + qoff[q], (size_t)m * 4);
            memcpy(boosts, j->qweights + qoff[q], (size_t)m * sizeof(float));
            nt = m;
        } else {
            memcpy(qbuf, j->qterms + qoff[q], (size_t)m * 4);
            sort_i32(qbuf, m);
            for (Py_ssize_t i = 0, r; i < m; i = r) { /* each term's count, made a float32 once (a float32 sum
                                                        of 1s stops at 2^24) */
                for (r = i + 1; r < m && qbuf[r] == qbuf[i]; r++) {}
                uniq[nt] = qbuf[i];
                boosts[nt++] = (float)(r - i);
            }
        }
        for (Py_ssize_t u = 0; u < nt; u++) cursor[u] = indptr[uniq[u]];
        float c = j->consts ? j->consts[q] : 0.0f;
        /* pruning: BM25 queries (not weighted), every bound finite */
        int prune = j->bounds && !j->qweights && nt < MAX_PRUNED_TERMS;
        for (Py_ssize_t u = 0; prune && u < nt; u++) {
            float b = j->bounds[uniq[u]];
            ub[u] = boosts[u] == 1.0f ? b : b * boosts[u]; /* >= every posting's data * boost (monotone) */
            prune = ub[u] <= FLT_MAX;
            Py_ssize_t i = u; /* insertion sort of the terms by bound */
            while (i > 0 && ub[by_bound[i - 1]] > ub[u]) { by_bound[i] = by_bound[i - 1]; i--; }
            by_bound[i] = u;
        }
        Py_ssize_t spec_m = speculative_rank(j, block, kk), n_keys;
        int heaped, spec;
        int64_t least;
    search_again: /* (once more without a speculative bar, when it was too high: below) */
        n_keys = 0;
        heaped = 0; /* keys[0..kk) is the heap of the best kk so far */
        least = 0;  /* once kk keys are kept, a key below the kk-th best can never enter the top kk */
        spec = 0;   /* whether a speculative bar is in force */
        for (Py_ssize_t b0 = 0; b0 < n_docs; b0 += block) {
            Py_ssize_t b1 = b0 + block < n_docs ? b0 + block : n_docs, n_touched = 0, n_skip = 0;
            if (kk && n_keys >= kk && (!heaped || n_keys > kk)) { /* keep the best kk so far; the kk-th is the bar */
                Py_ssize_t fresh = n_keys - kk;
                if (heaped && fresh * HEAP_SHARE < kk) {
                    for (Py_ssize_t i = kk; i < n_keys; i++)
                        if (keys[i] > keys[0]) {
                            keys[0] = keys[i];
                            heap_sink(keys, kk, 0);
                        }
                } else {
                    top_select(keys, n_keys, kk);
                    heap_make(keys, kk);
                    heaped = 1;
                }
                n_keys = kk;
                least = keys[0];
            }
            if (spec_m && b0 == block && n_keys >= spec_m) { /* the first block's spec_m-th best score as the bar */
                for (Py_ssize_t i = 0; i < n_keys; i++) sorted_tmp[i] = (int32_t)(keys[i] >> 32);
                int64_t bar = ((int64_t)kth_largest_i32(sorted_tmp, n_keys, spec_m) << 32) - 1; /* its score admitted */
                if (bar > least) {
                    Py_ssize_t kept = 0;
                    for (Py_ssize_t i = 0; i < n_keys; i++)
                        if (keys[i] > bar) keys[kept++] = keys[i];
                    n_keys = kept;
                    heaped = 0;
                    least = bar;
                    spec = 1;
                }
            }
            float thr = 0.0f; /* the kk-th best score so far */
            int32_t least_bits = (int32_t)(least >> 32);
            if (prune && least) {
                int32_t bits = (int32_t)(least >> 32);
                memcpy(&thr, &bits, 4);
                n_skip = non_essential(ub, by_bound, nt, j->consts != NULL, c, thr);
            }
            for (Py_ssize_t u = 0; u < nt; u++) { /* each term's postings in this block: cursor[u]..stops[u] */
                int64_t end = indptr[uniq[u] + 1];
                int64_t guess = cursor[u] + (int64_t)((double)(end - cursor[u]) * (double)(b1 - b0) / (double)(n_docs - b0));
                stops[u] = b1 == n_docs ? end : seek(indices, cursor[u], end, (int32_t)b1, guess);
            }
            if (n_skip == nt) { /* no document of this block can enter */
                for (Py_ssize_t u = 0; u < nt; u++) cursor[u] = stops[u];
                continue;
            }
            Py_ssize_t n_cheap = n_skip; /* (an exhaustive pass reads back only the essential terms' documents) */
            if (n_skip) { /* worth it when the essential terms hold few of the block's postings */
                int64_t all = 0, few = 0;
                for (Py_ssize_t u = 0; u < nt; u++) all += stops[u] - cursor[u];
                for (Py_ssize_t i = n_skip; i < nt; i++) few += stops[by_bound[i]] - cursor[by_bound[i]];
                if (few * PRUNE_RATIO > all) n_skip = 0;
            }
            if (n_skip) {
                /* The candidates: the documents of the essential terms, with the sum of those terms'
                 * scores; a candidate whose sum plus the non-essential terms' bounds stays below the
                 * threshold cannot enter either. The others are scored below, all terms in order. */
                double rest = 0.0; /* the non-essential terms' bounds */
                for (Py_ssize_t u = 0; u < nt; u++) essential[u] = 1;
                for (Py_ssize_t i = 0; i < n_skip; i++) {
                    essential[by_bound[i]] = 0;
                    rest += (double)ub[by_bound[i]];
                }
                for (Py_ssize_t u = 0; u < nt; u++) {
                    if (!essential[u]) continue;
                    n_touched = add_postings(indices, data, cursor[u], stops[u], (int32_t)b0, boosts[u], acc, seen,
                                             touched, n_touched);
                }
                Py_ssize_t kept = 0;
                for (Py_ssize_t i = 0; i < n_touched; i++) {
                    int32_t d = touched[i];
                    float bound = (float)((acc[d] + rest) * (1.0 + BOUND_SLACK));
                    if (j->consts) bound = bound + c;
                    acc[d] = 0.0;
                    if (bound < thr) seen[d] = 0;
                    else touched[kept++] = d;
                }
                n_touched = kept;
                sort_block_docs(touched, sorted_tmp, n_touched, b1 - b0);
            }
            Py_ssize_t n_pos = 0;
            if (!n_skip && !j->qweights && !j->consts) { /* exhaustive BM25: no document list kept */
                n_pos = scan_block(indices, data, cursor, stops, boosts, nt, n_cheap ? by_bound : NULL, n_cheap,
                                   (int32_t)b0, acc, least_bits, sbits, touched, rank + b0);
                goto keys;
            }
            for (Py_ssize_t u = 0; u < nt; u++) {
                int64_t p = cursor[u], stop = stops[u];
                float boost = boosts[u];
                if (j->qweights) { /* impacts: the exact double product of the float32 weights */
                    double w = (double)boost;
                    for (; p < stop; p++) {
                        int32_t d = indices[p] - (int32_t)b0;
                        acc[d] += (double)data[p] * w;
                        touched[n_touched] = d; /* kept when d is new: branch-free */
                        n_touched += !seen[d];
                        seen[d] = 1;
                    }
                } else if (!n_skip) { /* exhaustive: every posting of the block */
                    n_touched = add_postings(indices, data, p, stop, (int32_t)b0, boost, acc, seen, touched, n_touched);
                } else if (stop - p <= 16 * n_touched) { /* a short list: read it, keep the candidates' (16: 1M documents, k = 10 / 1,001: 10% / 4% faster than 8) */
                    for (; p < stop; p++) {
                        int32_t d = indices[p] - (int32_t)b0;
                        if (seen[d]) {
                            float val = data[p] * boost; /* (x * 1.0f is x: exact, and no branch) */
                            acc[d] += (double)val;
                        }
                    }
                } else { /* a long list: look each candidate up in it */
                    for (Py_ssize_t i = 0; i < n_touched && p < stop; i++) {
                        int32_t d = touched[i] + (int32_t)b0;
                        p = gallop(indices, p, stop, d);
                        if (p < stop && indices[p] == d) {
                            float val = data[p] * boost; /* (x * 1.0f is x: exact, and no branch) */
                            acc[touched[i]] += (double)val;
                            p++;
                        }
                    }
                }
                cursor[u] = stop;
            }
            /* The block's scores (float32 bits: positive floats order as their bits) at or above the
             * kk-th best so far; when more than kk, the kk-th best of them is a tighter cut (at least kk
             * documents score at or above it). Only the documents at or above the cut get a key (their
             * id's rank read). */
            for (Py_ssize_t i = 0; i < n_touched; i++) {
                int32_t d = touched[i], bits;
                float s = (float)acc[d];
                if (j->consts) s = s + c;
                acc[d] = 0.0;
                seen[d] = 0;
                memcpy(&bits, &s, 4);
                if (s > 0 && bits >= least_bits) {
                    __builtin_prefetch(rank + b0 + d);
                    sbits[n_pos] = bits;
                    touched[n_pos++] = d;
                }
            }
        keys:;
            int32_t cut = least_bits;
            /* the first block under a speculative bar: the bar, set at the next block's start, drops
             * every key below its spec_m-th best, so none is made (a key costs its id rank's read) */
            Py_ssize_t want = spec_m && b0 == 0 ? spec_m : kk;
            if (n_pos > want) {
                memcpy(sorted_tmp, sbits, (size_t)n_pos * 4);
                int32_t v = kth_largest_i32(sorted_tmp, n_pos, want);
                if (v > cut) cut = v;
            }
            for (Py_ssize_t i = 0; i < n_pos; i++) {
                if (sbits[i] < cut) continue;
                /* the key of retrievers/topk.py: float32 bits (positive) << 32 | id rank */
                int64_t key = ((int64_t)sbits[i] << 32) | rank[b0 + touched[i]];
                if (key > least) keys[n_keys++] = key; /* keys are distinct (one per document) */
            }
        }
        if (spec && speculation_failed(j, n_keys < kk)) { /* fewer than kk documents reached the bar: it proves nothing */
            spec_m = 0;
            for (Py_ssize_t u = 0; u < nt; u++) cursor[u] = indptr[uniq[u]];
            goto search_again;
        }
        Py_ssize_t h = n_keys < kk ? n_keys : kk;
        if (h) top_sorted(keys, scratch, n_keys, h);
        int64_t *docs_q = j->docs_out + q * kk;
        double *scores_q = j->scores_out + q * kk;
        for (Py_ssize_t i = 0; i < h; i++) {
            int32_t bits = (int32_t)(keys[i] >> 32);
            float s;
            memcpy(&s, &bits, 4);
            docs_q[i] = order[keys[i] & 0xFFFFFFFF];
            scores_q[i] = s;
        }
        j->hits[q] = h;
    }
done:
    free(acc); free(seen); free(touched); free(qbuf); free(uniq); free(keys); free(scratch); free(cursor);
    free(boosts); free(stops); free(ub); free(by_bound); free(essential); free(sorted_tmp); free(sbits);
    return NULL;
}

/* Index.search(query_offsets, query_terms, k, constants=None, n_threads=1, doc_block=DOC_BLOCK, weights=None,
 *              prune=True)
 *   -> (int64 bytes: hits per query, int64 bytes: documents, float64 bytes: scores (float32 values))
 * constants: None, or a float32 per query added (in float32) to every matched document's score
 * (BM25L / BM25+'s non-occurrence score). Queries are split among n_threads threads (without the GIL).
 * weights: None (each term counts once per occurrence, the count multiplying the float32 posting
 * score in float32), or a float32 weight per query term (impact search): each query's terms must
 * then be distinct and ascending, and a document's score is float32 of the double sum, in term
 * order, of the exact double products weight * posting value (a sparse dot product).
 * doc_block: documents scored together (the same results for any value; tests use small ones).
 * prune: skip the documents that cannot enter the top k (MaxScore, above; BM25 queries only); False
 * scores every posting of the query's terms. The results are the same either way. */
typedef struct {
    int64_t cost;
    Py_ssize_t q;
} QueryCost;

static int costlier_first(const void *a, const void *b) { /* cost descending, then query ascending */
    const QueryCost *x = a, *y = b;
    if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
    return (x->q > y->q) - (x->q < y->q);
}

static PyObject *Index_search(Index *x, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"query_offsets", "query_terms", "k", "constants", "n_threads", "doc_block", "weights",
                             "prune", NULL};
    PyObject *o[4] = {NULL, NULL, Py_None, Py_None};
    Py_ssize_t k, doc_block = DOC_BLOCK;
    int n_threads = 1, prune = 1;
    if (!x->n_views) {
        PyErr_SetString(PyExc_RuntimeError, "Index is not initialised");
        return NULL;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOn|OinOp", kwlist, &o[0], &o[1], &k, &o[2], &n_threads, &doc_block,
                                     &o[3], &prune))
        return NULL;
    if (n_threads < 1) n_threads = 1;
    if (n_threads > MAX_THREADS) n_threads = MAX_THREADS;
    Py_buffer v[4];
    static const Py_ssize_t item[4] = {8, 4, 4, 4};
    static const char *what[4] = {"query_offsets", "query_terms", "constants", "weights"};
    int n_views = 0, has_const = o[2] != Py_None, has_weights = o[3] != Py_None;
    PyObject *ret = NULL, *hits_b = NULL, *docs_b = NULL, *scores_b = NULL;
    int view_of[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++) {
        if ((i == 2 && !has_const) || (i == 3 && !has_weights)) continue;
        if (get_buffer(o[i], &v[n_views], item[i], what[i])) goto done;
        view_of[i] = n_views++;
    }
    if (v[0].len < 8) {
        PyErr_SetString(PyExc_ValueError, "search: query_offsets needs at least one entry");
        goto done;
    }
    const int64_t *qoff = v[0].buf;
    const int32_t *qterms = v[1].buf;
    Py_ssize_t n_q = v[0].len / 8 - 1, n_qt = v[1].len / 4, n_docs = x->n_docs;
    const float *consts = has_const ? v[view_of[2]].buf : NULL, *qweights = has_weights ? v[view_of[3]].buf : NULL;
    if (k < 1 || doc_block < 1 || (has_const && v[view_of[2]].len / 4 != n_q)) {
        PyErr_SetString(PyExc_ValueError, "search: k and doc_block must be >= 1, constants one per query");
        goto done;
    }
    for (Py_ssize_t q = 0; q < n_q; q++)
        if (qoff[q] < 0 || qoff[q] > qoff[q + 1] || qoff[q + 1] > n_qt) {
            PyErr_SetString(PyExc_ValueError, "search: bad query offsets");
            goto done;
        }
    for (Py_ssize_t i = 0; i < n_qt; i++)
        if (qterms[i] < 0 || qterms[i] >= x->n_terms) {
            PyErr_SetString(PyExc_ValueError, "search: query term id out of range");
            goto done;
        }
    if (has_weights) {
        if (v[view_of[3]].len / 4 != n_qt) {
            PyErr_SetString(PyExc_ValueError, "search: weights needs one float32 per query term");
            goto done;
        }
        for (Py_ssize_t q = 0; q < n_q; q++)
            for (int64_t i = qoff[q] + 1; i < qoff[q + 1]; i++)
                if (qterms[i] <= qterms[i - 1]) {
                    PyErr_SetString(PyExc_ValueError, "search: weighted query terms must be distinct and ascending");
                    goto done;
                }
    }
    Py_ssize_t kk = k < n_docs ? k : n_docs;
    if (n_q && kk > PY_SSIZE_T_MAX / 8 / n_q) { PyErr_NoMemory(); goto done; }
    /* each query's results at q * kk, then moved together */
    hits_b = PyBytes_FromStringAndSize(NULL, n_q * 8);
    docs_b = PyBytes_FromStringAndSize(NULL, n_q * kk * 8);
    scores_b = PyBytes_FromStringAndSize(NULL, n_q * kk * 8);
    if (!hits_b || !docs_b || !scores_b) goto done;
    int64_t *hits = (int64_t *)PyBytes_AS_STRING(hits_b), *docs_out = (int64_t *)PyBytes_AS_STRING(docs_b);
    double *scores_out = (double *)PyBytes_AS_STRING(scores_b);
    Py_ssize_t longest = 1;
    for (Py_ssize_t q = 0; q < n_q; q++)
        if (qoff[q + 1] - qoff[q] > longest) longest = qoff[q + 1] - qoff[q];
    if (n_threads > n_q) n_threads = n_q ? (int)n_q : 1;
    SearchJob jobs[MAX_THREADS];
    Py_ssize_t next = 0, *by_cost = NULL;
    if (n_threads > 1 && n_q > n_threads) { /* longest first: a query's cost is its terms' postings */
        QueryCost *costs = malloc((size_t)n_q * sizeof(QueryCost));
        by_cost = malloc((size_t)n_q * sizeof(Py_ssize_t));
        if (!costs || !by_cost) {
            free(costs); free(by_cost);
            PyErr_NoMemory();
            goto done;
        }
        const int64_t *indptr = x->v[0].buf;
        for (Py_ssize_t q = 0; q < n_q; q++) {
            int64_t cost = 0;
            for (int64_t i = qoff[q]; i < qoff[q + 1]; i++) cost += indptr[qterms[i] + 1] - indptr[qterms[i]];
            costs[q] = (QueryCost){cost, q};
        }
        qsort(costs, (size_t)n_q, sizeof(QueryCost), costlier_first);
        for (Py_ssize_t q = 0; q < n_q; q++) by_cost[q] = costs[q].q;
        free(costs);
    }
    for (int i = 0; i < n_threads; i++)
        jobs[i] = (SearchJob){x->v[0].buf, qoff, x->v[3].buf, x->v[4].buf, x->v[1].buf, qterms, x->v[2].buf,
                              consts, qweights, prune ? x->bounds : NULL, n_docs, kk, longest, n_q, doc_block,
                              hits, docs_out, scores_out, 0, &next, by_cost, &x->spec_tries, &x->spec_fails};
    int failed = 0;
    Py_ssize_t total = 0;
    Py_BEGIN_ALLOW_THREADS
    run_jobs(jobs, sizeof(SearchJob), n_threads, search_run);
    for (int i = 0; i < n_threads; i++) failed |= jobs[i].failed;
    if (!failed)
        for (Py_ssize_t q = 0; q < n_q; q++) { /* close the gaps left by queries with fewer than kk hits */
            if (total != q * kk) {
                memmove(docs_out + total, docs_out + q * kk, (size_t)hits[q] * 8);
                memmove(scores_out + total, scores_out + q * kk, (size_t)hits[q] * 8);
            }
            total += hits[q];
        }
    Py_END_ALLOW_THREADS
    free(by_cost);
    if (failed) { PyErr_NoMemory(); goto done; }
    if (_PyBytes_Resize(&docs_b, total * 8) || _PyBytes_Resize(&scores_b, total * 8)) goto done;
    ret = PyTuple_Pack(3, hits_b, docs_b, scores_b);
done:
    for (int i = 0; i < n_views; i++) PyBuffer_Release(&v[i]);
    Py_XDECREF(hits_b); Py_XDECREF(docs_b); Py_XDECREF(scores_b);
    return ret;
}

static PyObject *Index_speculation(Index *x, PyObject *unused) {
    return Py_BuildValue("(LL)", (long long)__atomic_load_n(&x->spec_tries, __ATOMIC_RELAXED),
                         (long long)__atomic_load_n(&x->spec_fails, __ATOMIC_RELAXED));
}

static PyMethodDef Index_methods[] = {
    {"speculation", (PyCFunction)Index_speculation, METH_NOARGS,
     "speculation() -> (tried, dropped): the speculative bars this index's searches tried and dropped (see search.c)"},
    {"search", (PyCFunction)(void (*)(void))Index_search, METH_VARARGS | METH_KEYWORDS,
     "search(query_offsets, query_terms, k, constants=None, n_threads=1, doc_block=65536, weights=None, prune=True) ->"
     " (hits per query,"
     " documents, scores)"
     " as bytes (int64, int64, float64 holding float32 values)"},
    {"bounds", (PyCFunction)Index_bounds, METH_NOARGS,
     "bounds() -> float32 bytes: per term, the largest score among its postings (+inf when one is negative or not"
     " finite): what search prunes with; Index(..., bounds=...) takes them back"},
    {NULL}};

PyTypeObject IndexType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "retrievers.bm25._fastbm25.Index",
    .tp_basicsize = sizeof(Index),
    .tp_dealloc = (destructor)Index_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Index(indptr, indices, data, n_docs, id_rank, doc_of_rank, bounds=None, checked=False, n_threads=1): an"
              " index's arrays, checked once (the postings on n_threads threads; not when checked: check_postings"
              " passed on these arrays), to search (bounds: a previous Index's bounds(), else computed)",
    .tp_methods = Index_methods,
    .tp_init = (initproc)Index_init,
    .tp_new = PyType_GenericNew,
};

