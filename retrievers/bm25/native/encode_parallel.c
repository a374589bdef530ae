/* Large encode calls on threads, with the result of one thread (see below). */
#include "encoder.h"

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
 * The parts' tables of new tokens, once numbered, are the encoder's deferred memo, added to its
 * token tables on a thread of its own meanwhile (start_flush). */
struct Part {
    Encoder *e;
    const Texts *x;
    Py_ssize_t t0, t1;
    VecI32 out;           /* phase 1: term ids, PENDING(p) and COMPLEX */
    int64_t *counts;
    CacheEntry *cache;    /* the encoder's part_cache[index] */
    int32_t gen8;         /* this call's generation << 8 */
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
    int lent;             /* resolved (and pend) handed to the encoder's deferred memo */
    const int32_t **src;  /* phase 2: per pending token, where an earlier part resolved it, or NULL */
    VecI32 final;         /* phase 3: the final term ids */
    Postings post;        /* phase 3, when postings are asked for: the part's postings ... */
    int64_t *pcounts;     /* ... and its texts' numbers of postings (NULL: ids only) */
    uint64_t *marks;      /* ... the encoder's part_marks[index], and the number its text t0 has there */
    int64_t base;
    int failed;           /* 1: out of memory; 2: a non-ASCII word missing from the word table */
};

enum { NUMBER_AHEAD = 16 }; /* phase 2's prefetch distance */

int32_t part_lookup(Part *part, const char *tok, int n) {
    Encoder *e = part->e;
    if (n <= 16) { /* (short_tokens holds every token of tokens this short) */
        uint64_t k0, k1;
        short_key(tok, n, &k0, &k1);
        ShortSlot *found = short_find(&e->short_tokens, k0, k1, n);
        if (found) return found->val;
    }
    uint64_t h = hash_bytes(tok, n);
    Slot *slot = n > 16 ? map_find(&e->tokens, tok, n, h) : NULL;
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

int complex_word_part(Part *part, const unsigned char *w, Py_ssize_t n) {
    if (push64(&part->cw_ptr, (int64_t)(intptr_t)w) || push64(&part->cw_len, n)) return -1;
    return push32(&part->out, COMPLEX);
}

static void *part_scan(void *arg) { /* phase 1 */
    Part *part = arg;
    /* the part's own tables, made here (on its thread): room for the new tokens of text this size,
     * about one in 128 bytes (SciFact: 1 in 150), and for its tokens, about one in 6 bytes */
    Py_ssize_t bytes = 0;
    for (Py_ssize_t t = part->t0; t < part->t1; t++) bytes += text_bytes(part->x, t);
    if (!part->cache) part->cache = part->e->part_cache[part->index] =
        table_calloc(((size_t)1 << PART_CACHE_BITS) * sizeof(CacheEntry));
    if (!part->cache || map_init(&part->pend) || map_reserve(&part->pend, bytes / 128) ||
        grow((void **)&part->out.a, &part->out.cap, bytes / 6 + 1, sizeof(int32_t))) {
        part->failed = 1;
        return NULL;
    }
    Sink k = {part->e, part, &part->out, part->cache, NULL, 0, 64 - PART_CACHE_BITS, part->gen8};
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
    Py_ssize_t pos = 0, c = 0;
    uint64_t *last = part->marks;           /* postings: text_postings' marks (encode_parallel sized them) */
    Postings *post = &part->post;
    if (part->pcounts) {                     /* postings: final ids one text at a time, in part->final */
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
            part->pcounts[t] = text_postings(part->final.a, part->final.n, part->base + t, last, post);
        }
    }
    goto out;
oom:
    part->failed = 1;
out:
    return NULL;
}

void free_part_marks(Encoder *e) {
    for (int i = 0; i < MAX_THREADS; i++) {
        free(e->part_marks[i]);
        e->part_marks[i] = NULL;
        e->part_marks_n[i] = 0;
    }
    e->mark_base = 0;
}

/* Part i's marks, room for n_terms at least (the new ones 0: no text's). NULL: out of memory. They grow by
 * half at least (the vocabulary grows a little at nearly every call: grown to the exact size, the marks of
 * the 1M synthetic corpus's 299K terms were copied into new memory at each of its 50 calls, 18K page faults). */
static uint64_t *part_marks(Encoder *e, int i, Py_ssize_t n_terms) {
    if (n_terms < 1) n_terms = 1;
    if (e->part_marks_n[i] < n_terms) {
        Py_ssize_t cap = e->part_marks_n[i] + e->part_marks_n[i] / 2;
        if (cap < n_terms) cap = n_terms;
        uint64_t *grown = realloc(e->part_marks[i], (size_t)cap * sizeof(uint64_t));
        if (!grown) return NULL;
        memset(grown + e->part_marks_n[i], 0, (size_t)(cap - e->part_marks_n[i]) * sizeof(uint64_t));
        e->part_marks[i] = grown;
        e->part_marks_n[i] = cap;
    }
    return e->part_marks[i];
}

