/* retrievers.bm25._fastbm25: the compiled hot loops of the bm25s backend.
 *
 * Each piece equals the pure-Python path it replaces (tests/retrievers/test_bm25_compiled.py checks
 * them against it):
 *
 *   Encoder         texts (and titles, read as title + " " + text) -> term ids, or each text's
 *                   postings (term, tf), or those appended straight to a PostingsBuilder. ASCII text
 *                   is cut into tokens in one pass by Lucene's StandardTokenizer rules restricted to
 *                   ASCII (tokenizer.py states them). A whitespace word holding a non-ASCII byte is
 *                   cut at separators (characters no token holds: ASCII punctuation, separators.h);
 *                   its ASCII pieces take the ASCII path, and each distinct piece holding another
 *                   non-ASCII character is handed to a Python callable (the analyzer's exact Unicode
 *                   path) in one batch per call. Possessive removal, lowercasing, stopwords and
 *                   Lucene's Porter stemmer (porter.h) run here, memoized per distinct lowercased
 *                   token. Large calls run on several threads with the same result (encode_parallel).
 *   PostingsBuilder documents' term ids or postings -> term-major CSC postings with term
 *                   frequencies; documents ascend within each term (the counting sort on threads).
 *   score_lucene    Lucene's BM25 score of every posting, in float32 operations, on threads.
 *   search          per query: sum the float32 posting scores of its terms in double (a term
 *                   repeated q times weighs q, multiplied in float32), round to float32, keep
 *                   scores > 0, top k by (score desc, document id desc) through one int64 key.
 *                   Queries split among threads, without the GIL.
 *
 * Arrays cross the boundary as bytes (out) and buffer-protocol objects (in); no numpy C API.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "porter.h"
#include "separators.h"

#ifdef _WIN32 /* no pthreads: parts run one after the other */
typedef int pthread_t;
static int pthread_create(pthread_t *t, void *attr, void *(*f)(void *), void *arg) { (void)t; (void)attr; (void)f; (void)arg; return -1; }
static int pthread_join(pthread_t t, void **r) { (void)t; (void)r; return 0; }
#else
#include <pthread.h>
#endif

#define MAX_TOKEN 255 /* Lucene's default maxTokenLength: longer tokens are cut into pieces */
#define MAX_THREADS 64
#define PARALLEL_MIN_BYTES (1 << 20) /* below this a chunk is encoded on one thread */

/* ------------------------------------------------------------------ threads
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

static void threads_start(Threads *g, void *jobs, size_t size, int first, int n, void *(*fn)(void *)) {
    g->jobs = jobs;
    g->size = size;
    g->first = first;
    g->n = n;
    g->fn = fn;
    for (int i = first; i < n; i++) g->started[i] = pthread_create(&g->thread[i], NULL, fn, g->jobs + i * size) == 0;
}

static void threads_join(Threads *g) { /* call without the GIL */
    for (int i = g->first; i < g->n; i++) {
        if (g->started[i]) pthread_join(g->thread[i], NULL);
        else g->fn(g->jobs + i * g->size);
    }
}

/* fn on jobs 0..n-1: job 0 on the calling thread (without the GIL), the others on threads. */
static void run_jobs(void *jobs, size_t size, int n, void *(*fn)(void *)) {
    Threads g;
    threads_start(&g, jobs, size, 1, n, fn);
    if (n > 0) fn(jobs);
    threads_join(&g);
}

/* ------------------------------------------------------------------ growable arrays */
typedef struct { int32_t *a; Py_ssize_t n, cap; } VecI32;
typedef struct { int64_t *a; Py_ssize_t n, cap; } VecI64;

