/* Internal declarations shared by the C files of retrievers.bm25._fastbm25 (see bindings.c for
 * what the module offers and which file holds what). */
#ifndef FASTBM25_H
#define FASTBM25_H

/* Assumptions, checked at compile time (pip then installs the package without the extension,
 * on the pure-Python path): GCC/Clang builtins (__builtin_ctz), and a little-endian byte order
 * (8-byte words of text are hashed and lowercased as integers whose first byte is the lowest). */
#if !defined(__GNUC__) && !defined(__clang__)
#error "retrievers.bm25._fastbm25 needs GCC or Clang (it uses their builtins)"
#endif
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "retrievers.bm25._fastbm25 assumes a little-endian machine"
#endif

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#ifdef _WIN32 /* no pthreads: parts run one after the other */
typedef int pthread_t;
static inline int pthread_create(pthread_t *t, void *attr, void *(*f)(void *), void *arg) { (void)t; (void)attr; (void)f; (void)arg; return -1; }
static inline int pthread_join(pthread_t t, void **r) { (void)t; (void)r; return 0; }
#else
#include <pthread.h>
#include <sys/mman.h> /* madvise (table_calloc) */
#endif

#define MAX_TOKEN 255 /* Lucene's default maxTokenLength: longer tokens are cut into pieces */
#define MAX_THREADS 64
#define PARALLEL_MIN_BYTES (1 << 20) /* below this a chunk is encoded on one thread */

/* ------------------------------------------------------------------ threads (threads.c)
 * Jobs are an array of structs of `size` bytes; fn runs on each. A job no thread could be had for
 * runs on the joining thread instead, so the work gets done either way. */
typedef struct {
    pthread_t thread[MAX_THREADS];
    int started[MAX_THREADS];
    char *jobs;
    size_t size;
    int first, n;
    void *(*fn)(void *);
} Threads;

void threads_start(Threads *g, void *jobs, size_t size, int first, int n, void *(*fn)(void *));
void threads_join(Threads *g); /* call without the GIL */
/* fn on jobs 0..n-1: job 0 on the calling thread (without the GIL), the others on threads. */
void run_jobs(void *jobs, size_t size, int n, void *(*fn)(void *));

/* ------------------------------------------------------------------ growable arrays */
typedef struct { int32_t *a; Py_ssize_t n, cap; } VecI32;
typedef struct { int64_t *a; Py_ssize_t n, cap; } VecI64;

static inline int grow(void **a, Py_ssize_t *cap, Py_ssize_t need, size_t item) {
    if (need <= *cap) return 0;
    Py_ssize_t cap2 = *cap ? *cap : 256;
    while (cap2 < need) cap2 *= 2;
    void *b = realloc(*a, (size_t)cap2 * item);
    if (!b) return -1;
    *a = b;
    *cap = cap2;
    return 0;
}

/* Zeroed memory for a large table read at random (a token cache): on Linux in transparent huge pages
 * where the system allows them (madvise), so that its lookups do not miss the TLB as well. Freed with
 * free(). NULL: out of memory. */
static inline void *table_calloc(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const size_t huge = (size_t)2 << 20;
    if (bytes >= huge) {
        void *p = NULL;
        size_t size = (bytes + huge - 1) / huge * huge;
        if (posix_memalign(&p, huge, size)) return NULL;
        madvise(p, size, MADV_HUGEPAGE);
        memset(p, 0, size);
        return p;
    }
#endif
    return calloc(1, bytes);
}
static inline int push32(VecI32 *v, int32_t x) {
    if (v->n == v->cap && grow((void **)&v->a, &v->cap, v->n + 1, sizeof(int32_t))) return -1;
    v->a[v->n++] = x;
    return 0;
}
static inline int push64(VecI64 *v, int64_t x) {
    if (v->n == v->cap && grow((void **)&v->a, &v->cap, v->n + 1, sizeof(int64_t))) return -1;
    v->a[v->n++] = x;
    return 0;
}

/* ------------------------------------------------------------------ string -> int32 hash map
 * Open addressing; each slot holds the key's hash tag, place in the arena, length and value, so a
 * lookup touches one slot and the key bytes. Entries (keys in insertion order) are kept for terms(). */
typedef struct { uint32_t tag; uint32_t off; int32_t len; int32_t val; } Slot; /* len -1: empty */

typedef struct {
    Slot *slots;
    size_t mask;
    uint32_t *eoff; /* per entry: key offset, length */
    int32_t *elen;
    Py_ssize_t n, ecap;
    char *arena;
    Py_ssize_t asize, acap;
} StrMap;

static inline uint64_t hash_bytes(const char *s, Py_ssize_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t x;
        memcpy(&x, s, 8);
        h = (h ^ x) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 31;
        s += 8;
        n -= 8;
    }
    if (n) {
        uint64_t x = 0;
        memcpy(&x, s, (size_t)n);
        h = (h ^ x) * 0xbf58476d1ce4e5b9ULL;
    }
    h ^= h >> 29;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 32;
    return h;
}

static inline int same_bytes(const char *a, const char *b, Py_ssize_t n) {
    while (n >= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return 0;
        a += 8; b += 8; n -= 8;
    }
    while (n--) if (*a++ != *b++) return 0;
    return 1;
}

/* The slot holding key s[0..n), or NULL. */
static inline Slot *map_find(const StrMap *m, const char *s, Py_ssize_t n, uint64_t h) {
    size_t i = h & m->mask;
    uint32_t tag = (uint32_t)(h >> 32);
    for (;;) {
        Slot *slot = m->slots + i;
        if (slot->len < 0) return NULL;
        if (slot->tag == tag && slot->len == n && same_bytes(m->arena + slot->off, s, n)) return slot;
        i = (i + 1) & m->mask;
    }
}