static void part_free(Part *part) {
    free(part->out.a); map_free(&part->pend); /* (part->cache is the encoder's) */ free(part->stem_off.a); free(part->stem_len.a);
    free(part->stems); free(part->cw_ptr.a); free(part->cw_len.a); free((void *)part->src);
    if (!part->lent) free(part->resolved);
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
int encode_parallel(Encoder *e, Texts *x, int n_threads, int64_t *counts, PyObject *new_words,
                           int64_t *pcounts, PyObject **made, Builder *into) {
    int post = pcounts != NULL;
    Part *parts = calloc((size_t)n_threads, sizeof(Part));
    Py_ssize_t first_new = e->cw_count.n;
    PyObject *analysed = NULL;
    int ok = 0;
    if (!parts) { PyErr_NoMemory(); return -1; }
    if (++e->gen >= (1u << 23)) { /* generations fit in len's bits 8..30: start over with empty caches */
        for (int i = 0; i < MAX_THREADS; i++)
            if (e->part_cache[i]) memset(e->part_cache[i], 0, ((size_t)1 << PART_CACHE_BITS) * sizeof(CacheEntry));
        e->gen = 1;
    }
    Py_ssize_t t = 0, acc = 0;
    for (int i = 0; i < n_threads; i++) { /* consecutive texts, about total / n_threads bytes each */
        Part *part = parts + i;
        part->e = e;
        part->x = x;
        part->counts = counts;
        part->pcounts = pcounts;
        part->earlier = parts;
        part->index = i;
        part->cache = e->part_cache[i];
        part->gen8 = (int32_t)(e->gen << 8);
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
            /* NUMBER_AHEAD tokens at a time, the term table's slots of their stems prefetched first (the table
             * is reserved for them all: no rehash moves a slot meanwhile), so that its cache misses overlap */
            for (Py_ssize_t q0 = 0; q0 < part->pend.n && !failed; q0 += NUMBER_AHEAD) {
                Py_ssize_t m = part->pend.n - q0 < NUMBER_AHEAD ? part->pend.n - q0 : NUMBER_AHEAD;
                uint64_t h[NUMBER_AHEAD];
                for (Py_ssize_t j = 0; j < m; j++) {
                    Py_ssize_t q = q0 + j;
                    if ((i > 0 && part->src[q]) || part->stem_off.a[q] < 0) continue;
                    h[j] = hash_bytes(part->stems + part->stem_off.a[q], part->stem_len.a[q]);
                    __builtin_prefetch(e->terms.slots + (h[j] & e->terms.mask));
                }
                for (Py_ssize_t j = 0; j < m && !failed; j++) {
                    Py_ssize_t q = q0 + j;
                    int32_t v;
                    if (i > 0 && part->src[q]) v = *part->src[q];
                    else if (part->stem_off.a[q] < 0) v = -1;
                    else v = term_id_hashed(e, part->stems + part->stem_off.a[q], part->stem_len.a[q], h[j]);
                    failed = v == -2;
                    part->resolved[q] = v;
                }
            }
        }
        if (!joined) threads_join(&matching); /* (a failure in part 0, or a single part) */
        Py_END_ALLOW_THREADS
        if (failed) { PyErr_NoMemory(); goto done; }
    }
    if (!e->frozen) { /* the parts' new tokens, numbered, are the memo of the next call: added to tokens on a */
        for (int i = 0; i < n_threads && e->n_deferred < MAX_THREADS; i++) { /* thread (phase 3 reads no */
            Deferred *d = &e->deferred[e->n_deferred++];                        /* token table) */
            d->pend = parts[i].pend;
            d->resolved = parts[i].resolved; /* (still read by phase 3) */
            memset(&parts[i].pend, 0, sizeof(StrMap));
            parts[i].lent = 1;
        }
        start_flush(e);
    }
    if (analysed && define_words(e, new_words, first_new, analysed)) goto done;
    if (post) { /* the marks, now that the terms are numbered (texts numbered from mark_base) */
        if (x->n >= (Py_ssize_t)UINT32_MAX - 1) { PyErr_NoMemory(); goto done; }
        if (e->mark_base + x->n >= (int64_t)UINT32_MAX - 1) { /* past text_postings' limit (2^32 - 2): */
            for (int i = 0; i < MAX_THREADS; i++) /* every mark cleared, the numbering started again */
                if (e->part_marks[i]) memset(e->part_marks[i], 0, (size_t)e->part_marks_n[i] * sizeof(uint64_t));
            e->mark_base = 0;
        }
        for (int i = 0; i < n_threads; i++) {
            parts[i].marks = part_marks(e, i, e->terms.n);
            if (!parts[i].marks) { PyErr_NoMemory(); goto done; }
            parts[i].base = e->mark_base;
        }
        e->mark_base += x->n; /* (whatever happens next: a number is never used twice) */
    }
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
done:
    Py_XDECREF(analysed);
    for (int i = 0; i < n_threads; i++) part_free(parts + i);
    free(parts);
    return ok ? 0 : -1;
}

