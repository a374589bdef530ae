/* The Encoder: texts (and titles, read as title + " " + text) -> term ids, or each text's postings
 * (term, tf), or those appended straight to a PostingsBuilder. ASCII text is cut into tokens in one
 * pass by Lucene's StandardTokenizer rules restricted to ASCII (retrievers/bm25/tokenizer.py states
 * them). A whitespace word holding a non-ASCII byte is cut at separators (tokenizer.c); its ASCII
 * pieces take the ASCII path, and each distinct piece holding another non-ASCII character is handed
 * to a Python callable (the analyzer's exact Unicode path) in one batch per call. Possessive
 * removal, lowercasing, stopwords and Lucene's Porter stemmer (porter.c) run here, memoized per
 * distinct lowercased token. Large calls run on several threads with the same result
 * (encode_parallel.c). */
#include "encoder.h"


/* The deferred memo: a parallel encode call leaves its new tokens in its parts' tables; a later call
 * adds them to `tokens` first (flush), or, when the encoder is frozen, drops them: the memo only saves
 * work (a token missing from it is stemmed and looked up again, with the same result). */
void drop_deferred(Encoder *e) {
    for (int i = 0; i < e->n_deferred; i++) {
        map_free(&e->deferred[i].pend);
        free(e->deferred[i].resolved);
    }
    e->n_deferred = 0;
}