static int grow(void **a, Py_ssize_t *cap, Py_ssize_t need, size_t item) {
    if (need <= *cap) return 0;
    Py_ssize_t cap2 = *cap ? *cap : 256;
    while (cap2 < need) cap2 *= 2;
    void *b = realloc(*a, (size_t)cap2 * item);
    if (!b) return -1;
    *a = b;
    *cap = cap2;
    return 0;
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

static void map_free(StrMap *m) {
    free(m->slots); free(m->eoff); free(m->elen); free(m->arena);
    memset(m, 0, sizeof(*m));
}

static Slot *new_slots(size_t cap) {
    Slot *slots = malloc(cap * sizeof(Slot));
    if (slots) for (size_t i = 0; i < cap; i++) slots[i].len = -1;
    return slots;
}

static int map_init(StrMap *m) {
    memset(m, 0, sizeof(*m));
    m->slots = new_slots(1024);
    if (!m->slots) return -1;
    m->mask = 1023;
    return 0;
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

static int map_rehash(StrMap *m, size_t cap) {
    Slot *slots = new_slots(cap);
    if (!slots) return -1;
    for (size_t j = 0; j <= m->mask; j++) {
        Slot *old = m->slots + j;
        if (old->len < 0) continue;
        uint64_t h = hash_bytes(m->arena + old->off, old->len);
        size_t i = h & (cap - 1);
        while (slots[i].len >= 0) i = (i + 1) & (cap - 1);
        slots[i] = *old;
    }
    free(m->slots);
    m->slots = slots;
    m->mask = cap - 1;
    return 0;
}

/* Room for `more` keys without growing (one rehash now rather than several while adding). */
static int map_reserve(StrMap *m, Py_ssize_t more) {
    size_t cap = m->mask + 1;
    while ((size_t)(m->n + more) * 2 > cap) cap *= 2;
    return cap > m->mask + 1 ? map_rehash(m, cap) : 0;
}

/* Adds a key known to be absent with its value; returns its entry number or -1 (out of memory). */
static Py_ssize_t map_add(StrMap *m, const char *s, Py_ssize_t n, uint64_t h, int32_t val) {
    if (m->n >= INT32_MAX - 1 || (uint64_t)m->asize + (uint64_t)n > UINT32_MAX) return -1;
    if ((size_t)(m->n + 1) * 2 > m->mask + 1 && map_rehash(m, (m->mask + 1) * 2)) return -1;
    if (m->n == m->ecap) {
        Py_ssize_t c = m->ecap;
        if (grow((void **)&m->eoff, &c, m->n + 1, sizeof(uint32_t))) return -1;
        c = m->ecap;
        if (grow((void **)&m->elen, &c, m->n + 1, sizeof(int32_t))) return -1;
        m->ecap = c;
    }
    if (grow((void **)&m->arena, &m->acap, m->asize + n + 1, 1)) return -1;
    memcpy(m->arena + m->asize, s, (size_t)n);
    Py_ssize_t e = m->n++;
    m->eoff[e] = (uint32_t)m->asize;
    m->elen[e] = (int32_t)n;
    size_t i = h & m->mask;
    while (m->slots[i].len >= 0) i = (i + 1) & m->mask;
    m->slots[i].tag = (uint32_t)(h >> 32);
    m->slots[i].off = (uint32_t)m->asize;
    m->slots[i].len = (int32_t)n;
    m->slots[i].val = val;
    m->asize += n;
    return e;
}

/* ------------------------------------------------------------------ character classes (ASCII) */
enum { C_ALPHA = 1, C_DIGIT = 2, C_UNDER = 4, C_MIDLETTER = 8, C_MIDNUM = 16, C_SPACE = 32, C_HIGH = 64, C_SEP = 128 };
static unsigned char CLS[256];

static void init_classes(void) {
    for (int c = 0; c < 256; c++) {
        unsigned char k = 0;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) k |= C_ALPHA;
        if (c >= '0' && c <= '9') k |= C_DIGIT;
        if (c == '_') k |= C_UNDER;                          /* ExtendNumLet */
        if (c == ':' || c == '.' || c == '\'') k |= C_MIDLETTER; /* MidLetter, MidNumLet, Single_Quote */
        if (c == ',' || c == ';' || c == '.' || c == '\'') k |= C_MIDNUM; /* MidNum, MidNumLet, Single_Quote */
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\x0b' || c == '\x0c') k |= C_SPACE;
        if (c >= 0x80) k |= C_HIGH;
        if (c < 0x80 && !(k & (C_ALPHA | C_DIGIT | C_UNDER | C_MIDLETTER | C_MIDNUM))) k |= C_SEP; /* in no token */
        CLS[c] = k;
    }
}

/* Whether code point cp (>= 0x80) is in no token: separators.h (the Basic Multilingual Plane; others
 * count as token characters, which only sends their words to the analyzer). */
static int is_separator_cp(uint32_t cp) {
    if (cp > 0xFFFF) return 0;
    int lo = 0, hi = N_SEPARATOR_RANGES - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < SEPARATOR_RANGES[mid][0]) hi = mid - 1;
        else if (cp > SEPARATOR_RANGES[mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

/* The length of the character at w[0] (w[0] >= 0x80, n >= 1 bytes left) and whether it is a
 * separator; a malformed sequence counts as a one-byte token character. */
static inline int high_char(const unsigned char *w, Py_ssize_t n, int *sep) {
    unsigned char b = w[0];
    int len = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? (b <= 0xEF ? 3 : 0) : b >= 0xC2 ? 2 : 0;
    *sep = 0;
    if (!len || len > n) return 1;
    uint32_t cp = b & (0x7F >> len);
    for (int i = 1; i < len; i++) {
        if ((w[i] & 0xC0) != 0x80) return 1;
        cp = (cp << 6) | (w[i] & 0x3F);
    }
    *sep = is_separator_cp(cp);
    return len;
}

/* The next piece of the word w[0..n) from *i on -- a maximal run of characters that are not
 * separators -- as [*start, *i); *high: whether it holds a non-ASCII character. 0: no piece left.
 * No token crosses a separator, so a word's tokens are its pieces' tokens, in order. */
static int next_piece(const unsigned char *w, Py_ssize_t n, Py_ssize_t *i, Py_ssize_t *start, int *high) {
    Py_ssize_t p = *i;
    int sep;
    while (p < n) {
        if (w[p] < 0x80) {
            if (!(CLS[w[p]] & C_SEP)) break;
            p++;
        } else {
            int len = high_char(w + p, n - p, &sep);
            if (!sep) break;
            p += len;
        }
    }
    if (p >= n) return 0;
    *start = p;
    *high = 0;
    while (p < n) {
        if (w[p] < 0x80) {
            if (CLS[w[p]] & C_SEP) break;
            p++;
        } else {
            int len = high_char(w + p, n - p, &sep);
            if (sep) break;
            *high = 1;
            p += len;
        }
    }
    *i = p;
    return 1;
}

/* ------------------------------------------------------------------ PostingsBuilder (data) */
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

static PyTypeObject BuilderType;

static void builder_free_postings(Builder *b) {
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
static int builder_adopt(Builder *b, VecI32 **terms, VecI32 **tfs, int n_pieces) {
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
static int builder_append(Builder *b, const int64_t *counts, const int64_t *pcounts, Py_ssize_t n_docs,
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

/* ------------------------------------------------------------------ Encoder */
#define CACHE_BITS 15
typedef struct { uint64_t k0, k1; int32_t len; int32_t val; } CacheEntry; /* len 0: empty */

/* New tokens of a parallel encode call, kept as a memo until the next call: token -> term id or -1 */
typedef struct { StrMap pend; int32_t *resolved; } Deferred;

typedef struct {
    PyObject_HEAD
    StrMap tokens;  /* lowercased ASCII token -> term id, or -1 (stopword / unknown when frozen) */
    StrMap terms;   /* term -> id (= entry number) */
    StrMap stop;    /* stopwords */
    StrMap words;   /* non-ASCII word -> its number in cw_* */
    VecI64 cw_first;
    VecI32 cw_count; /* -1 while the word waits for the analyzer */
    VecI32 cw_terms;
    CacheEntry *cache;       /* direct-mapped cache of token -> value for tokens of <= 16 bytes */
    int possessive, stem, frozen, broken, busy;
    PyObject *analyze_words; /* list[str] -> list[list[str]] */
    Deferred deferred[MAX_THREADS]; /* memo entries not yet in tokens (see flush_deferred) */
    int n_deferred;
} Encoder;

/* The deferred memo: a parallel encode call leaves its new tokens in its parts' tables; a later call
 * adds them to `tokens` first (flush), or, when the encoder is frozen, drops them: the memo only saves
 * work (a token missing from it is stemmed and looked up again, with the same result). */
static void drop_deferred(Encoder *e) {
    for (int i = 0; i < e->n_deferred; i++) {
        map_free(&e->deferred[i].pend);
        free(e->deferred[i].resolved);
    }
    e->n_deferred = 0;
}

static int flush_deferred(Encoder *e) {
    for (int i = 0; i < e->n_deferred; i++) {
        Deferred *d = &e->deferred[i];
        if (map_reserve(&e->tokens, d->pend.n)) return -1;
        for (Py_ssize_t q = 0; q < d->pend.n; q++) {
            const char *key = d->pend.arena + d->pend.eoff[q];
            int n = d->pend.elen[q];
            uint64_t h = hash_bytes(key, n);
            if (!map_find(&e->tokens, key, n, h) && map_add(&e->tokens, key, n, h, d->resolved[q]) < 0) return -1;
        }
    }
    drop_deferred(e);
    return 0;
}

static void Encoder_dealloc(Encoder *e) {
    drop_deferred(e);
    map_free(&e->tokens); map_free(&e->terms); map_free(&e->stop); map_free(&e->words);
    free(e->cache);
    free(e->cw_first.a); free(e->cw_count.a); free(e->cw_terms.a);
    Py_XDECREF(e->analyze_words);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

/* UTF-8 of a str; surrogates pass through (as "surrogatepass" encodes them). An ASCII str is read
 * in place; any other is encoded into a new bytes object, *keep, which the caller releases when done
 * (PyUnicode_AsUTF8AndSize would cache a UTF-8 copy inside every non-ASCII str of the corpus). */
static const char *utf8_of(PyObject *s, Py_ssize_t *n, PyObject **keep) {
    *keep = NULL;
    if (!PyUnicode_Check(s)) {
        PyErr_Format(PyExc_TypeError, "expected str, got %.80s", Py_TYPE(s)->tp_name);
        return NULL;
    }
    if (PyUnicode_IS_ASCII(s)) {
        *n = PyUnicode_GET_LENGTH(s);
        return (const char *)PyUnicode_DATA(s);
    }
    *keep = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
    if (!*keep) return NULL;
    *n = PyBytes_GET_SIZE(*keep);
    return PyBytes_AS_STRING(*keep);
}

/* Term id of a term string: found, added (unless frozen), or -1. -2: out of memory. */
static int32_t term_id(Encoder *e, const char *s, Py_ssize_t n) {
    uint64_t h = hash_bytes(s, n);
    Slot *slot = map_find(&e->terms, s, n, h);
    if (slot) return slot->val;
    if (e->frozen) return -1;
    Py_ssize_t t = map_add(&e->terms, s, n, h, (int32_t)e->terms.n);
    return t < 0 ? -2 : (int32_t)t;
}

static int Encoder_init(Encoder *e, PyObject *args, PyObject *kw) {
    static char *names[] = {"stopwords", "possessive", "stem", "analyze_words", NULL};
    PyObject *stopwords, *analyze;
    int possessive, stem;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OppO", names, &stopwords, &possessive, &stem, &analyze)) return -1;
    if (!PyCallable_Check(analyze)) {
        PyErr_SetString(PyExc_TypeError, "analyze_words must be callable");
        return -1;
    }
    if (e->tokens.slots) { /* __init__ called twice */
        PyErr_SetString(PyExc_RuntimeError, "Encoder is already initialised");
        return -1;
    }
    e->cache = calloc((size_t)1 << CACHE_BITS, sizeof(CacheEntry));
    if (!e->cache || map_init(&e->tokens) || map_init(&e->terms) || map_init(&e->stop) || map_init(&e->words)) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *it = PyObject_GetIter(stopwords);
    if (!it) return -1;
    PyObject *w;
    while ((w = PyIter_Next(it))) {
        PyObject *keep;
        Py_ssize_t n;
        const char *s = utf8_of(w, &n, &keep);
        if (s) {
            uint64_t h = hash_bytes(s, n);
            if (!map_find(&e->stop, s, n, h) && map_add(&e->stop, s, n, h, 0) < 0) {
                PyErr_NoMemory();
                s = NULL;
            }
        }
        Py_XDECREF(keep);
        Py_DECREF(w);
        if (!s) { Py_DECREF(it); return -1; }
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) return -1;
    e->possessive = possessive;
    e->stem = stem;
    Py_INCREF(analyze);
    e->analyze_words = analyze;
    return 0;
}

/* The term of one lowercased token (hash h), written to buf: its length, or -1 for a stopword.
 * Reads the encoder's tables only (safe from several threads). */
static int token_term(const Encoder *e, const char *tok, int n, uint64_t h, char *buf) {
    if (map_find(&e->stop, tok, n, h)) return -1;
    memcpy(buf, tok, (size_t)n);
    return e->stem ? porter_stem(buf, n) : n;
}

/* The term id of one lowercased token (memoized): -1 when it has none. -2: out of memory. */
static int32_t token_value(Encoder *e, const char *tok, int n) {
    uint64_t h = hash_bytes(tok, n);
    Slot *slot = map_find(&e->tokens, tok, n, h);
    if (slot) return slot->val;
    char buf[MAX_TOKEN + 1];
    int m = token_term(e, tok, n, h, buf);
    int32_t val = m < 0 ? -1 : term_id(e, buf, m);
    if (val == -2) return -2;
    if (map_add(&e->tokens, tok, n, h, val) < 0) return -2;
    return val;
}

/* One exact token (raw text): cut to pieces of MAX_TOKEN, possessive, lowercase, look up. */
/* Lowercase the ASCII bytes of x (SWAR: 'A'..'Z' get bit 0x20). */
static inline uint64_t lower8(uint64_t x) {
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t heptets = x & ~high;
    uint64_t ge_a = heptets + (0x80 - 'A') * ones;      /* high bit set where byte >= 'A' */
    uint64_t gt_z = heptets + (0x80 - 'Z' - 1) * ones;  /* high bit set where byte > 'Z' */
    uint64_t upper = ge_a & ~gt_z & ~x & high;
    return x | (upper >> 2);
}

static inline uint64_t low_bytes(uint64_t x, int n) { /* keep the first n (0..8) bytes */
    return n >= 8 ? x : (n <= 0 ? 0 : x & ((1ULL << (8 * n)) - 1));
}

/* Where tokens go. Sequential encoding (part == NULL) reads and writes the encoder's tables and
 * appends term ids to out. A parallel part (see encode_parallel) only reads the encoder's tables:
 * tokens it has not seen go to its own table of pending tokens, stemmed there, and are appended as
 * PENDING(p); words holding non-ASCII bytes are appended as COMPLEX and listed in order. */
typedef struct Part Part;
typedef struct {
    Encoder *e;
    Part *part;
    VecI32 *out;
    CacheEntry *cache;
    PyObject *new_words;     /* sequential: the new non-ASCII words of this call */
    Py_ssize_t placeholders; /* sequential: non-ASCII words appended as -(cw + 1), waiting for their terms */
} Sink;

#define COMPLEX INT32_MIN
#define PENDING(p) (-3 - (int32_t)(p))

static int32_t part_lookup(Part *part, const char *tok, int n);

static inline int32_t sink_lookup(Sink *k, const char *tok, int n) {
    return k->part ? part_lookup(k->part, tok, n) : token_value(k->e, tok, n);
}

/* The value of one lowercased token through the sink's direct-mapped cache (tokens <= 16 bytes,
 * zero-padded in words[0..1]); misses go to sink_lookup. Values: a term id, -1 (no term),
 * PENDING(p), or -2 (out of memory). */
static inline int32_t cached_value(Sink *k, const uint64_t *words, int n) {
    uint64_t h = (words[0] * 0x9E3779B97F4A7C15ULL) ^ (words[1] * 0xC2B2AE3D27D4EB4FULL) ^ (uint64_t)n;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    CacheEntry *c = k->cache + (h >> (64 - CACHE_BITS));
    if (c->len == n && c->k0 == words[0] && c->k1 == words[1]) return c->val;
    int32_t v = sink_lookup(k, (const char *)words, n);
    if (v != -2) {
        c->k0 = words[0];
        c->k1 = words[1];
        c->len = n;
        c->val = v;
    }
    return v;
}

static inline int append_value(Sink *k, int32_t v) {
    if (v == -2) return -1;
    if (v == -1) return 0;
    return push32(k->out, v);
}

/* One exact token t[0..len) (raw text; bytes up to `end` may be read): cut to pieces of MAX_TOKEN,
 * possessive, lowercase, look up, append. */
static int emit_token(Sink *k, const unsigned char *t, Py_ssize_t len, const unsigned char *end) {
    if (len <= 16 && t + 16 <= end) { /* the common case: two 8-byte loads, no byte loop */
        int n = (int)len;
        uint64_t words[3];
        memcpy(&words[0], t, 8);
        memcpy(&words[1], t + 8, 8);
        words[0] = lower8(low_bytes(words[0], n));
        words[1] = lower8(low_bytes(words[1], n - 8));
        words[2] = 0;
        if (k->e->possessive && n >= 2) {
            const unsigned char *b = (const unsigned char *)words;
            if (b[n - 1] == 's' && b[n - 2] == '\'') {
                n -= 2;
                words[0] = low_bytes(words[0], n);
                words[1] = low_bytes(words[1], n - 8);
            }
        }
        if (n == 0) return 0;
        return append_value(k, cached_value(k, words, n));
    }
    for (Py_ssize_t p = 0; p < len; p += MAX_TOKEN) {
        int n = (int)(len - p < MAX_TOKEN ? len - p : MAX_TOKEN);
        uint64_t words[(MAX_TOKEN + 8) / 8 + 1]; /* lowercased copy; zero-padded to 16 bytes */
        words[0] = words[1] = words[2] = 0;
        unsigned char *buf = (unsigned char *)words;
        for (int i = 0; i < n; i++) {
            unsigned char c = t[p + i];
            buf[i] = (unsigned char)(c + (((unsigned)(c - 'A') < 26u) << 5));
        }
        if (k->e->possessive && n >= 2 && buf[n - 1] == 's' && buf[n - 2] == '\'') {
            n -= 2;
            buf[n] = buf[n + 1] = 0;
        }
        if (n == 0) continue;
        if (append_value(k, n <= 16 ? cached_value(k, words, n) : sink_lookup(k, (const char *)buf, n))) return -1;
    }
    return 0;
}

/* The end of the run of ASCII letters from w[j] on (j <= n): the first j' >= j with w[j'] not a
 * letter, or n. Bytes up to `end` may be read. */
static inline Py_ssize_t alpha_end(const unsigned char *w, Py_ssize_t j, Py_ssize_t n, const unsigned char *end) {
#ifdef __SSE2__
    const __m128i lower = _mm_set1_epi8(0x20), shift = _mm_set1_epi8((char)(0x80 - 'a')), limit = _mm_set1_epi8((char)(-128 + 26));
    while (j < n && w + j + 16 <= end) {
        __m128i v = _mm_or_si128(_mm_loadu_si128((const __m128i *)(w + j)), lower);
        unsigned mask = (unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(_mm_add_epi8(v, shift), limit));
        if (mask != 0xFFFF) {
            j += __builtin_ctz(~mask);
            return j < n ? j : n;
        }
        j += 16;
    }
#endif
    while (j < n && (CLS[w[j]] & C_ALPHA)) j++;
    return j < n ? j : n;
}

/* The exact tokens of an all-ASCII word w[0..n):
 *   token   = X* unit (X* unit)* X*          X = '_' (ExtendNumLet)
 *   unit    = A+ (ML A+)*  |  N+ (MN N+)*    A letter, N digit, ML = : . '  MN = , ; . '
 * scanned left to right, each match as long as it goes (the regex of tokenizer.py on ASCII). */
static int tokenize_ascii(Sink *k, const unsigned char *w, Py_ssize_t n, const unsigned char *end) {
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = CLS[w[i]];
        if (!(c & (C_ALPHA | C_DIGIT | C_UNDER))) { i++; continue; }
        if (c & C_ALPHA) { /* the common case: letters, then a byte that cannot continue the token */
            Py_ssize_t j = alpha_end(w, i + 1, n, end);
            if (j >= n || !(CLS[w[j]] & (C_ALPHA | C_DIGIT | C_UNDER | C_MIDLETTER))) {
                if (emit_token(k, w + i, j - i, end)) return -1;
                i = j + 1; /* w[j] (if any) is not part of a token */
                continue;
            }
        }
        Py_ssize_t start = i, j = i;
        while (j < n && w[j] == '_') j++;
        if (j >= n || !(CLS[w[j]] & (C_ALPHA | C_DIGIT))) { i = j; continue; }
        for (;;) {
            if (CLS[w[j]] & C_ALPHA) {
                while (j < n && (CLS[w[j]] & C_ALPHA)) j++;
                while (j + 1 < n && (CLS[w[j]] & C_MIDLETTER) && (CLS[w[j + 1]] & C_ALPHA)) {
                    j++;
                    while (j < n && (CLS[w[j]] & C_ALPHA)) j++;
                }
            } else {
                while (j < n && (CLS[w[j]] & C_DIGIT)) j++;
                while (j + 1 < n && (CLS[w[j]] & C_MIDNUM) && (CLS[w[j + 1]] & C_DIGIT)) {
                    j++;
                    while (j < n && (CLS[w[j]] & C_DIGIT)) j++;
                }
            }
            Py_ssize_t k = j;
            while (k < n && w[k] == '_') k++;
            j = k;
            if (!(k < n && (CLS[w[k]] & (C_ALPHA | C_DIGIT)))) break;
        }
        if (emit_token(k, w + start, j - start, end)) return -1;
        i = j;
    }
    return 0;
}

/* Records the terms of the words waiting since word number `first` from the analyzer's result
 * (one term list per word of `words`). */
static int define_words(Encoder *e, PyObject *words, Py_ssize_t first, PyObject *result) {
    PyObject *seq = PySequence_Fast(result, "analyze_words must return a list of term lists");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n != PyList_GET_SIZE(words)) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "analyze_words returned a different number of term lists");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *terms = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, i), "a term list must be a sequence");
        if (!terms) { Py_DECREF(seq); return -1; }
        Py_ssize_t start = e->cw_terms.n, m = PySequence_Fast_GET_SIZE(terms);
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *keep;
            Py_ssize_t len;
            const char *s = utf8_of(PySequence_Fast_GET_ITEM(terms, j), &len, &keep);
            int32_t id = s ? term_id(e, s, len) : -3;
            Py_XDECREF(keep);
            if (id == -2 || (id >= 0 && push32(&e->cw_terms, id))) PyErr_NoMemory();
            if (id < -1 || PyErr_Occurred()) { Py_DECREF(terms); Py_DECREF(seq); return -1; }
        }
        Py_DECREF(terms);
        e->cw_first.a[first + i] = start;
        e->cw_count.a[first + i] = (int32_t)(e->cw_terms.n - start);
    }
    Py_DECREF(seq);
    return 0;
}

