/* The Encoder's types, shared by encoder.c (the type, its tables, sequential encoding) and
 * encode_parallel.c (large calls on threads). */
#ifndef ENCODER_H
#define ENCODER_H

#include "fastbm25.h"

#define CACHE_BITS 15
#define PART_CACHE_BITS 18 /* a parallel part's cache: kept across calls, so it may be larger */
typedef struct { uint64_t k0, k1; int32_t len; int32_t val; } CacheEntry; /* len 0: empty */

/* The encoder's tokens of <= 16 bytes again, each key held in its slot (zero-padded to two words):
 * a lookup reads one slot and no key bytes elsewhere (a miss of a part's direct-mapped cache lands
 * here). Holds exactly the entries of `tokens` of <= 16 bytes, with the same values. */
typedef struct { uint64_t k0, k1; int32_t len; int32_t val; } ShortSlot; /* len 0: empty */
typedef struct { ShortSlot *slots; size_t mask; Py_ssize_t n; } ShortMap;

static inline uint64_t short_hash(uint64_t k0, uint64_t k1, int n) {
    uint64_t h = (k0 * 0xC2B2AE3D27D4EB4FULL) ^ (k1 * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)n << 56);
    h ^= h >> 31;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 29);
}

static inline ShortSlot *short_slot(const ShortMap *m, uint64_t k0, uint64_t k1, int n) { /* where to look first */
    return m->slots + (short_hash(k0, k1, n) & m->mask);
}

/* The slot of key (k0, k1, n), or NULL. */
static inline ShortSlot *short_find(const ShortMap *m, uint64_t k0, uint64_t k1, int n) {
    size_t i = short_hash(k0, k1, n) & m->mask;
    for (;;) {
        ShortSlot *slot = m->slots + i;
        if (slot->len == n && slot->k0 == k0 && slot->k1 == k1) return slot;
        if (slot->len == 0) return NULL;
        i = (i + 1) & m->mask;
    }
}

/* New tokens of a parallel encode call, kept as a memo until the next call: token -> term id or -1 */
typedef struct { StrMap pend; int32_t *resolved; } Deferred;

typedef struct {
    PyObject_HEAD
    StrMap tokens;  /* lowercased ASCII token -> term id, or -1 (stopword / unknown when frozen) */
    ShortMap short_tokens; /* its entries of <= 16 bytes, keys inline */
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
    /* The deferred memo is added to tokens on a thread of its own (start_flush), from the end of a
     * parallel call's numbering on, while its last phase runs and the caller gets the next chunk
     * ready: it writes tokens and short_tokens, which nothing reads meanwhile; settle() joins it
     * before anything else touches the encoder's tables. */
    pthread_t flusher;
    int flushing, flush_failed;
    /* Parallel part i's direct-mapped cache, kept from call to call (allocated on first use): an
     * entry holding a final value (a term id or -1, which never change) stays valid; one holding a
     * PENDING value is valid only in the call that made it, so its len carries that call's
     * generation (len | gen << 8; see cached_value). */
    CacheEntry *part_cache[MAX_THREADS];
    uint32_t gen;
    /* Parallel part i's marks for text_postings (one per term), kept from call to call and grown
     * with the terms (see part_marks), where each call's parts once calloc'ed n_terms marks afresh,
     * zeroed each time (~1M terms x 8 B x 2 parts x 442 chunks at 8.8M passages). A mark names its text by
     * mark_base + its number in the call, a number no earlier call used, so an old mark never
     * matches; freed by freeze (queries need none). */
    uint64_t *part_marks[MAX_THREADS];
    Py_ssize_t part_marks_n[MAX_THREADS];
    int64_t mark_base;
} Encoder;

/* Where tokens go. Sequential encoding (part == NULL) reads and writes the encoder's tables and
 * appends term ids to out. A parallel part (see encode_parallel) only reads the encoder's tables:
 * tokens it has not seen go to its own table of pending tokens, stemmed there, and are appended as
 * PENDING(p); words holding non-ASCII bytes are appended as COMPLEX and listed in order. */