/* The short-token table (see encoder.h): open addressing, at most half full. */
void short_free(ShortMap *m) {
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

static int short_rehash(ShortMap *m, size_t cap) {
    ShortSlot *slots = table_calloc(cap * sizeof(ShortSlot));
    if (!slots) return -1;
    for (size_t j = 0; m->slots && j <= m->mask; j++) {
        ShortSlot *old = m->slots + j;
        if (!old->len) continue;
        size_t i = short_hash(old->k0, old->k1, old->len) & (cap - 1);
        while (slots[i].len) i = (i + 1) & (cap - 1);
        slots[i] = *old;
    }
    free(m->slots);
    m->slots = slots;
    m->mask = cap - 1;
    return 0;
}

int short_reserve(ShortMap *m, Py_ssize_t more) {
    size_t cap = m->slots ? m->mask + 1 : 1024;
    while ((size_t)(m->n + more) * 2 > cap) cap *= 2;
    return !m->slots || cap > m->mask + 1 ? short_rehash(m, cap) : 0;
}

/* Adds key s[0..n) (1 <= n <= 16), known to be absent, with its value. -1: out of memory. */
int short_add(ShortMap *m, const char *s, int n, int32_t val) {
    if (short_reserve(m, 1)) return -1;
    uint64_t k0, k1;
    short_key(s, n, &k0, &k1);
    size_t i = short_hash(k0, k1, n) & m->mask;
    while (m->slots[i].len) i = (i + 1) & m->mask;
    m->slots[i] = (ShortSlot){k0, k1, n, val};
    m->n++;
    return 0;
}

/* Adds a token known to be absent from `tokens` (and so from short_tokens). -1: out of memory. */
static int add_token(Encoder *e, const char *tok, int n, uint64_t h, int32_t val) {
    if (map_add(&e->tokens, tok, n, h, val) < 0) return -1;
    return n <= 16 ? short_add(&e->short_tokens, tok, n, val) : 0;
}

/* Adds the deferred memo's tokens to tokens (and short_tokens), reading the memo only: FLUSH_AHEAD at a
 * time, their slots in both tables prefetched first (both reserved for all of a part's tokens, so no
 * rehash moves a slot meanwhile), so that the tables' cache misses overlap. */
enum { FLUSH_AHEAD = 16 };

static int add_deferred(Encoder *e) {
    for (int i = 0; i < e->n_deferred; i++) {
        Deferred *d = &e->deferred[i];
        if (map_reserve(&e->tokens, d->pend.n) || short_reserve(&e->short_tokens, d->pend.n)) return -1;
        for (Py_ssize_t q0 = 0; q0 < d->pend.n; q0 += FLUSH_AHEAD) {
            Py_ssize_t m = d->pend.n - q0 < FLUSH_AHEAD ? d->pend.n - q0 : FLUSH_AHEAD;
            uint64_t h[FLUSH_AHEAD];
            for (Py_ssize_t j = 0; j < m; j++) {
                const char *key = d->pend.arena + d->pend.eoff[q0 + j];
                int n = d->pend.elen[q0 + j];
                h[j] = hash_bytes(key, n);
                __builtin_prefetch(e->tokens.slots + (h[j] & e->tokens.mask), 1);
                if (n <= 16) {
                    uint64_t k0, k1;
                    short_key(key, n, &k0, &k1);
                    __builtin_prefetch(short_slot(&e->short_tokens, k0, k1, n), 1);
                }
            }
            for (Py_ssize_t j = 0; j < m; j++) {
                Py_ssize_t q = q0 + j;
                const char *key = d->pend.arena + d->pend.eoff[q];
                int n = d->pend.elen[q];
                if (!map_find(&e->tokens, key, n, h[j]) && add_token(e, key, n, h[j], d->resolved[q])) return -1;
            }
        }
    }
    return 0;
}

static int flush_deferred(Encoder *e) {
    int failed = add_deferred(e);
    if (!failed) drop_deferred(e);
    return failed;
}

static void *flush_job(void *arg) { /* (the memo is freed by settle: the call's last phase still reads it) */
    Encoder *e = arg;
    e->flush_failed = add_deferred(e) != 0;
    return NULL;
}

/* add_deferred on a thread of its own (see Encoder.flusher; settle frees the memo after it); when no
 * thread can be started the memo stays deferred, for the next call to flush. */
void start_flush(Encoder *e) {
    if (e->n_deferred && !e->flushing && pthread_create(&e->flusher, NULL, flush_job, e) == 0) e->flushing = 1;
}

/* Wait for the flush started by the last call, if any (with the GIL released: the flush never takes
 * it; the encoder is marked busy meanwhile, so another thread let in is refused). A flush that ran
 * out of memory leaves the encoder broken, as a failed flush_deferred does. */
static void settle(Encoder *e) {
    if (!e->flushing) return;
    e->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    pthread_join(e->flusher, NULL);
    Py_END_ALLOW_THREADS
    e->busy = 0;
    e->flushing = 0;
    if (e->flush_failed) e->broken = 1;
    else drop_deferred(e);
}

static void Encoder_dealloc(Encoder *e) {
    if (e->flushing) pthread_join(e->flusher, NULL); /* (the flush never takes the GIL) */
    drop_deferred(e);
    map_free(&e->tokens); map_free(&e->terms); map_free(&e->stop); map_free(&e->words); short_free(&e->short_tokens);
    free(e->cache);
    for (int i = 0; i < MAX_THREADS; i++) free(e->part_cache[i]);
    free_part_marks(e);
    free(e->cw_first.a); free(e->cw_count.a); free(e->cw_terms.a);
    Py_XDECREF(e->analyze_words);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

/* UTF-8 of a str; surrogates pass through (as "surrogatepass" encodes them). An ASCII str is read
 * in place; any other is encoded into a new bytes object, *keep, which the caller releases when done
 * (PyUnicode_AsUTF8AndSize would cache a UTF-8 copy inside every non-ASCII str of the corpus). */

/* Term id of a term string: found, added (unless frozen), or -1. -2: out of memory. */
int32_t term_id(Encoder *e, const char *s, Py_ssize_t n) { return term_id_hashed(e, s, n, hash_bytes(s, n)); }

/* term_id with the term's hash_bytes h known. */
int32_t term_id_hashed(Encoder *e, const char *s, Py_ssize_t n, uint64_t h) {
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
    if (!e->cache || map_init(&e->tokens) || map_init(&e->terms) || map_init(&e->stop) || map_init(&e->words) ||
        short_reserve(&e->short_tokens, 0)) {
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
int token_term(const Encoder *e, const char *tok, int n, uint64_t h, char *buf) {
    if (map_find(&e->stop, tok, n, h)) return -1;
    memcpy(buf, tok, (size_t)n);
    return e->stem ? porter_stem(buf, n) : n;
}

/* The term id of one lowercased token (memoized): -1 when it has none. -2: out of memory. */
int32_t token_value(Encoder *e, const char *tok, int n) {
    if (n <= 16) {
        uint64_t k0, k1;
        short_key(tok, n, &k0, &k1);
        ShortSlot *found = short_find(&e->short_tokens, k0, k1, n);
        if (found) return found->val;
    }
    uint64_t h = hash_bytes(tok, n);
    if (n > 16) {
        Slot *slot = map_find(&e->tokens, tok, n, h);
        if (slot) return slot->val;
    }
    char buf[MAX_TOKEN + 1];
    int m = token_term(e, tok, n, h, buf);
    int32_t val = m < 0 ? -1 : term_id(e, buf, m);
    if (val == -2) return -2;
    if (add_token(e, tok, n, h, val)) return -2;
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

static inline int32_t sink_lookup(Sink *k, const char *tok, int n) {
    return k->part ? part_lookup(k->part, tok, n) : token_value(k->e, tok, n);
}

/* The value of one lowercased token through the sink's direct-mapped cache (tokens <= 16 bytes,
 * zero-padded in words[0..1]); misses go to sink_lookup. Values: a term id, -1 (no term),
 * PENDING(p), or -2 (out of memory). */
static inline CacheEntry *cache_entry(const Sink *k, const uint64_t *words, int n) {
    uint64_t h = (words[0] * 0x9E3779B97F4A7C15ULL) ^ (words[1] * 0xC2B2AE3D27D4EB4FULL) ^ (uint64_t)n;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    return k->cache + (h >> k->cache_shift);
}

/* cached_value with the token's entry c known */
static inline int32_t cached_value_at(Sink *k, CacheEntry *c, const uint64_t *words, int n) {
    if ((c->len == n || c->len == (n | k->gen8)) && c->k0 == words[0] && c->k1 == words[1]) return c->val;
    int32_t v = sink_lookup(k, (const char *)words, n);
    if (v != -2) {
        c->k0 = words[0];
        c->k1 = words[1];
        c->len = v <= PENDING(0) ? (n | k->gen8) : n; /* a PENDING value: this call's only */
        c->val = v;
    }
    return v;
}

static inline int32_t cached_value(Sink *k, const uint64_t *words, int n) {
    return cached_value_at(k, cache_entry(k, words, n), words, n);
}

static inline int append_value(Sink *k, int32_t v) {
    if (v == -2) return -1;
    if (v == -1) return 0;
    return push32(k->out, v);
}

/* Token batching. The common tokens (<= 16 bytes) are not looked up at once: each is queued with
 * its cache entry prefetched, and the queue is resolved in order (drain_tokens) when full, before
 * anything else is appended (a long token, a non-ASCII word) and at the end of each document. The
 * lookups, the cache's updates and the appended values are those of token-by-token encoding, in
 * the same order; the entries' memory latency overlaps instead of adding up. */
int drain_tokens(Sink *k) {
    int nq = k->nq;
    k->nq = 0;
    const ShortMap *tokens = &k->e->short_tokens;
    for (int i = 0; i < nq; i++) { /* tokens missing from the cache: prefetch their slot of the encoder's table */
        const Queued *q = &k->q[i];
        const CacheEntry *c = q->c;
        if (!((c->len == q->n || c->len == (q->n | k->gen8)) && c->k0 == q->w[0] && c->k1 == q->w[1]))
            __builtin_prefetch(short_slot(tokens, q->w[0], q->w[1], q->n));
    }
    for (int i = 0; i < nq; i++) {
        Queued *q = &k->q[i];
        if (append_value(k, cached_value_at(k, q->c, q->w, q->n))) return -1;
    }
    return 0;
}

static inline int enqueue_token(Sink *k, const uint64_t *words, int n) {
    CacheEntry *c = cache_entry(k, words, n);
    __builtin_prefetch(c);
    __builtin_prefetch((const char *)c + sizeof(CacheEntry) - 1); /* (an entry may straddle two lines) */
    Queued *q = &k->q[k->nq++];
    q->w[0] = words[0];
    q->w[1] = words[1];
    q->n = n;
    q->c = c;
    return k->nq == TOKEN_BATCH ? drain_tokens(k) : 0;
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
        return enqueue_token(k, words, n);
    }
    if (k->nq && drain_tokens(k)) return -1; /* (the queued tokens come first) */
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
int tokenize_ascii(Sink *k, const unsigned char *w, Py_ssize_t n, const unsigned char *end) {
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
int define_words(Encoder *e, PyObject *words, Py_ssize_t first, PyObject *result) {
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
int analyze_and_define(Encoder *e, PyObject *words, Py_ssize_t first) {
    PyObject *result = PyObject_CallOneArg(e->analyze_words, words);
    if (!result) return -1;
    int failed = define_words(e, words, first, result);
    Py_DECREF(result);
    return failed;
}

static PyObject *Encoder_encode_locked(Encoder *e, PyObject *texts_arg, PyObject *titles_arg, int n_threads,
                                       Py_ssize_t min_bytes, int postings, Builder *into, int columns);

/* encode(texts, n_threads=1, parallel_min_bytes, postings=False, titles=None, into=None, columns=False): see the method table */
static PyObject *Encoder_encode(Encoder *e, PyObject *args, PyObject *kw) {
    static char *names[] = {"texts", "n_threads", "parallel_min_bytes", "postings", "titles", "into", "columns", NULL};
    PyObject *texts_arg, *titles_arg = Py_None, *into = Py_None;
    int n_threads = 1, postings = 0, columns = 0;
    Py_ssize_t min_bytes = PARALLEL_MIN_BYTES;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|inpOOp", names, &texts_arg, &n_threads, &min_bytes, &postings, &titles_arg,
                                     &into, &columns))
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
    if (e->busy) { /* the analyze_words callback may let another thread in */
        PyErr_SetString(PyExc_RuntimeError, "Encoder.encode is already running (one call at a time)");
        return NULL;
    }
    settle(e);
    if (e->flush_failed) { /* the last call's flush ran out of memory */
        e->flush_failed = 0;
        return PyErr_NoMemory();
    }
    if (e->broken) {
        PyErr_SetString(PyExc_RuntimeError, "this Encoder failed earlier; make a new one");
        return NULL;
    }
    if (e->frozen) drop_deferred(e);
    else if (flush_deferred(e)) { /* (a memo no thread could be started for) */
        e->broken = 1;
        return PyErr_NoMemory();
    }
    e->busy = 1;
    PyObject *ret = Encoder_encode_locked(e, texts_arg, titles_arg == Py_None ? NULL : titles_arg, n_threads, min_bytes,
                                          postings, into == Py_None ? NULL : (Builder *)into, columns);
    e->busy = 0;
    return ret;
}

/* The number of the non-ASCII word w[0..n) in the encoder's word table; a new word is added,
 * waiting for its terms (cw_count -1), and listed in new_words for the analyzer. -1: error. */
int32_t word_number(Encoder *e, const unsigned char *w, Py_ssize_t n, PyObject *new_words) {
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
                      : (drain_tokens(k) || /* (the queued tokens come first) */
                         (k->part ? complex_word_part(k->part, piece, len) : complex_word_seq(k, piece, len)))) return -1;
        }
        i = e;
    }
    return 0;
}


static void texts_free(Texts *x) {
    free(x->ptr); free(x->len); free(x->ascii);
    Py_XDECREF(x->keep);
    for (int i = 0; i < x->n_views; i++) PyBuffer_Release(&x->views[i]);
    free(x->views);
    x->views = NULL;
    x->n_views = x->cap_views = 0;
}

/* One piece of a column of strings as Arrow lays one out, (offsets, data): offsets int64 (n + 1, into
 * data, non-decreasing), data the UTF-8 bytes. Its buffers are held in x->views. */
typedef struct {
    const int64_t *off;
    const unsigned char *data;
    Py_ssize_t n;
} Piece;

static int piece_open(Texts *x, PyObject *pair, Piece *p) {
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
        PyErr_SetString(PyExc_TypeError, "a column is a tuple (offsets, data), or a list of them");
        return -1;
    }
    if (x->n_views + 2 > x->cap_views) {
        int cap = x->cap_views ? 2 * x->cap_views : 8;
        Py_buffer *grown = realloc(x->views, (size_t)cap * sizeof(Py_buffer));
        if (!grown) {
            PyErr_NoMemory();
            return -1;
        }
        x->views = grown;
        x->cap_views = cap;
    }
    Py_buffer *ov = &x->views[x->n_views], *dv = &x->views[x->n_views + 1];
    if (get_buffer(PyTuple_GET_ITEM(pair, 0), ov, 8, "column offsets")) return -1;
    x->n_views++;
    if (PyObject_GetBuffer(PyTuple_GET_ITEM(pair, 1), dv, PyBUF_SIMPLE)) return -1;
    x->n_views++;
    p->off = ov->buf;
    p->data = dv->buf;
    p->n = ov->len / 8 - 1;
    if (p->n < 0) {
        PyErr_SetString(PyExc_ValueError, "column offsets: at least one offset is needed");
        return -1;
    }
    for (Py_ssize_t i = 0; i < p->n; i++)
        if (p->off[i] < 0 || p->off[i] > p->off[i + 1]) {
            PyErr_SetString(PyExc_ValueError, "column offsets must be >= 0 and non-decreasing");
            return -1;
        }
    if (p->off[p->n] > dv->len) {
        PyErr_SetString(PyExc_ValueError, "column offsets point past the end of the data");
        return -1;
    }
    return 0;
}

/* A column: one piece (offsets, data), or a list of pieces read one after the other (the chunks of a
 * chunked Arrow array, read in place instead of joined). *pieces: malloc'ed, *n_pieces of them;
 * *n: the strings in all. */
static int column_open(Texts *x, PyObject *column, Piece **pieces, Py_ssize_t *n_pieces, Py_ssize_t *n) {
    int listed = PyList_Check(column);
    Py_ssize_t m = listed ? PyList_GET_SIZE(column) : 1;
    *pieces = malloc((size_t)(m ? m : 1) * sizeof(Piece));
    if (!*pieces) {
        PyErr_NoMemory();
        return -1;
    }
    *n_pieces = m;
    *n = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        if (piece_open(x, listed ? PyList_GET_ITEM(column, i) : column, &(*pieces)[i])) return -1;
        *n += (*pieces)[i].n;
    }
    return 0;
}