/* Hands the words waiting since word number `first` to the Python analyzer and records their terms. */
static int analyze_and_define(Encoder *e, PyObject *words, Py_ssize_t first) {
    PyObject *result = PyObject_CallOneArg(e->analyze_words, words);
    if (!result) return -1;
    int failed = define_words(e, words, first, result);
    Py_DECREF(result);
    return failed;
}

static PyObject *bytes_of(const void *p, Py_ssize_t n) { return PyBytes_FromStringAndSize(p ? p : "", n); }

/* Document-major postings: each text's distinct terms in order of first appearance, with their tf. */
typedef struct { VecI32 term, tf; } Postings;

static void postings_free(Postings *p) { free(p->term.a); free(p->tf.a); memset(p, 0, sizeof(*p)); }

/* Append the postings of text number d, term ids ids[0..n), to out (room for n more reserved by the
 * caller); returns how many. last / slot: per term (every id < their size), the last text it was
 * seen in (never d before this call: -1 at first) and its posting's place in that text. */
static inline Py_ssize_t text_postings(const int32_t *ids, Py_ssize_t n, int64_t d, int64_t *last, int64_t *slot,
                                       Postings *out) {
    int32_t *term = out->term.a + out->term.n, *tf = out->tf.a + out->tf.n;
    Py_ssize_t m = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        int32_t t = ids[j];
        if (last[t] != d) {
            last[t] = d;
            slot[t] = m;
            term[m] = t;
            tf[m++] = 1;
        } else {
            tf[slot[t]]++;
        }
    }
    out->term.n += m;
    out->tf.n += m;
    return m;
}

/* Per-term scratch for text_postings: last (all -1) and slot, n_terms each; NULL: out of memory. */
static int64_t *postings_scratch(Py_ssize_t n_terms) {
    int64_t *last = malloc((size_t)(n_terms ? 2 * n_terms : 1) * sizeof(int64_t));
    if (last) for (Py_ssize_t t = 0; t < n_terms; t++) last[t] = -1;
    return last; /* slot = last + n_terms */
}

/* The postings of n_texts texts with counts[d] term ids each (ids < n_terms), appended to out;
 * pcounts[d]: text d's number of postings. -1: out of memory. */
static int ids_to_postings(const int32_t *ids, const int64_t *counts, Py_ssize_t n_texts, Py_ssize_t n_terms,
                           Postings *out, int64_t *pcounts) {
    Py_ssize_t total = 0;
    for (Py_ssize_t d = 0; d < n_texts; d++) total += counts[d];
    int64_t *last = postings_scratch(n_terms);
    if (!last || grow((void **)&out->term.a, &out->term.cap, out->term.n + total, 4) ||
        grow((void **)&out->tf.a, &out->tf.cap, out->tf.n + total, 4)) {
        free(last);
        return -1;
    }
    for (Py_ssize_t d = 0, pos = 0; d < n_texts; pos += counts[d++])
        pcounts[d] = text_postings(ids + pos, counts[d], d, last, last + n_terms, out);
    free(last);
    return 0;
}

static PyObject *Encoder_encode_locked(Encoder *e, PyObject *texts_arg, PyObject *titles_arg, int n_threads,
                                       Py_ssize_t min_bytes, int postings, Builder *into);

/* encode(texts, n_threads=1, parallel_min_bytes, postings=False, titles=None, into=None): see the method table */
static PyObject *Encoder_encode(Encoder *e, PyObject *args, PyObject *kw) {
    static char *names[] = {"texts", "n_threads", "parallel_min_bytes", "postings", "titles", "into", NULL};
    PyObject *texts_arg, *titles_arg = Py_None, *into = Py_None;
    int n_threads = 1, postings = 0;
    Py_ssize_t min_bytes = PARALLEL_MIN_BYTES;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|inpOO", names, &texts_arg, &n_threads, &min_bytes, &postings, &titles_arg,
                                     &into))
        return NULL;
    if (into != Py_None && !PyObject_TypeCheck(into, &BuilderType)) {
        PyErr_SetString(PyExc_TypeError, "into must be a PostingsBuilder");
        return NULL;
    }
    if (n_threads < 1) return PyErr_Format(PyExc_ValueError, "n_threads must be >= 1, got %d", n_threads);
    if (n_threads > MAX_THREADS) n_threads = MAX_THREADS;
    if (!e->tokens.slots) {
        PyErr_SetString(PyExc_RuntimeError, "Encoder.__init__ was not called");
        return NULL;
    }
    if (e->broken) {
        PyErr_SetString(PyExc_RuntimeError, "this Encoder failed earlier; make a new one");
        return NULL;
    }
    if (e->busy) { /* the analyze_words callback may let another thread in */
        PyErr_SetString(PyExc_RuntimeError, "Encoder.encode is already running (one call at a time)");
        return NULL;
    }
    if (e->frozen) drop_deferred(e);
    else if (flush_deferred(e)) {
        e->broken = 1;
        return PyErr_NoMemory();
    }
    e->busy = 1;
    PyObject *ret = Encoder_encode_locked(e, texts_arg, titles_arg == Py_None ? NULL : titles_arg, n_threads, min_bytes,
                                          postings, into == Py_None ? NULL : (Builder *)into);
    e->busy = 0;
    return ret;
}

/* The number of the non-ASCII word w[0..n) in the encoder's word table; a new word is added,
 * waiting for its terms (cw_count -1), and listed in new_words for the analyzer. -1: error. */
static int32_t word_number(Encoder *e, const unsigned char *w, Py_ssize_t n, PyObject *new_words) {
    uint64_t h = hash_bytes((const char *)w, n);
    Slot *found = map_find(&e->words, (const char *)w, n, h);
    if (found) return found->val;
    int32_t cw = (int32_t)e->cw_count.n;
    PyObject *word = PyUnicode_DecodeUTF8((const char *)w, n, "surrogatepass");
    if (!word || PyList_Append(new_words, word)) { Py_XDECREF(word); return -1; }
    Py_DECREF(word);
    if (map_add(&e->words, (const char *)w, n, h, cw) < 0 || push64(&e->cw_first, 0) || push32(&e->cw_count, -1)) {
        PyErr_NoMemory();
        return -1;
    }
    return cw;
}

/* A non-ASCII word, sequential encoding: its terms when known, else a placeholder -(cw + 1) until
 * the analyzer has seen it. */
static int complex_word_seq(Sink *k, const unsigned char *w, Py_ssize_t n) {
    Encoder *e = k->e;
    int32_t cw = word_number(e, w, n, k->new_words);
    if (cw < 0) return -1;
    if (e->cw_count.a[cw] < 0) {
        k->placeholders++;
        return push32(k->out, -(cw + 1));
    }
    for (int32_t j = 0; j < e->cw_count.a[cw]; j++)
        if (push32(k->out, e->cw_terms.a[e->cw_first.a[cw] + j])) return -1;
    return 0;
}

static int complex_word_part(Part *part, const unsigned char *w, Py_ssize_t n);

/* The position of the first byte >= 0x80 in s[i..n), or n. */
static inline Py_ssize_t next_high(const unsigned char *s, Py_ssize_t i, Py_ssize_t n) {
#ifdef __SSE2__
    for (; i + 16 <= n; i += 16) {
        unsigned mask = (unsigned)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(s + i)));
        if (mask) return i + __builtin_ctz(mask);
    }
#endif
    while (i < n && s[i] < 0x80) i++;
    return i;
}

/* One text s[0..n): an all-ASCII text in one pass (whitespace separates tokens like any other
 * non-token byte); otherwise the same, but each word (between whitespace) holding a byte >= 0x80 is
 * set aside for the analyzer. */