typedef struct Part Part;
/* Tokens queued with their cache entry prefetched (see enqueue_token); a drain prefetches the queued
 * misses' slots of short_tokens, then resolves the queue in order, so the longer the queue the longer
 * those prefetches have before their slot is read (a miss's first slot read was 73% of part_lookup's
 * samples at 16). Encoding 1M documents in process, 4 alternated runs: 16 -> 64, 1.79-1.92 -> 1.47-1.82 s,
 * CPU 3.18-3.36 -> 2.57-3.04 s (128: 1.50-1.69 s); 1M MS MARCO-shaped passages 1.81-2.72 -> 1.61-2.04 s. */
#define TOKEN_BATCH 64
typedef struct { uint64_t w[2]; CacheEntry *c; int32_t n; } Queued;
typedef struct {
    Encoder *e;
    Part *part;
    VecI32 *out;
    CacheEntry *cache;
    PyObject *new_words;     /* sequential: the new non-ASCII words of this call */
    Py_ssize_t placeholders; /* sequential: non-ASCII words appended as -(cw + 1), waiting for their terms */
    int cache_shift;         /* 64 - the cache's bits */
    int32_t gen8;            /* parallel: this call's generation << 8 (tags PENDING entries of the cache) */
    int nq;                  /* tokens queued in q, resolved in order by drain_tokens */
    Queued q[TOKEN_BATCH];
} Sink;

#define COMPLEX INT32_MIN
#define PENDING(p) (-3 - (int32_t)(p))


/* The texts' UTF-8: pointers, lengths, whether all ASCII, two segments per text (a title, or
 * nothing, then the text: a text with a title reads as title + " " + text); `keep` holds the bytes
 * objects made for non-ASCII strings, `views` the buffers of columns (released with the Texts). */
typedef struct {
    Py_ssize_t n;                /* texts */
    const unsigned char **ptr;   /* segments 2t, 2t + 1 */
    Py_ssize_t *len;
    unsigned char *ascii;        /* 1: the segment is all ASCII; 0: it may not be */
    PyObject *keep;
    Py_ssize_t total;            /* bytes */
    Py_buffer *views;            /* columns: the buffers read (released with the Texts) */
    int n_views, cap_views;
} Texts;

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

/* encoder.c */
int short_add(ShortMap *m, const char *s, int n, int32_t val);
int short_reserve(ShortMap *m, Py_ssize_t more);
void short_free(ShortMap *m);
static inline void short_key(const char *s, int n, uint64_t *k0, uint64_t *k1) { /* s[0..n), n <= 16, zero-padded */
    uint64_t w[2] = {0, 0};
    memcpy(w, s, (size_t)n);
    *k0 = w[0];
    *k1 = w[1];
}
int32_t term_id(Encoder *e, const char *s, Py_ssize_t n);
int32_t term_id_hashed(Encoder *e, const char *s, Py_ssize_t n, uint64_t h);
int token_term(const Encoder *e, const char *tok, int n, uint64_t h, char *buf);
int define_words(Encoder *e, PyObject *words, Py_ssize_t first, PyObject *result);
void drop_deferred(Encoder *e);
void start_flush(Encoder *e);
int32_t token_value(Encoder *e, const char *tok, int n);
int analyze_and_define(Encoder *e, PyObject *words, Py_ssize_t first);
int32_t word_number(Encoder *e, const unsigned char *w, Py_ssize_t n, PyObject *new_words);
int tokenize_ascii(Sink *k, const unsigned char *w, Py_ssize_t n, const unsigned char *end);
int drain_tokens(Sink *k);
int scan_doc(Sink *k, const Texts *x, Py_ssize_t t);
Py_ssize_t text_bytes(const Texts *x, Py_ssize_t t);
int expand_placeholders(Encoder *e, VecI32 *out, int64_t *counts, Py_ssize_t n_texts);

/* encode_parallel.c */
void free_part_marks(Encoder *e);
int32_t part_lookup(Part *part, const char *tok, int n);
int complex_word_part(Part *part, const unsigned char *w, Py_ssize_t n);
int encode_parallel(Encoder *e, Texts *x, int n_threads, int64_t *counts, PyObject *new_words, int64_t *pcounts,
                    PyObject **made, Builder *into);

#endif