/* texts, titles (or NULL): columns (see column_open), read in place; the same segments as the
 * strings of texts_load would give. */
static int texts_load_columns(Texts *x, PyObject *texts, PyObject *titles) {
    memset(x, 0, sizeof(*x));
    Piece *pieces[2] = {NULL, NULL};
    Py_ssize_t n_pieces[2] = {0, 0}, n[2] = {0, 0};
    int ok = 0;
    if (column_open(x, texts, &pieces[1], &n_pieces[1], &n[1])) goto done;
    if (titles && column_open(x, titles, &pieces[0], &n_pieces[0], &n[0])) goto done;
    if (titles && n[0] != n[1]) {
        PyErr_SetString(PyExc_ValueError, "titles and texts must have the same length");
        goto done;
    }
    x->n = n[1];
    size_t m = (size_t)(x->n ? 2 * x->n : 1);
    x->ptr = malloc(m * sizeof(*x->ptr));
    x->len = malloc(m * sizeof(*x->len));
    x->ascii = malloc(m);
    if (!x->ptr || !x->len || !x->ascii) {
        PyErr_NoMemory();
        goto done;
    }
    for (int c = 0; c < 2; c++) { /* segment 2t + c of text t: its title (c = 0), its text (c = 1) */
        if (!pieces[c]) { /* no titles */
            for (Py_ssize_t t = 0; t < x->n; t++) {
                x->ptr[2 * t] = (const unsigned char *)"";
                x->len[2 * t] = 0;
                x->ascii[2 * t] = 1;
            }
            continue;
        }
        Py_ssize_t t = 0;
        for (Py_ssize_t p = 0; p < n_pieces[c]; p++) {
            const Piece *q = &pieces[c][p];
            for (Py_ssize_t j = 0; j < q->n; j++, t++) {
                x->ptr[2 * t + c] = q->data + q->off[j];
                x->len[2 * t + c] = q->off[j + 1] - q->off[j];
                x->ascii[2 * t + c] = 0; /* (not looked for here, on the calling thread: scan_text and find_new_words do, on theirs) */
                x->total += x->len[2 * t + c];
            }
        }
    }
    ok = 1;
done:
    free(pieces[0]);
    free(pieces[1]);
    return ok ? 0 : -1;
}