static int scan_text(Sink *k, const unsigned char *s, Py_ssize_t n, int ascii) {
    if (ascii) return tokenize_ascii(k, s, n, s + n);
    Py_ssize_t i = 0;
    while (i < n) {
        Py_ssize_t h = next_high(s, i, n);
        if (h == n) return tokenize_ascii(k, s + i, n - i, s + n);
        Py_ssize_t w = h, e = h + 1; /* the word around s[h]: between whitespace */
        while (w > i && !(CLS[s[w - 1]] & C_SPACE)) w--;
        while (e < n && !(CLS[s[e]] & C_SPACE)) e++;
        if (w > i && tokenize_ascii(k, s + i, w - i, s + n)) return -1; /* all-ASCII words before it */
        Py_ssize_t at = 0, start;
        int high;
        while (next_piece(s + w, e - w, &at, &start, &high)) {
            const unsigned char *piece = s + w + start;
            Py_ssize_t len = at - start;
            if (!high ? tokenize_ascii(k, piece, len, s + n)
                      : (k->part ? complex_word_part(k->part, piece, len) : complex_word_seq(k, piece, len))) return -1;
        }
        i = e;
    }
    return 0;
}

/* The texts' UTF-8: pointers, lengths, whether all ASCII, two segments per text (a title, or
 * nothing, then the text: a text with a title reads as title + " " + text); `keep` holds the bytes
 * objects made for strings with lone surrogates. */
typedef struct {
    Py_ssize_t n;                /* texts */
    const unsigned char **ptr;   /* segments 2t, 2t + 1 */
    Py_ssize_t *len;
    unsigned char *ascii;
    PyObject *keep;
    Py_ssize_t total;            /* bytes */
} Texts;

static void texts_free(Texts *x) {
    free(x->ptr); free(x->len); free(x->ascii);
    Py_XDECREF(x->keep);
}

static Py_ssize_t text_bytes(const Texts *x, Py_ssize_t t) { return x->len[2 * t] + x->len[2 * t + 1]; }

/* titles: NULL, or a sequence as long as texts. */
static int texts_load(Texts *x, PyObject *texts, PyObject *titles) {
    memset(x, 0, sizeof(*x));
    x->n = PySequence_Fast_GET_SIZE(texts);
    if (titles && PySequence_Fast_GET_SIZE(titles) != x->n) {
        PyErr_SetString(PyExc_ValueError, "titles and texts must have the same length");
        return -1;
    }
    size_t m = (size_t)(x->n ? 2 * x->n : 1);
    x->ptr = malloc(m * sizeof(*x->ptr));
    x->len = malloc(m * sizeof(*x->len));
    x->ascii = malloc(m);
    x->keep = PyList_New(0);
    if (!x->ptr || !x->len || !x->ascii || !x->keep) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < 2 * x->n; i++) {
        if (i % 2 == 0 && !titles) {
            x->ptr[i] = (const unsigned char *)"";
            x->len[i] = 0;
            x->ascii[i] = 1;
            continue;
        }
        PyObject *text = PySequence_Fast_GET_ITEM(i % 2 ? texts : titles, i / 2), *keep;
        const char *p = utf8_of(text, &x->len[i], &keep);
        if (!p) return -1;
        if (keep) {
            int bad = PyList_Append(x->keep, keep);
            Py_DECREF(keep); /* the list holds it */
            if (bad) return -1;
        }
        x->ptr[i] = (const unsigned char *)p;
        x->ascii[i] = !keep && PyUnicode_IS_ASCII(text);
        x->total += x->len[i];
    }
    return 0;
}

/* Scan text t (its title, then its text: whitespace between them separates like any other). */
static int scan_doc(Sink *k, const Texts *x, Py_ssize_t t) {
    for (Py_ssize_t i = 2 * t; i < 2 * t + 2; i++)
        if (x->len[i] && scan_text(k, x->ptr[i], x->len[i], x->ascii[i])) return -1;
    return 0;
}

/* Replace each placeholder -(cw + 1) of out by the terms of word cw; counts[t] entries per text. */
static int expand_placeholders(Encoder *e, VecI32 *out, int64_t *counts, Py_ssize_t n_texts) {
    VecI32 out2 = {0};
    Py_ssize_t pos = 0;
    for (Py_ssize_t t = 0; t < n_texts; t++) {
        Py_ssize_t before = out2.n;
        for (Py_ssize_t j = pos; j < pos + counts[t]; j++) {
            int32_t v = out->a[j];
            if (v >= 0) {
                if (push32(&out2, v)) goto oom;
                continue;
            }
            int32_t cw = -v - 1;
            for (int32_t q = 0; q < e->cw_count.a[cw]; q++)
                if (push32(&out2, e->cw_terms.a[e->cw_first.a[cw] + q])) goto oom;
        }
        pos += counts[t];
        counts[t] = out2.n - before;
    }
    free(out->a);
    *out = out2;
    return 0;
oom:
    free(out2.a);
    PyErr_NoMemory();
    return -1;
}

static int encode_parallel(Encoder *e, Texts *x, int n_threads, int64_t *counts, PyObject *new_words,
                           int64_t *pcounts, PyObject **made, Builder *into);

static PyObject *Encoder_encode_locked(Encoder *e, PyObject *texts_arg, PyObject *titles_arg, int n_threads,
                                       Py_ssize_t min_bytes, int postings, Builder *into) {
    if (into) postings = 1;
    /* tuples of our own: the strings stay alive while other threads run (their UTF-8 is read without the GIL) */
    PyObject *texts = PySequence_Tuple(texts_arg);
    if (!texts) return NULL;
    PyObject *titles = titles_arg ? PySequence_Tuple(titles_arg) : NULL;
    if (titles_arg && !titles) { Py_DECREF(texts); return NULL; }
    Texts x;
    int loaded = texts_load(&x, texts, titles) == 0;
    int64_t *counts = malloc((size_t)(x.n ? x.n : 1) * sizeof(int64_t));
    int64_t *pcounts = postings ? malloc((size_t)(x.n ? x.n : 1) * sizeof(int64_t)) : NULL;
    VecI32 out = {0};
    Postings post = {0};
    PyObject *new_words = PyList_New(0), *ret = NULL, *made[2] = {NULL, NULL}; /* made: by encode_parallel */
    Py_ssize_t first_new = e->cw_count.n;
    Sink k = {e, NULL, &out, e->cache, new_words, 0};
    if (!loaded) goto done;
    if (!counts || !new_words || (postings && !pcounts)) { PyErr_NoMemory(); goto done; }
    if (n_threads > 1 && x.total >= min_bytes && x.n >= n_threads) {
        if (encode_parallel(e, &x, n_threads, counts, new_words, pcounts, made, into)) goto done;
    } else {
        for (Py_ssize_t t = 0; t < x.n; t++) {
            Py_ssize_t before = out.n;
            if (scan_doc(&k, &x, t)) {
                if (!PyErr_Occurred()) PyErr_NoMemory();
                goto done;
            }
            counts[t] = out.n - before;
        }
        if (PyList_GET_SIZE(new_words) && analyze_and_define(e, new_words, first_new)) goto done;
        if (k.placeholders && expand_placeholders(e, &out, counts, x.n)) goto done;
        if (postings && ids_to_postings(out.a, counts, x.n, e->terms.n, &post, pcounts)) { PyErr_NoMemory(); goto done; }
        VecI32 *terms = &post.term, *tfs = &post.tf;
        if (into && builder_append(into, counts, pcounts, x.n, &terms, &tfs, 1)) { PyErr_NoMemory(); goto done; }
    }
    if (into) {
        Py_INCREF(Py_None);
        ret = Py_None;
        goto done;
    }
    {
        PyObject *items[4] = {NULL, NULL, NULL, NULL};
        items[0] = bytes_of(counts, x.n * (Py_ssize_t)sizeof(int64_t));
        if (postings) {
            items[1] = bytes_of(pcounts, x.n * (Py_ssize_t)sizeof(int64_t));
            items[2] = made[0] ? (Py_INCREF(made[0]), made[0]) : bytes_of(post.term.a, post.term.n * (Py_ssize_t)sizeof(int32_t));
            items[3] = made[1] ? (Py_INCREF(made[1]), made[1]) : bytes_of(post.tf.a, post.tf.n * (Py_ssize_t)sizeof(int32_t));
            if (items[0] && items[1] && items[2] && items[3]) ret = PyTuple_Pack(4, items[0], items[1], items[2], items[3]);
        } else {
            items[1] = made[0] ? (Py_INCREF(made[0]), made[0]) : bytes_of(out.a, out.n * (Py_ssize_t)sizeof(int32_t));
            if (items[0] && items[1]) ret = PyTuple_Pack(2, items[0], items[1]);
        }
        for (int i = 0; i < 4; i++) Py_XDECREF(items[i]);
    }
done:
    if (!ret && e->cw_count.n > first_new) e->broken = 1; /* words left waiting: do not reuse */
    texts_free(&x);
    free(counts);
    free(pcounts);
    free(out.a);
    postings_free(&post);
    Py_XDECREF(new_words);
    Py_XDECREF(made[0]);
    Py_XDECREF(made[1]);
    Py_DECREF(texts);
    Py_XDECREF(titles);
    return ret;
}

/* ------------------------------------------------------------------ parallel encoding
 * Term ids come out exactly as from sequential encoding: new ASCII tokens' terms numbered in order of
 * first appearance in the texts, then the new non-ASCII words' terms, word by word.
 *
 * Phase 1, one thread per part (a run of consecutive texts, parts of about equal bytes), without
 * the GIL: tokenize, look tokens up in the encoder's tables (read only), set new tokens aside in the
 * part's own table (stemmed there); non-ASCII words are listed. Meanwhile the calling thread, with
 * the GIL, finds the new non-ASCII words of the texts and has the analyzer split them (their terms
 * are numbered later, in phase 2).
 * Phase 2: number the parts' new tokens' terms, part after part (a token new to a part may have been
 * new to an earlier part: other threads find those meanwhile), then the non-ASCII words' terms.
 * Phase 3, one thread per part: each part's final term ids; the caller's thread joins them.
 * The parts' tables of new tokens are kept as the encoder's deferred memo (see flush_deferred). */
struct Part {
    Encoder *e;
    const Texts *x;
    Py_ssize_t t0, t1;
    VecI32 out;           /* phase 1: term ids, PENDING(p) and COMPLEX */
    int64_t *counts;
    CacheEntry *cache;
    StrMap pend;          /* new token -> its pending number */
    VecI32 stem_off;      /* per pending token: its stem in stems, -1 for a stopword */
    VecI32 stem_len;
    char *stems;
    Py_ssize_t ssize, scap;
    VecI64 cw_ptr;        /* non-ASCII word occurrences, in order: address and length */
    VecI64 cw_len;
    Part *earlier;        /* phase 2: the parts before this one ... */
    int index;            /* ... this many */
    int32_t *resolved;    /* per pending token: its term id or -1 */
    const int32_t **src;  /* phase 2: per pending token, where an earlier part resolved it, or NULL */
    VecI32 final;         /* phase 3: the final term ids */
    Postings post;        /* phase 3, when postings are asked for: the part's postings ... */
    int64_t *pcounts;     /* ... and its texts' numbers of postings (NULL: ids only) */
    int failed;           /* 1: out of memory; 2: a non-ASCII word missing from the word table */
};

static int32_t part_lookup(Part *part, const char *tok, int n) {
    Encoder *e = part->e;
    uint64_t h = hash_bytes(tok, n);
    Slot *slot = map_find(&e->tokens, tok, n, h);
    if (slot) return slot->val;
    slot = map_find(&part->pend, tok, n, h);
    if (slot) return PENDING(slot->val);
    if (part->pend.n >= INT32_MAX / 2) return -2;
    int32_t p = (int32_t)part->pend.n, off = -1;
    char buf[MAX_TOKEN + 1];
    int len = token_term(e, tok, n, h, buf);
    if (len < 0) {
        len = 0;
    } else {
        if (part->ssize + len >= INT32_MAX || grow((void **)&part->stems, &part->scap, part->ssize + len, 1)) return -2;
        memcpy(part->stems + part->ssize, buf, (size_t)len);
        off = (int32_t)part->ssize;
        part->ssize += len;
    }
    if (map_add(&part->pend, tok, n, h, p) < 0 || push32(&part->stem_off, off) || push32(&part->stem_len, len)) return -2;
    return PENDING(p);
}