void map_free(StrMap *m);
int map_init(StrMap *m);
int map_rehash(StrMap *m, size_t cap);
int map_reserve(StrMap *m, Py_ssize_t more);
Py_ssize_t map_add(StrMap *m, const char *s, Py_ssize_t n, uint64_t h, int32_t val);

/* ------------------------------------------------------------------ tokenizer.c: character classes (ASCII) */
enum { C_ALPHA = 1, C_DIGIT = 2, C_UNDER = 4, C_MIDLETTER = 8, C_MIDNUM = 16, C_SPACE = 32, C_HIGH = 64, C_SEP = 128 };
extern unsigned char CLS[256];
void init_classes(void);
int is_separator_cp(uint32_t cp);
int next_piece(const unsigned char *w, Py_ssize_t n, Py_ssize_t *i, Py_ssize_t *start, int *high);

/* ------------------------------------------------------------------ porter.c */
int porter_stem(char *b, int k);

/* ------------------------------------------------------------------ postings.c: PostingsBuilder */
typedef struct { int32_t *term, *tf; Py_ssize_t n; } Segment; /* postings handed over whole (see builder_append) */

typedef struct {
    PyObject_HEAD
    Segment *sealed; /* document-major postings: the sealed segments, then term/tf */
    int n_sealed, cap_sealed;
    Py_ssize_t sealed_n; /* postings in the sealed segments */
    VecI32 term;    /* document-major postings (after the sealed ones): term, tf */
    VecI32 tf;
    VecI64 doc_end; /* end of each document's postings (counted from the first sealed one) */
    VecI32 doc_len; /* terms in each document */
    int64_t *last;  /* per term: the last document it was seen in */
    int64_t *slot;  /* per term: its posting in that document */
    Py_ssize_t scratch;
} Builder;

extern PyTypeObject BuilderType;
void builder_free_postings(Builder *b);
int builder_adopt(Builder *b, VecI32 **terms, VecI32 **tfs, int n_pieces);
int builder_append(Builder *b, const int64_t *counts, const int64_t *pcounts, Py_ssize_t n_docs, VecI32 **terms,
                   VecI32 **tfs, int n_pieces);

/* Document-major postings: each text's distinct terms in order of first appearance, with their tf. */
typedef struct { VecI32 term, tf; } Postings;

static inline void postings_free(Postings *p) { free(p->term.a); free(p->tf.a); memset(p, 0, sizeof(*p)); }

/* Lucene's BM25 score of a posting, in its float32 operations: w - w / (1 + tf * inv) with w the term's
 * idf and inv the document's 1 / (k1 (1 - b + b dl / avgdl)) (retrievers/bm25/scoring.py); score_lucene
 * and the postings builder's scatter both use it, so their scores are the same bits. */
static inline float lucene_score(float w, int32_t tf, float inv) {
    float x = (float)tf * inv;
    x = 1.0f + x;
    return w - w / x;
}

/* Append the postings of text number d, term ids ids[0..n), to out (room for n more reserved by the
 * caller); returns how many. last / slot: per term (every id < their size), the last text it was
 * seen in (never d before this call: -1 at first) and its posting's place in that text. */
static inline Py_ssize_t text_postings(const int32_t *ids, Py_ssize_t n, int64_t d, uint64_t *mark, Postings *out) {
    int32_t *term = out->term.a + out->term.n, *tf = out->tf.a + out->tf.n;
    Py_ssize_t m = 0;
    const uint64_t doc = (uint64_t)(d + 1) << 32; /* mark[t]: (text + 1) << 32 | t's slot in that text */
    for (Py_ssize_t j = 0; j < n; j++) __builtin_prefetch(mark + ids[j], 1); /* (terms at random: overlap the misses) */
    for (Py_ssize_t j = 0; j < n; j++) {
        int32_t t = ids[j];
        uint64_t v = mark[t];
        if ((v & ~(uint64_t)0xFFFFFFFF) != doc) {
            mark[t] = doc | (uint32_t)m;
            term[m] = t;
            tf[m++] = 1;
        } else {
            tf[(uint32_t)v]++;
        }
    }
    out->term.n += m;
    out->tf.n += m;
    return m;
}

/* Per-term scratch for text_postings (text numbers 0 .. 2^32 - 2): n_terms marks, all 0; NULL: out of memory. */
uint64_t *postings_scratch(Py_ssize_t n_terms);
/* The postings of n_texts texts with counts[d] term ids each (ids < n_terms), appended to out;
 * pcounts[d]: text d's number of postings. -1: out of memory. */
int ids_to_postings(const int32_t *ids, const int64_t *counts, Py_ssize_t n_texts, Py_ssize_t n_terms,
                    Postings *out, int64_t *pcounts);

/* ------------------------------------------------------------------ encoder.c, search.c, scoring.c */
extern PyTypeObject EncoderType, IndexType;
PyObject *score_lucene(PyObject *self, PyObject *args);
PyObject *check_postings(PyObject *self, PyObject *args);

/* ------------------------------------------------------------------ topk.c */
void sort_i32(int32_t *a, Py_ssize_t n);
void top_sorted(int64_t *a, int64_t *tmp, Py_ssize_t n, Py_ssize_t k);

/* ------------------------------------------------------------------ bindings.c: argument helpers */
const char *utf8_of(PyObject *s, Py_ssize_t *n, PyObject **keep);
int get_buffer(PyObject *o, Py_buffer *view, Py_ssize_t item, const char *what);
static inline PyObject *bytes_of(const void *p, Py_ssize_t n) { return PyBytes_FromStringAndSize(p ? p : "", n); }

#endif