Py_ssize_t text_bytes(const Texts *x, Py_ssize_t t) { return x->len[2 * t] + x->len[2 * t + 1]; }

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
int scan_doc(Sink *k, const Texts *x, Py_ssize_t t) {
    for (Py_ssize_t i = 2 * t; i < 2 * t + 2; i++)
        if (x->len[i] && scan_text(k, x->ptr[i], x->len[i], x->ascii[i])) return -1;
    return drain_tokens(k); /* every token of the document appended */
}

/* Replace each placeholder -(cw + 1) of out by the terms of word cw; counts[t] entries per text. */
int expand_placeholders(Encoder *e, VecI32 *out, int64_t *counts, Py_ssize_t n_texts) {
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

static PyObject *Encoder_encode_locked(Encoder *e, PyObject *texts_arg, PyObject *titles_arg, int n_threads,
                                       Py_ssize_t min_bytes, int postings, Builder *into, int columns) {
    if (into) postings = 1;
    /* tuples of our own: the strings stay alive while other threads run (their UTF-8 is read without
     * the GIL); columns' buffers are held by the Texts */
    PyObject *texts = columns ? (Py_INCREF(texts_arg), texts_arg) : PySequence_Tuple(texts_arg);
    if (!texts) return NULL;
    PyObject *titles = !titles_arg ? NULL : columns ? (Py_INCREF(titles_arg), titles_arg) : PySequence_Tuple(titles_arg);
    if (titles_arg && !titles) { Py_DECREF(texts); return NULL; }
    Texts x;
    int loaded = (columns ? texts_load_columns(&x, texts, titles) : texts_load(&x, texts, titles)) == 0;
    int64_t *counts = malloc((size_t)(x.n ? x.n : 1) * sizeof(int64_t));
    int64_t *pcounts = postings ? malloc((size_t)(x.n ? x.n : 1) * sizeof(int64_t)) : NULL;
    VecI32 out = {0};
    Postings post = {0};
    PyObject *new_words = PyList_New(0), *ret = NULL, *made[2] = {NULL, NULL}; /* made: by encode_parallel */
    Py_ssize_t first_new = e->cw_count.n;
    Sink k = {e, NULL, &out, e->cache, new_words, 0, 64 - CACHE_BITS, 0};
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

/* Whether terms may be added now (else an exception is set). */
static int terms_addable(Encoder *e) {
    if (e->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Encoder.encode is running");
        return 0;
    }
    settle(e);
    if (!e->terms.slots) {
        PyErr_SetString(PyExc_RuntimeError, "Encoder.__init__ was not called");
        return 0;
    }
    if (e->frozen) { /* frozen encoders remember unknown tokens as having no term */
        PyErr_SetString(PyExc_RuntimeError, "add_terms on a frozen Encoder; make a new one");
        return 0;
    }
    return 1;
}

/* ADD_AHEAD terms at a time: their slots are prefetched first, so that the table's cache misses
 * (a cached index's vocabulary: ~300k terms, a 16 MB table at 1M documents) overlap. */
enum { ADD_AHEAD = 16 };

/* Intern the m (<= ADD_AHEAD) terms s[j][0..len[j]) as the next ids; term i0 + j is the j-th. 0, or
 * -1 with an exception set (a repeated term, out of memory). */
static int add_batch(Encoder *e, const char **s, const Py_ssize_t *len, Py_ssize_t m, Py_ssize_t i0) {
    uint64_t h[ADD_AHEAD];
    for (Py_ssize_t j = 0; j < m; j++) {
        h[j] = hash_bytes(s[j], len[j]);
        __builtin_prefetch(e->terms.slots + (h[j] & e->terms.mask));
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        Slot *found = map_find(&e->terms, s[j], len[j], h[j]);
        if (found) {
            PyErr_Format(PyExc_ValueError, "term %zd is a repeat of term %d", i0 + j, found->val);
            return -1;
        }
        if (map_add(&e->terms, s[j], len[j], h[j], (int32_t)e->terms.n) < 0) {
            PyErr_NoMemory();
            return -1;
        }
    }
    return 0;
}

/* add_terms(terms): intern terms in order (a cached index's vocabulary); ids must come out 0, 1, ... */
static PyObject *Encoder_add_terms(Encoder *e, PyObject *terms_arg) {
    if (!terms_addable(e)) return NULL;
    PyObject *terms = PySequence_Fast(terms_arg, "terms must be a sequence of str");
    if (!terms) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(terms);
    if (map_reserve(&e->terms, n)) { /* one rehash to the final size, not one per doubling */
        Py_DECREF(terms);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i0 = 0; i0 < n; i0 += ADD_AHEAD) {
        Py_ssize_t m = n - i0 < ADD_AHEAD ? n - i0 : ADD_AHEAD, j = 0;
        const char *s[ADD_AHEAD];
        Py_ssize_t len[ADD_AHEAD];
        PyObject *keep[ADD_AHEAD];
        for (; j < m; j++) {
            s[j] = utf8_of(PySequence_Fast_GET_ITEM(terms, i0 + j), &len[j], &keep[j]);
            if (!s[j]) break;
        }
        int failed = j < m || add_batch(e, s, len, m, i0);
        for (Py_ssize_t i = 0; i < j; i++) Py_XDECREF(keep[i]);
        if (failed) {
            Py_DECREF(terms);
            return NULL;
        }
    }
    Py_DECREF(terms);
    Py_RETURN_NONE;
}

/* add_terms_blob(data, n): add_terms of the n terms that data holds as UTF-8 joined by "\n" (a cached
 * index's terms.txt, as bytes: no str object per term); n == 0 takes only an empty data. */
static PyObject *Encoder_add_terms_blob(Encoder *e, PyObject *args) {
    Py_buffer b;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "y*n", &b, &n)) return NULL;
    PyObject *result = NULL;
    const char *data = b.buf, *end = data + b.len;
    if (!terms_addable(e)) goto done;
    Py_ssize_t newlines = 0;
    for (const char *p = data; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) newlines++;
    if (n == 0 ? b.len != 0 : newlines + 1 != n) { /* (n terms: n - 1 newlines; one empty term is "") */
        PyErr_Format(PyExc_ValueError, "add_terms_blob: the data holds %zd terms, not %zd",
                     b.len ? newlines + 1 : (Py_ssize_t)0, n);
        goto done;
    }
    if (map_reserve(&e->terms, n)) {
        PyErr_NoMemory();
        goto done;
    }
    const char *p = data;
    for (Py_ssize_t i0 = 0; i0 < n; i0 += ADD_AHEAD) {
        Py_ssize_t m = n - i0 < ADD_AHEAD ? n - i0 : ADD_AHEAD;
        const char *s[ADD_AHEAD];
        Py_ssize_t len[ADD_AHEAD];
        for (Py_ssize_t j = 0; j < m; j++) {
            const char *stop = memchr(p, '\n', (size_t)(end - p));
            if (!stop) stop = end;
            s[j] = p;
            len[j] = stop - p;
            p = stop + 1;
        }
        if (add_batch(e, s, len, m, i0)) goto done;
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&b);
    return result;
}