static int complex_word_part(Part *part, const unsigned char *w, Py_ssize_t n) {
    if (push64(&part->cw_ptr, (int64_t)(intptr_t)w) || push64(&part->cw_len, n)) return -1;
    return push32(&part->out, COMPLEX);
}

static void *part_scan(void *arg) { /* phase 1 */
    Part *part = arg;
    /* the part's own tables, made here (on its thread): room for the new tokens of text this size,
     * about one in 128 bytes (SciFact: 1 in 150), and for its tokens, about one in 6 bytes */
    Py_ssize_t bytes = 0;
    for (Py_ssize_t t = part->t0; t < part->t1; t++) bytes += text_bytes(part->x, t);
    part->cache = calloc((size_t)1 << CACHE_BITS, sizeof(CacheEntry));
    if (!part->cache || map_init(&part->pend) || map_reserve(&part->pend, bytes / 128) ||
        grow((void **)&part->out.a, &part->out.cap, bytes / 6 + 1, sizeof(int32_t))) {
        part->failed = 1;
        return NULL;
    }
    Sink k = {part->e, part, &part->out, part->cache, NULL, 0};
    for (Py_ssize_t t = part->t0; t < part->t1; t++) {
        Py_ssize_t before = part->out.n;
        if (scan_doc(&k, part->x, t)) {
            part->failed = 1;
            break;
        }
        part->counts[t] = part->out.n - before;
    }
    return NULL;
}

static void *part_match(void *arg) { /* phase 2: the pending tokens an earlier part has too */
    Part *part = arg;
    for (Py_ssize_t q = 0; q < part->pend.n; q++) {
        const char *key = part->pend.arena + part->pend.eoff[q];
        int n = part->pend.elen[q];
        uint64_t h = hash_bytes(key, n);
        part->src[q] = NULL;
        for (int j = 0; j < part->index; j++) {
            Slot *slot = map_find(&part->earlier[j].pend, key, n, h);
            if (slot) { part->src[q] = part->earlier[j].resolved + slot->val; break; }
        }
    }
    return NULL;
}

static void *part_final(void *arg) { /* phase 3 */
    Part *part = arg;
    Encoder *e = part->e;
    Py_ssize_t pos = 0, c = 0, n_terms = e->terms.n;
    int64_t *last = NULL;                   /* postings: text_postings' scratch */
    Postings *post = &part->post;
    if (part->pcounts) {                     /* postings: final ids one text at a time, in part->final */
        last = postings_scratch(n_terms);
        if (!last || grow((void **)&post->term.a, &post->term.cap, part->out.n, 4) ||
            grow((void **)&post->tf.a, &post->tf.cap, part->out.n, 4)) goto oom;
    } else if (grow((void **)&part->final.a, &part->final.cap, part->out.n, sizeof(int32_t))) {
        goto oom;
    }
    const int32_t *in = part->out.a, *resolved = part->resolved;
    for (Py_ssize_t t = part->t0; t < part->t1; t++) {
        if (last) part->final.n = 0;
        Py_ssize_t before = part->final.n, end = pos + part->counts[t];
        for (Py_ssize_t j = pos; j < end;) {
            /* the plain values up to the next non-ASCII piece, with the final array in locals */
            int32_t *fa = part->final.a;
            Py_ssize_t fn = part->final.n, fcap = part->final.cap;
            for (; j < end && fn < fcap; j++) {
                int32_t v = in[j];
                if (v == COMPLEX) break;
                if (v < 0) v = resolved[-3 - v];
                fa[fn] = v;
                fn += v >= 0;
            }
            part->final.n = fn;
            if (j == end) break;
            int32_t v = in[j++];
            if (v != COMPLEX) { /* the final array is full */
                if (v < 0) v = resolved[-3 - v];
                if (v >= 0 && push32(&part->final, v)) goto oom;
                continue;
            }
            const char *w = (const char *)(intptr_t)part->cw_ptr.a[c];
            Py_ssize_t n = part->cw_len.a[c++];
            Slot *found = map_find(&e->words, w, n, hash_bytes(w, n));
            if (!found || e->cw_count.a[found->val] < 0) { part->failed = 2; goto out; }
            const int32_t *terms = e->cw_terms.a + e->cw_first.a[found->val];
            for (int32_t q = 0; q < e->cw_count.a[found->val]; q++)
                if (push32(&part->final, terms[q])) goto oom;
        }
        pos = end;
        part->counts[t] = part->final.n - before;
        if (last) { /* this text's postings: distinct terms in order of first appearance, with their tf */
            if (grow((void **)&post->term.a, &post->term.cap, post->term.n + part->final.n, 4) ||
                grow((void **)&post->tf.a, &post->tf.cap, post->tf.n + part->final.n, 4)) goto oom;
            part->pcounts[t] = text_postings(part->final.a, part->final.n, t, last, last + n_terms, post);
        }
    }
    goto out;
oom:
    part->failed = 1;
out:
    free(last);
    return NULL;
}

static void part_free(Part *part) {
    free(part->out.a); free(part->cache); map_free(&part->pend); free(part->stem_off.a); free(part->stem_len.a);
    free(part->stems); free(part->cw_ptr.a); free(part->cw_len.a); free(part->resolved); free((void *)part->src);
    free(part->final.a); postings_free(&part->post);
}

/* The new non-ASCII words of the texts (split as scan_text does), numbered in order of first
 * appearance and listed in new_words. */
static int find_new_words(Encoder *e, const Texts *x, PyObject *new_words) {
    for (Py_ssize_t t = 0; t < 2 * x->n; t++) { /* segments */
        if (x->ascii[t]) continue;
        const unsigned char *s = x->ptr[t];
        Py_ssize_t n = x->len[t], i = 0;
        while (i < n) { /* the words holding a byte >= 0x80, as scan_text finds them */
            Py_ssize_t h = next_high(s, i, n);
            if (h == n) break;
            Py_ssize_t w = h, end = h + 1;
            while (w > i && !(CLS[s[w - 1]] & C_SPACE)) w--;
            while (end < n && !(CLS[s[end]] & C_SPACE)) end++;
            Py_ssize_t at = 0, start;
            int high;
            while (next_piece(s + w, end - w, &at, &start, &high))
                if (high && word_number(e, s + w + start, at - start, new_words) < 0) return -1;
            i = end;
        }
    }
    return 0;
}

/* made[0]: the term ids (bytes), or with pcounts (postings asked for) made[0], made[1]: the
 * postings' terms and tfs (bytes), or with into, the postings are appended to that builder. */
static int encode_parallel(Encoder *e, Texts *x, int n_threads, int64_t *counts, PyObject *new_words,
                           int64_t *pcounts, PyObject **made, Builder *into) {
    int post = pcounts != NULL;
    Part *parts = calloc((size_t)n_threads, sizeof(Part));
    Py_ssize_t first_new = e->cw_count.n;
    PyObject *analysed = NULL;
    int ok = 0;
    if (!parts) { PyErr_NoMemory(); return -1; }
    Py_ssize_t t = 0, acc = 0;
    for (int i = 0; i < n_threads; i++) { /* consecutive texts, about total / n_threads bytes each */
        Part *part = parts + i;
        part->e = e;
        part->x = x;
        part->counts = counts;
        part->pcounts = pcounts;
        part->earlier = parts;
        part->index = i;
        part->t0 = t;
        Py_ssize_t goal = x->total / n_threads * (i + 1);
        while (t < x->n && (i == n_threads - 1 || acc < goal)) acc += text_bytes(x, t++);
        part->t1 = t;
    }
    {
        Threads scanning; /* every part on a thread of its own; this thread has the new words analysed */
        threads_start(&scanning, parts, sizeof(Part), 0, n_threads, part_scan);
        int failed = find_new_words(e, x, new_words);
        if (!failed && PyList_GET_SIZE(new_words)) {
            analysed = PyObject_CallOneArg(e->analyze_words, new_words);
            failed = !analysed;
        }
        Py_BEGIN_ALLOW_THREADS
        threads_join(&scanning);
        Py_END_ALLOW_THREADS
        if (failed) goto done;
    }
    for (int i = 0; i < n_threads; i++)
        if (parts[i].failed) { PyErr_NoMemory(); goto done; }
    /* phase 2 */
    Py_ssize_t n_pending = 0;
    for (int i = 0; i < n_threads; i++) {
        Part *part = parts + i;
        n_pending += part->pend.n;
        part->resolved = malloc((size_t)(part->pend.n ? part->pend.n : 1) * sizeof(int32_t));
        part->src = malloc((size_t)(part->pend.n ? part->pend.n : 1) * sizeof(int32_t *));
        if (!part->resolved || !part->src) { PyErr_NoMemory(); goto done; }
    }
    if (!e->frozen && map_reserve(&e->terms, n_pending)) { PyErr_NoMemory(); goto done; }
    {
        int failed = 0;
        Py_BEGIN_ALLOW_THREADS
        Threads matching; /* parts 1.. find their tokens in earlier parts while part 0 is numbered */
        threads_start(&matching, parts, sizeof(Part), 1, n_threads, part_match);
        int joined = 0;
        for (int i = 0; i < n_threads && !failed; i++) {
            Part *part = parts + i;
            if (i == 1) {
                threads_join(&matching);
                joined = 1;
            }
            for (Py_ssize_t q = 0; q < part->pend.n && !failed; q++) {
                int32_t v;
                if (i > 0 && part->src[q]) v = *part->src[q];
                else if (part->stem_off.a[q] < 0) v = -1;
                else v = term_id(e, part->stems + part->stem_off.a[q], part->stem_len.a[q]);
                failed = v == -2;
                part->resolved[q] = v;
            }
        }
        if (!joined) threads_join(&matching); /* (a failure in part 0, or a single part) */
        Py_END_ALLOW_THREADS
        if (failed) { PyErr_NoMemory(); goto done; }
    }
    if (analysed && define_words(e, new_words, first_new, analysed)) goto done;
    /* phase 3 */
    Py_BEGIN_ALLOW_THREADS
    run_jobs(parts, sizeof(Part), n_threads, part_final);
    Py_END_ALLOW_THREADS
    Py_ssize_t total = 0;
    for (int i = 0; i < n_threads; i++) {
        if (parts[i].failed == 2) {
            PyErr_SetString(PyExc_RuntimeError, "internal error: a non-ASCII word was not analysed");
            goto done;
        }
        if (parts[i].failed) { PyErr_NoMemory(); goto done; }
        total += post ? parts[i].post.term.n : parts[i].final.n;
    }
    if (into) {
        VecI32 *terms[MAX_THREADS], *tfs[MAX_THREADS];
        for (int i = 0; i < n_threads; i++) {
            terms[i] = &parts[i].post.term;
            tfs[i] = &parts[i].post.tf;
        }
        if (builder_append(into, counts, pcounts, x->n, terms, tfs, n_threads)) { PyErr_NoMemory(); goto done; }
    }
    for (int v = 0; v < (into ? 0 : post ? 2 : 1); v++) { /* the parts' outputs joined in a bytes object each */
        made[v] = PyBytes_FromStringAndSize(NULL, total * (Py_ssize_t)sizeof(int32_t));
        if (!made[v]) goto done;
        char *dst = PyBytes_AS_STRING(made[v]);
        for (int i = 0; i < n_threads; i++) {
            const VecI32 *src = post ? (v ? &parts[i].post.tf : &parts[i].post.term) : &parts[i].final;
            memcpy(dst, src->a, (size_t)src->n * sizeof(int32_t));
            dst += src->n * sizeof(int32_t);
        }
    }
    ok = 1;
    if (!e->frozen) { /* keep the parts' new tokens as the memo of the next call */
        for (int i = 0; i < n_threads && e->n_deferred < MAX_THREADS; i++) {
            Deferred *d = &e->deferred[e->n_deferred];
            d->pend = parts[i].pend;
            d->resolved = parts[i].resolved;
            memset(&parts[i].pend, 0, sizeof(StrMap));
            parts[i].resolved = NULL;
            e->n_deferred++;
        }
    }
done:
    Py_XDECREF(analysed);
    for (int i = 0; i < n_threads; i++) part_free(parts + i);
    free(parts);
    return ok ? 0 : -1;
}

/* add_terms(terms): intern terms in order (a cached index's vocabulary); ids must come out 0, 1, ... */
static PyObject *Encoder_add_terms(Encoder *e, PyObject *terms_arg) {
    if (e->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Encoder.encode is running");
        return NULL;
    }
    if (!e->terms.slots) {
        PyErr_SetString(PyExc_RuntimeError, "Encoder.__init__ was not called");
        return NULL;
    }
    if (e->frozen) { /* frozen encoders remember unknown tokens as having no term */
        PyErr_SetString(PyExc_RuntimeError, "add_terms on a frozen Encoder; make a new one");
        return NULL;
    }
    PyObject *terms = PySequence_Fast(terms_arg, "terms must be a sequence of str");
    if (!terms) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(terms);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *keep;
        Py_ssize_t len;
        const char *s = utf8_of(PySequence_Fast_GET_ITEM(terms, i), &len, &keep);
        if (!s) { Py_DECREF(terms); return NULL; }
        uint64_t h = hash_bytes(s, len);
        Slot *found = map_find(&e->terms, s, len, h);
        Py_ssize_t id = found ? -1 : map_add(&e->terms, s, len, h, (int32_t)e->terms.n);
        Py_XDECREF(keep);
        if (found) {
            Py_DECREF(terms);
            return PyErr_Format(PyExc_ValueError, "term %zd is a repeat of term %d", i, found->val);
        }
        if (id < 0) { Py_DECREF(terms); return PyErr_NoMemory(); }
    }
    Py_DECREF(terms);
    Py_RETURN_NONE;
}

static PyObject *Encoder_freeze(Encoder *e, PyObject *unused) {
    if (e->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Encoder.encode is running");
        return NULL;
    }
    e->frozen = 1;
    drop_deferred(e);
    Py_RETURN_NONE;
}

/* terms(start=0) -> list[str]: the term strings of ids start, start + 1, ... */
static PyObject *Encoder_terms(Encoder *e, PyObject *args) {
    Py_ssize_t start = 0;
    if (!PyArg_ParseTuple(args, "|n", &start)) return NULL;
    if (e->busy) { /* encode may be changing the tables without the GIL */
        PyErr_SetString(PyExc_RuntimeError, "Encoder.encode is running");
        return NULL;
    }
    if (start < 0 || start > e->terms.n) return PyErr_Format(PyExc_IndexError, "start %zd out of range", start);
    PyObject *out = PyList_New(e->terms.n - start);
    if (!out) return NULL;
    for (Py_ssize_t i = start; i < e->terms.n; i++) {
        PyObject *s = PyUnicode_DecodeUTF8(e->terms.arena + e->terms.eoff[i], e->terms.elen[i], "surrogatepass");
        if (!s) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, i - start, s);
    }
    return out;
}

static PyObject *Encoder_n_terms(Encoder *e, void *unused) { return PyLong_FromSsize_t(e->terms.n); }
static PyObject *Encoder_frozen(Encoder *e, void *unused) { return PyBool_FromLong(e->frozen); }

static PyMethodDef Encoder_methods[] = {
    {"encode", (PyCFunction)(void (*)(void))Encoder_encode, METH_VARARGS | METH_KEYWORDS,
     "encode(texts, n_threads=1, parallel_min_bytes=1 MiB, postings=False, titles=None) -> (int64 bytes: terms per"
     " text, int32 bytes: term ids), or with postings=True (int64 bytes: terms per text, int64 bytes: postings per"
     " text, int32 bytes: term of each posting, int32 bytes: its tf), each text's distinct terms in order of first"
     " appearance; titles: one per text, read as title + ' ' + text; texts of at least parallel_min_bytes are"
     " tokenized on n_threads threads, with the same result"},
    {"add_terms", (PyCFunction)Encoder_add_terms, METH_O, "add_terms(terms): intern terms as ids n_terms, ..."},
    {"freeze", (PyCFunction)Encoder_freeze, METH_NOARGS, "freeze(): no new terms from now on (unknown ones are dropped)"},
    {"terms", (PyCFunction)Encoder_terms, METH_VARARGS, "terms(start=0) -> the term strings from id start on"},
    {NULL}};

static PyGetSetDef Encoder_getset[] = {
    {"n_terms", (getter)Encoder_n_terms, NULL, "number of terms", NULL},
    {"frozen", (getter)Encoder_frozen, NULL, "whether new terms are refused", NULL},
    {NULL}};

static PyTypeObject EncoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "retrievers.bm25._fastbm25.Encoder",
    .tp_basicsize = sizeof(Encoder),
    .tp_dealloc = (destructor)Encoder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Encoder(stopwords, possessive, stem, analyze_words): texts -> term ids (see the module doc)",
    .tp_methods = Encoder_methods,
    .tp_getset = Encoder_getset,
    .tp_init = (initproc)Encoder_init,
    .tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------------ PostingsBuilder */
/* (the PostingsBuilder type is defined above the Encoder, which can append to one) */