static PyObject *Encoder_freeze(Encoder *e, PyObject *unused) {
    if (e->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Encoder.encode is running");
        return NULL;
    }
    settle(e);
    e->frozen = 1;
    drop_deferred(e);
    free_part_marks(e);
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
     " tokenized on n_threads threads, with the same result; columns=True: texts and titles are each a column"
     " (offsets: int64 buffer of n + 1 offsets into data, data: a buffer of UTF-8), read in place"},
    {"add_terms", (PyCFunction)Encoder_add_terms, METH_O, "add_terms(terms): intern terms as ids n_terms, ..."},
    {"add_terms_blob", (PyCFunction)Encoder_add_terms_blob, METH_VARARGS,
     "add_terms_blob(data, n): add_terms of the n terms data holds, UTF-8 joined by newlines"},
    {"freeze", (PyCFunction)Encoder_freeze, METH_NOARGS, "freeze(): no new terms from now on (unknown ones are dropped)"},
    {"terms", (PyCFunction)Encoder_terms, METH_VARARGS, "terms(start=0) -> the term strings from id start on"},
    {NULL}};

static PyGetSetDef Encoder_getset[] = {
    {"n_terms", (getter)Encoder_n_terms, NULL, "number of terms", NULL},
    {"frozen", (getter)Encoder_frozen, NULL, "whether new terms are refused", NULL},
    {NULL}};

PyTypeObject EncoderType = {
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