static void Builder_dealloc(Builder *b) {
    builder_free_postings(b);
    free(b->doc_end.a); free(b->doc_len.a); free(b->last); free(b->slot);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

static int get_buffer(PyObject *o, Py_buffer *view, Py_ssize_t item, const char *what) {
    if (PyObject_GetBuffer(o, view, PyBUF_SIMPLE)) return -1;
    if (view->len % item) {
        PyErr_Format(PyExc_ValueError, "%s: buffer of %zd bytes is not a whole number of %zd-byte items", what,
                     view->len, item);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
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

static void *finish_scatter(void *arg) {
    FinishJob *j = arg;
    const int64_t *doc_end = j->doc_end;
    Py_ssize_t d = j->d0, p = j->p0;
    for (int s = 0; s < j->n_segs; s++) {
        const int32_t *term = j->segs[s].term, *f = j->segs[s].tf;
        for (Py_ssize_t i = 0; i < j->segs[s].n; i++, p++) {
            while (doc_end[d] <= p) d++;
            int64_t dest = j->count[term[i]]++;
            j->indices[dest] = (int32_t)d;
            j->tf[dest] = f[i];
        }
    }
    return NULL;
}

/* finish(n_terms, n_threads=1) -> (indptr int64, indices int32, tf int32, doc_lengths int32) as bytes;
 * frees the builder's memory */
static PyObject *Builder_finish(Builder *b, PyObject *args) {
    Py_ssize_t n_terms;
    int n_threads = 1;
    if (!PyArg_ParseTuple(args, "n|i", &n_terms, &n_threads)) return NULL;
    if (n_terms < 0) return PyErr_Format(PyExc_ValueError, "n_terms must be >= 0, got %zd", n_terms);
    Py_ssize_t n_post = b->sealed_n + b->term.n;
    /* all segments in order: the sealed ones, then term/tf */
    Segment *segs = malloc((size_t)(b->n_sealed + 1) * sizeof(Segment));
    FinishJob jobs[MAX_THREADS];
    PyObject *indptr_b = NULL, *indices_b = NULL, *tf_b = NULL, *len_b = NULL, *ret = NULL;
    int64_t *counts = NULL;
    if (!segs) return PyErr_NoMemory();
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
    indices_b = PyBytes_FromStringAndSize(NULL, n_post * 4);
    tf_b = PyBytes_FromStringAndSize(NULL, n_post * 4);
    len_b = bytes_of(b->doc_len.a, b->doc_len.n * 4);
    if (!counts || !indptr_b || !indices_b || !tf_b || !len_b) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    int64_t *indptr = (int64_t *)PyBytes_AS_STRING(indptr_b);
    { /* jobs: runs of consecutive segments of about n_post / n_jobs postings */
        Py_ssize_t p0 = 0, d0 = 0;
        int s = 0;
        for (int i = 0; i < n_jobs; i++) {
            int s0 = s;
            Py_ssize_t goal = n_post / n_jobs * (i + 1), p = p0;
            while (s < n_seg && (i == n_jobs - 1 || s == s0 || (p < goal && n_seg - s > n_jobs - 1 - i))) p += segs[s++].n;
            jobs[i] = (FinishJob){segs + s0, s - s0, p0, d0, b->doc_end.a, n_terms, counts + (size_t)i * per,
                                  (int32_t *)PyBytes_AS_STRING(indices_b), (int32_t *)PyBytes_AS_STRING(tf_b), 0};
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
        run_jobs(jobs, sizeof(FinishJob), n_jobs, finish_scatter);
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
    Py_XDECREF(indptr_b); Py_XDECREF(indices_b); Py_XDECREF(tf_b); Py_XDECREF(len_b);
    return ret;
}

static PyMethodDef Builder_methods[] = {
    {"add", (PyCFunction)Builder_add, METH_VARARGS, "add(counts, term_ids): append documents"},
    {"add_postings", (PyCFunction)Builder_add_postings, METH_VARARGS,
     "add_postings(counts, posting_counts, terms, tfs): append documents given as postings (Encoder.encode(postings=True))"},
    {"finish", (PyCFunction)Builder_finish, METH_VARARGS,
     "finish(n_terms, n_threads=1) -> (indptr, indices, tf, doc_lengths) as bytes (int64, int32, int32, int32)"},
    {NULL}};

static PyTypeObject BuilderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "retrievers.bm25._fastbm25.PostingsBuilder",
    .tp_basicsize = sizeof(Builder),
    .tp_dealloc = (destructor)Builder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PostingsBuilder(): documents' term ids -> term-major postings with term frequencies",
    .tp_methods = Builder_methods,
    .tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------------ search */
static inline void swap64(int64_t *a, int64_t *b) { int64_t t = *a; *a = *b; *b = t; }

/* Sort a[0..n) descending (distinct keys): quicksort with insertion sort for short runs. */
static void sort_desc(int64_t *a, Py_ssize_t n) {
    while (n > 16) {
        int64_t x = a[0], y = a[n / 2], z = a[n - 1], pivot;
        pivot = (x < y) ? ((y < z) ? y : (x < z ? z : x)) : ((x < z) ? x : (y < z ? z : y));
        Py_ssize_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] > pivot) i++;
            while (a[j] < pivot) j--;
            if (i >= j) break;
            swap64(a + i, a + j);
            i++;
            j--;
        }
        /* a[0..j] >= pivot >= a[j+1..n) */
        if (j + 1 < n - j - 1) { sort_desc(a, j + 1); a += j + 1; n -= j + 1; }
        else { sort_desc(a + j + 1, n - j - 1); n = j + 1; }
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        int64_t v = a[i];
        Py_ssize_t j = i;
        while (j > 0 && a[j - 1] < v) { a[j] = a[j - 1]; j--; }
        a[j] = v;
    }
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void sort_i32(int32_t *a, Py_ssize_t n) {
    if (n > 32) { qsort(a, (size_t)n, 4, cmp_i32); return; }
    for (Py_ssize_t i = 1; i < n; i++) {
        int32_t v = a[i];
        Py_ssize_t j = i;
        while (j > 0 && a[j - 1] > v) { a[j] = a[j - 1]; j--; }
        a[j] = v;
    }
}

/* Sort a[0..n) descending (distinct keys), tmp[0..n) as scratch: LSD radix sort by bytes, only
 * over the bytes in which the keys differ. The result is in a (the data may move to tmp and back). */
static void radix_desc(int64_t *a, int64_t *tmp, Py_ssize_t n) {
    if (n <= 48) { sort_desc(a, n); return; }
    uint64_t all_or = 0, all_and = ~(uint64_t)0;
    for (Py_ssize_t i = 0; i < n; i++) {
        all_or |= (uint64_t)a[i];
        all_and &= (uint64_t)a[i];
    }
    uint64_t differ = all_or ^ all_and;
    int bytes[8], n_bytes = 0;
    for (int b = 0; b < 8; b++)
        if ((differ >> (8 * b)) & 255) bytes[n_bytes++] = b;
    uint32_t hist[8][256];
    memset(hist, 0, sizeof(uint32_t) * 256 * (size_t)n_bytes);
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t x = (uint64_t)a[i];
        for (int q = 0; q < n_bytes; q++) hist[q][255 - ((x >> (8 * bytes[q])) & 255)]++; /* 255 - byte: descending */
    }
    int64_t *src = a, *dst = tmp;
    for (int q = 0; q < n_bytes; q++) {
        uint32_t *h = hist[q], sum = 0;
        int shift = 8 * bytes[q];
        for (int d = 0; d < 256; d++) { uint32_t c = h[d]; h[d] = sum; sum += c; }
        for (Py_ssize_t i = 0; i < n; i++) {
            uint64_t x = (uint64_t)src[i];
            dst[h[255 - ((x >> shift) & 255)]++] = (int64_t)x;
        }
        int64_t *t = src; src = dst; dst = t;
    }
    if (src != a) memcpy(a, src, (size_t)n * sizeof(int64_t));
}

#define TOP_BITS 12
/* The k largest of the distinct keys a[0..n) (non-negative: positive float bits << 32 | rank),
 * sorted descending, in a[0..k); 0 < k <= n. A histogram of the keys' top bits finds the bucket
 * the k-th largest falls in; only keys from that bucket up are sorted. tmp: scratch of n keys. */
static void top_sorted(int64_t *a, int64_t *tmp, Py_ssize_t n, Py_ssize_t k) {
    if (k >= n || n <= 256) { radix_desc(a, tmp, n); return; }
    static const int shift = 63 - TOP_BITS; /* bit 63 (the sign) is 0 */
    uint32_t hist[1 << TOP_BITS];
    memset(hist, 0, sizeof(hist));
    for (Py_ssize_t i = 0; i < n; i++) hist[(uint64_t)a[i] >> shift]++;
    Py_ssize_t above = 0;
    int cut = (1 << TOP_BITS) - 1;
    while (above + hist[cut] < k) above += hist[cut--]; /* keys in buckets > cut: above < k */
    Py_ssize_t m = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if ((int)((uint64_t)a[i] >> shift) >= cut) tmp[m++] = a[i];
    radix_desc(tmp, a, m);
    memcpy(a, tmp, (size_t)k * sizeof(int64_t));
}

/* ------------------------------------------------------------------ Index: search
 * Index(indptr, indices, data, n_docs, id_rank, doc_of_rank) holds an index's arrays, checked once
 * when it is made (every position search reads at is then in bounds); the arrays must not change
 * afterwards. Index.search(query_offsets, query_terms, k, constants=None, n_threads=1, doc_block)
 * checks only the queries. Per thread, documents are scored DOC_BLOCK at a time (each query term's postings for
 * the block found by binary search: documents ascend within a term), so the scratch is bounded by
 * the block and k, not the corpus; every document's terms are still added in the same order, so
 * the sums, the scores and the ranking are those of one pass over the whole corpus. */
#define DOC_BLOCK 65536

typedef struct {
    PyObject_HEAD
    Py_buffer v[5]; /* indptr int64, indices int32, data float32, id_rank int64, doc_of_rank int64 */
    int n_views;
    Py_ssize_t n_docs, n_terms, n_post;
} Index;

static void Index_dealloc(Index *x) {
    for (int i = 0; i < x->n_views; i++) PyBuffer_Release(&x->v[i]);
    Py_TYPE(x)->tp_free((PyObject *)x);
}

static int Index_init(Index *x, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"indptr", "indices", "data", "n_docs", "id_rank", "doc_of_rank", NULL};
    PyObject *o[5];
    Py_ssize_t n_docs;
    if (x->n_views) {
        PyErr_SetString(PyExc_RuntimeError, "Index is already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOnOO", kwlist, &o[0], &o[1], &o[2], &n_docs, &o[3], &o[4]))
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
    if (n_docs < 0 || x->v[2].len / 4 != n_post || x->v[3].len / 8 != n_docs || x->v[4].len / 8 != n_docs ||
        indptr[n_terms] != n_post) {
        PyErr_SetString(PyExc_ValueError, "Index: array sizes do not fit together");
        return -1;
    }
    if (indptr[0] != 0) {
        PyErr_SetString(PyExc_ValueError, "Index: indptr must start at 0");
        return -1;
    }
    for (Py_ssize_t t = 0; t < n_terms; t++)
        if (indptr[t] > indptr[t + 1]) {
            PyErr_SetString(PyExc_ValueError, "Index: indptr is not ascending");
            return -1;
        }
    for (Py_ssize_t p = 0; p < n_post; p++)
        if (indices[p] < 0 || indices[p] >= n_docs) {
            PyErr_SetString(PyExc_ValueError, "Index: a posting's document is out of range");
            return -1;
        }
    for (Py_ssize_t d = 0; d < n_docs; d++)
        if (rank[d] < 0 || rank[d] >= n_docs || order[d] < 0 || order[d] >= n_docs) {
            PyErr_SetString(PyExc_ValueError, "Index: id_rank and doc_of_rank values must lie in [0, n_docs)");
            return -1;
        }
    x->n_docs = n_docs;
    x->n_terms = n_terms;
    x->n_post = n_post;
    return 0;
}

/* One thread's share of a search: queries q0..q1, each written at q * kk of the outputs. */
typedef struct {
    const int64_t *indptr, *qoff, *rank, *order;
    const int32_t *indices, *qterms;
    const float *data, *consts;
    Py_ssize_t n_docs, kk, longest, q0, q1, block;
    int64_t *hits, *docs_out;
    double *scores_out;
    int failed;
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

static void *search_run(void *arg) {
    SearchJob *j = arg;
    Py_ssize_t n_docs = j->n_docs, kk = j->kk;
    Py_ssize_t block = n_docs < j->block ? (n_docs ? n_docs : 1) : j->block, cap = kk + block;
    double *acc = calloc((size_t)block, sizeof(double));
    unsigned char *seen = calloc((size_t)block, 1);
    int32_t *touched = malloc((size_t)block * 4), *qbuf = malloc((size_t)j->longest * 4);
    int32_t *uniq = malloc((size_t)j->longest * 4);
    int64_t *keys = malloc((size_t)cap * 8), *scratch = malloc((size_t)cap * 8);
    int64_t *cursor = malloc((size_t)j->longest * 8);
    float *boosts = malloc((size_t)j->longest * sizeof(float));
    if (!acc || !seen || !touched || !qbuf || !uniq || !keys || !scratch || !cursor || !boosts) {
        j->failed = 1;
        goto done;
    }
    const int64_t *indptr = j->indptr, *qoff = j->qoff, *rank = j->rank, *order = j->order;
    const int32_t *indices = j->indices;
    const float *data = j->data;
    for (Py_ssize_t q = j->q0; q < j->q1; q++) {
        /* the query's distinct terms in ascending id order (as np.unique), each with its count */
        Py_ssize_t m = qoff[q + 1] - qoff[q], nt = 0;
        memcpy(qbuf, j->qterms + qoff[q], (size_t)m * 4);
        sort_i32(qbuf, m);
        for (Py_ssize_t i = 0; i < m; i++) {
            if (nt && uniq[nt - 1] == qbuf[i]) { boosts[nt - 1] += 1.0f; continue; }
            uniq[nt] = qbuf[i];
            boosts[nt++] = 1.0f;
        }
        for (Py_ssize_t u = 0; u < nt; u++) cursor[u] = indptr[uniq[u]];
        float c = j->consts ? j->consts[q] : 0.0f;
        Py_ssize_t n_keys = 0;
        for (Py_ssize_t b0 = 0; b0 < n_docs; b0 += block) {
            Py_ssize_t b1 = b0 + block < n_docs ? b0 + block : n_docs, n_touched = 0;
            if (n_keys > kk) { /* room for this block's keys: keep the best kk so far */
                top_sorted(keys, scratch, n_keys, kk);
                n_keys = kk;
            }
            for (Py_ssize_t u = 0; u < nt; u++) {
                int64_t p = cursor[u], end = indptr[uniq[u] + 1];
                int64_t stop = b1 == n_docs ? end : lower_bound(indices, p, end, (int32_t)b1);
                float boost = boosts[u];
                for (; p < stop; p++) {
                    int32_t d = indices[p] - (int32_t)b0;
                    float val = boost == 1.0f ? data[p] : data[p] * boost;
                    acc[d] += (double)val;
                    if (!seen[d]) { seen[d] = 1; touched[n_touched++] = d; }
                }
                cursor[u] = stop;
            }
            for (Py_ssize_t i = 0; i < n_touched; i++) {
                int32_t d = touched[i];
                float s = (float)acc[d];
                if (j->consts) s = s + c;
                acc[d] = 0.0;
                seen[d] = 0;
                if (s > 0) { /* the key of retrievers/topk.py: float32 bits (positive) << 32 | id rank */
                    int32_t bits;
                    memcpy(&bits, &s, 4);
                    keys[n_keys++] = ((int64_t)bits << 32) | rank[b0 + d];
                }
            }
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
    free(boosts);
    return NULL;
}

/* Index.search(query_offsets, query_terms, k, constants=None, n_threads=1, doc_block=DOC_BLOCK)
 *   -> (int64 bytes: hits per query, int64 bytes: documents, float64 bytes: scores (float32 values))
 * constants: None, or a float32 per query added (in float32) to every matched document's score
 * (BM25L / BM25+'s non-occurrence score). Queries are split among n_threads threads (without the GIL).
 * doc_block: documents scored together (the same results for any value; tests use small ones). */
static PyObject *Index_search(Index *x, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"query_offsets", "query_terms", "k", "constants", "n_threads", "doc_block", NULL};
    PyObject *o[3] = {NULL, NULL, Py_None};
    Py_ssize_t k, doc_block = DOC_BLOCK;
    int n_threads = 1;
    if (!x->n_views) {
        PyErr_SetString(PyExc_RuntimeError, "Index is not initialised");
        return NULL;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOn|Oin", kwlist, &o[0], &o[1], &k, &o[2], &n_threads, &doc_block))
        return NULL;
    if (n_threads < 1) n_threads = 1;
    if (n_threads > MAX_THREADS) n_threads = MAX_THREADS;
    Py_buffer v[3];
    static const Py_ssize_t item[3] = {8, 4, 4};
    static const char *what[3] = {"query_offsets", "query_terms", "constants"};
    int n_views = 0, has_const = o[2] != Py_None;
    PyObject *ret = NULL, *hits_b = NULL, *docs_b = NULL, *scores_b = NULL;
    for (int i = 0; i < 3; i++) {
        if (i == 2 && !has_const) break;
        if (get_buffer(o[i], &v[i], item[i], what[i])) goto done;
        n_views++;
    }
    if (v[0].len < 8) {
        PyErr_SetString(PyExc_ValueError, "search: query_offsets needs at least one entry");
        goto done;
    }
    const int64_t *qoff = v[0].buf;
    const int32_t *qterms = v[1].buf;
    Py_ssize_t n_q = v[0].len / 8 - 1, n_qt = v[1].len / 4, n_docs = x->n_docs;
    if (k < 1 || doc_block < 1 || (has_const && v[2].len / 4 != n_q)) {
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
    for (int i = 0; i < n_threads; i++)
        jobs[i] = (SearchJob){x->v[0].buf, qoff, x->v[3].buf, x->v[4].buf, x->v[1].buf, qterms, x->v[2].buf,
                              has_const ? v[2].buf : NULL, n_docs, kk, longest, n_q * i / n_threads,
                              n_q * (i + 1) / n_threads, doc_block, hits, docs_out, scores_out, 0};
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
    if (failed) { PyErr_NoMemory(); goto done; }
    if (_PyBytes_Resize(&docs_b, total * 8) || _PyBytes_Resize(&scores_b, total * 8)) goto done;
    ret = PyTuple_Pack(3, hits_b, docs_b, scores_b);
done:
    for (int i = 0; i < n_views; i++) PyBuffer_Release(&v[i]);
    Py_XDECREF(hits_b); Py_XDECREF(docs_b); Py_XDECREF(scores_b);
    return ret;
}

static PyMethodDef Index_methods[] = {
    {"search", (PyCFunction)(void (*)(void))Index_search, METH_VARARGS | METH_KEYWORDS,
     "search(query_offsets, query_terms, k, constants=None, n_threads=1, doc_block=65536) -> (hits per query,"
     " documents, scores)"
     " as bytes (int64, int64, float64 holding float32 values)"},
    {NULL}};

static PyTypeObject IndexType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "retrievers.bm25._fastbm25.Index",
    .tp_basicsize = sizeof(Index),
    .tp_dealloc = (destructor)Index_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Index(indptr, indices, data, n_docs, id_rank, doc_of_rank): an index's arrays, checked once, to search",
    .tp_methods = Index_methods,
    .tp_init = (initproc)Index_init,
    .tp_new = PyType_GenericNew,
};

/* score_lucene on threads: each job a run of terms, checked then scored. */
typedef struct {
    const int64_t *indptr;
    const int32_t *indices, *tf;
    const float *idf, *inv;
    Py_ssize_t t0, t1, n_docs, n_post;
    float *data;
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
        for (int64_t p = indptr[t]; p < indptr[t + 1]; p++) {
            float x = (float)j->tf[p] * j->inv[j->indices[p]];
            x = 1.0f + x;
            j->data[p] = w - w / x;
        }
    }
    return NULL;
}

/* score_lucene(indptr, indices, tf, idf, inv, n_threads=1) -> float32 bytes: posting p of term t in
 * document d scores  w - w / (1 + tf * inv[d])  with w = idf[t], in float32 operations (Lucene's
 * BM25 similarity; inv[d] = 1 / (k1 (1 - b + b dl/avgdl)), precomputed per document). */
static PyObject *score_lucene(PyObject *self, PyObject *args) {
    PyObject *o[5];
    int n_threads = 1;
    if (!PyArg_ParseTuple(args, "OOOOO|i", &o[0], &o[1], &o[2], &o[3], &o[4], &n_threads)) return NULL;
    Py_buffer v[5];
    static const Py_ssize_t item[5] = {8, 4, 4, 4, 4};
    static const char *what[5] = {"indptr", "indices", "tf", "idf", "inv"};
    int n_views = 0;
    PyObject *ret = NULL;
    for (int i = 0; i < 5; i++) {
        if (get_buffer(o[i], &v[i], item[i], what[i])) goto done;
        n_views++;
    }
    const int64_t *indptr = v[0].buf;
    Py_ssize_t n_terms = v[0].len / 8 - 1, n_post = v[1].len / 4, n_docs = v[4].len / 4;
    if (n_terms < 0 || v[2].len / 4 != n_post || v[3].len / 4 != n_terms || indptr[0] != 0 || indptr[n_terms] != n_post) {
        PyErr_SetString(PyExc_ValueError, "score_lucene: array sizes do not fit together");
        goto done;
    }
    ret = PyBytes_FromStringAndSize(NULL, n_post * 4);
    if (!ret) goto done;
    int n_jobs = n_threads < 1 ? 1 : n_threads > MAX_THREADS ? MAX_THREADS : n_threads;
    if (n_post < 65536) n_jobs = 1;
    ScoreJob jobs[MAX_THREADS];
    Py_ssize_t t = 0;
    for (int i = 0; i < n_jobs; i++) { /* runs of terms of about n_post / n_jobs postings */
        Py_ssize_t t0 = t;
        int64_t goal = (int64_t)(n_post / n_jobs) * (i + 1);
        if (i == n_jobs - 1) t = n_terms;
        else while (t < n_terms && indptr[t] < goal) t++; /* (indptr checked as the jobs run) */
        jobs[i] = (ScoreJob){indptr, v[1].buf, v[2].buf, v[3].buf, v[4].buf, t0, t, n_docs, n_post,
                             (float *)PyBytes_AS_STRING(ret), 0};
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
    return ret;
}

/* digest_column(update, strings): update(int64 bytes of each string's length in code points), then
 * update(...) with the UTF-8 (surrogatepass) of the strings joined, in pieces of up to 1 MiB: the
 * byte stream of update(lengths); update("".join(strings).encode("utf-8", "surrogatepass")),
 * without building the joined string or its encoding. */
static PyObject *digest_column(PyObject *self, PyObject *args) {
    PyObject *update, *strings_arg;
    if (!PyArg_ParseTuple(args, "OO", &update, &strings_arg)) return NULL;
    PyObject *strings = PySequence_Fast(strings_arg, "strings must be a sequence of str");
    if (!strings) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(strings);
    PyObject *ret = NULL, *lengths = PyBytes_FromStringAndSize(NULL, n * 8);
    const Py_ssize_t cap = 1 << 20;
    char *buf = malloc((size_t)cap);
    Py_ssize_t used = 0;
    if (!lengths || !buf) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    int64_t *len = (int64_t *)PyBytes_AS_STRING(lengths);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *str = PySequence_Fast_GET_ITEM(strings, i);
        if (!PyUnicode_Check(str)) {
            PyErr_Format(PyExc_TypeError, "expected str, got %.80s", Py_TYPE(str)->tp_name);
            goto done;
        }
        len[i] = PyUnicode_GET_LENGTH(str);
    }
    PyObject *r = PyObject_CallOneArg(update, lengths);
    if (!r) goto done;
    Py_DECREF(r);
    for (Py_ssize_t i = 0; i <= n; i++) {
        PyObject *keep = NULL;
        Py_ssize_t m = 0;
        const char *p = i < n ? utf8_of(PySequence_Fast_GET_ITEM(strings, i), &m, &keep) : "";
        if (!p) goto done;
        while (m > 0 || (i == n && used)) { /* fill the buffer; hand it over when full (and at the end) */
            Py_ssize_t take = m < cap - used ? m : cap - used;
            memcpy(buf + used, p, (size_t)take);
            used += take;
            p += take;
            m -= take;
            if (used == cap || (i == n && m == 0)) {
                PyObject *piece = PyBytes_FromStringAndSize(buf, used);
                PyObject *r2 = piece ? PyObject_CallOneArg(update, piece) : NULL;
                Py_XDECREF(piece);
                if (!r2) { Py_XDECREF(keep); goto done; }
                Py_DECREF(r2);
                used = 0;
            }
        }
        Py_XDECREF(keep);
    }
    Py_INCREF(Py_None);
    ret = Py_None;
done:
    free(buf);
    Py_XDECREF(lengths);
    Py_DECREF(strings);
    return ret;
}

/* is_separator(code_point) -> whether the encoder cuts words at it (for tests) */
static PyObject *is_separator(PyObject *self, PyObject *arg) {
    long cp = PyLong_AsLong(arg);
    if (cp == -1 && PyErr_Occurred()) return NULL;
    if (cp < 0 || cp > 0x10FFFF) return PyErr_Format(PyExc_ValueError, "not a code point: %ld", cp);
    return PyBool_FromLong(cp < 0x80 ? (CLS[cp] & C_SEP) != 0 : is_separator_cp((uint32_t)cp));
}

/* stem(word) -> Lucene's Porter stem of a lowercase ASCII word (for tests) */
static PyObject *stem(PyObject *self, PyObject *arg) {
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(arg, &n);
    if (!s) return NULL;
    if (n > MAX_TOKEN) return PyErr_Format(PyExc_ValueError, "words longer than %d bytes are cut before stemming", MAX_TOKEN);
    char buf[MAX_TOKEN + 1];
    memcpy(buf, s, (size_t)n);
    int m = porter_stem(buf, (int)n);
    return PyUnicode_DecodeUTF8(buf, m, "strict");
}

/* stem_ascii(words) -> list: Lucene's Porter stem of each all-ASCII word of <= 255 bytes (lowercase
 * expected), None for any other word (the caller stems those its own way). */
static PyObject *stem_ascii(PyObject *self, PyObject *arg) {
    PyObject *words = PySequence_Fast(arg, "words must be a sequence of str");
    if (!words) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(words);
    PyObject *out = PyList_New(n);
    if (!out) { Py_DECREF(words); return NULL; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *w = PySequence_Fast_GET_ITEM(words, i), *r;
        if (!PyUnicode_Check(w)) {
            Py_DECREF(out); Py_DECREF(words);
            return PyErr_Format(PyExc_TypeError, "expected str, got %.80s", Py_TYPE(w)->tp_name);
        }
        if (PyUnicode_IS_ASCII(w) && PyUnicode_GET_LENGTH(w) <= MAX_TOKEN) {
            Py_ssize_t len = PyUnicode_GET_LENGTH(w);
            char buf[MAX_TOKEN + 1];
            memcpy(buf, PyUnicode_DATA(w), (size_t)len);
            int m = porter_stem(buf, (int)len);
            int same = m == len && memcmp(buf, PyUnicode_DATA(w), (size_t)len) == 0;
            r = same ? (Py_INCREF(w), w) : PyUnicode_FromStringAndSize(buf, m);
            if (!r) { Py_DECREF(out); Py_DECREF(words); return NULL; }
        } else {
            Py_INCREF(Py_None);
            r = Py_None;
        }
        PyList_SET_ITEM(out, i, r);
    }
    Py_DECREF(words);
    return out;
}

static PyMethodDef module_methods[] = {
    {"stem_ascii", stem_ascii, METH_O,
     "stem_ascii(words) -> Lucene's Porter stem of each all-ASCII word of <= 255 bytes, None for the others"},
    {"score_lucene", score_lucene, METH_VARARGS,
     "score_lucene(indptr, indices, tf, idf, inv, n_threads=1) -> float32 bytes: w - w / (1 + tf inv[doc]), w = idf[term],"
     " in float32"},
    {"digest_column", digest_column, METH_VARARGS,
     "digest_column(update, strings): update() with the strings' lengths (int64) and their joined UTF-8 (surrogatepass)"},
    {"is_separator", is_separator, METH_O, "is_separator(code_point) -> whether no token holds it (words are cut there)"},
    {"stem", stem, METH_O, "stem(word) -> Lucene's Porter stem of a lowercase ASCII word"},
    {NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_fastbm25", "Compiled hot loops of the bm25s backend.",
                                       -1, module_methods};

PyMODINIT_FUNC PyInit__fastbm25(void) {
    init_classes();
    if (PyType_Ready(&EncoderType) < 0 || PyType_Ready(&BuilderType) < 0 || PyType_Ready(&IndexType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    Py_INCREF(&EncoderType);
    Py_INCREF(&BuilderType);
    Py_INCREF(&IndexType);
    if (PyModule_AddObject(m, "Encoder", (PyObject *)&EncoderType) ||
        PyModule_AddObject(m, "PostingsBuilder", (PyObject *)&BuilderType) ||
        PyModule_AddObject(m, "Index", (PyObject *)&IndexType)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
