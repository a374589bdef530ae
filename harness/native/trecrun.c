/* harness._trecrun: a TREC run file read in one pass into the columns of a Run (read_run), and a
 * run's lines formatted for writing (format_lines, at the end of this file).
 *
 * read_run(buffer, threads) takes the file's bytes (any object with the buffer protocol: bytes,
 * mmap) and returns (query_ids, offsets, doc_codes, scores, vocab, width), or None when the file is
 * not one this reader takes exactly; the caller then reads it line by line (harness/formats/trec.py),
 * which accepts it or names the bad line. So this reader never reports an error itself: it decides
 * the common case, fast, and leaves every doubt to the reference grammar. read_run(buffer, threads, 1)
 * (locate) returns, where it gives up on a line or a repeated pair, (at, first) instead of None: `at`
 * a byte offset inside the first line it refused (first = -1), or for a document listed twice for a
 * query, the offsets of the repeat that comes first in the file and of its earlier occurrence (the
 * pair the line reader names); the caller then checks that one line instead of reading the whole
 * file line by line (a bad line at line 9,999,999 of a 10M-line run took 87 s, now about a read).
 *
 * Grammar (that of trec.read_run_lines): lines end with LF (a CR right before it, or at the end of
 * the file, is dropped); columns are separated by runs of ASCII whitespace (space, tab, VT, FF);
 * blank lines and lines whose first column starts with '#' are skipped; at least 6 columns
 * (qid Q0 docid rank score tag), extra ones ignored; query and document ids must be UTF-8; the
 * score must match [+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf|infinity) (case-insensitive) and is
 * read as Python's float reads it. Gives up (None) on: a CR inside a line, a NUL byte, fewer than 6
 * columns, ids that are not UTF-8, a score outside that grammar or NaN, a document listed twice for
 * one query, an empty file.
 *
 * Output: queries in first-seen order, each query's entries together in file order (offsets, CSR),
 * every document id interned into `vocab` in string order (code order = id order: the order of
 * Python's str, which is UTF-8 byte order): doc_codes (int64), scores (float64), and vocab as
 * fixed-width UCS4 (numpy's "U<width>" layout, NUL-padded), or, when that would take more than 64 MiB
 * and 4 times the file (one long id makes every entry that wide), as a list of str with width 0.
 *
 * Steps: (1) the file is cut into `threads` parts at line ends; each part's lines are counted, then
 * parsed, in parallel (GIL released), into one set of arrays (a slot per line). (2) With the GIL:
 * parts joined, queries interned in order, scores outside the fast path read by Python's own
 * string-to-double. (3) Entries grouped by query (stable) when a query comes back after another.
 * (4) Document ids interned by an LSD radix sort of 64-bit keys: after the prefix every id shares,
 * each byte is replaced by its rank among the bytes the ids use (0 = past the end of the id), as many
 * characters as fit beside the entry's position packed into one key; ids longer than that (long ids
 * with many distinct bytes) are ordered within their group of equal keys by comparing the rest of
 * their bytes. (5) A document twice for one query -> None. (6) The vocabulary written out (an ASCII
 * id that its key holds whole is read back from the key).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/mman.h>

#define MAX_THREADS 16
#define VOCAB_OBJECTS_AT (64.0 * 1024 * 1024) /* bytes of a fixed-width vocabulary past which (and past */
#define VOCAB_OBJECTS_RATIO 4.0                /* this many times the file) it is a list of str (read_run) */

enum { NORMAL = 0, SPACE = 1, BAD = 2, NEWLINE = 3, CR = 4 };
static unsigned char byte_class[256];

static const double POW10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* ------------------------------------------------------------------ small pieces */
static uint64_t hash_bytes(const unsigned char *s, Py_ssize_t n)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ULL;
    }
    return h ^ (h >> 29);
}

/* The offset of string i of a column whose offsets are 4- or 8-byte items. */
static inline int64_t column_offset(const void *off, int wide, Py_ssize_t i)
{
    return wide ? ((const int64_t *)off)[i] : (int64_t)((const int32_t *)off)[i];
}

/* Whether a column's n + 1 offsets ascend from 0 or more and end within its data_len bytes. */
static int offsets_fit(const void *off, int wide, Py_ssize_t n, Py_ssize_t data_len)
{
    int64_t prev = column_offset(off, wide, 0);
    int bad = prev < 0;
    for (Py_ssize_t i = 1; i <= n; i++) {
        int64_t o = column_offset(off, wide, i);
        bad |= o < prev;
        prev = o;
    }
    return !bad && prev <= data_len;
}

/* The buffer of an Arrow string array's offsets (int32 or int64 items, at least one) into view;
 * -1 with an exception (naming `who`) otherwise. */
static int offsets_view(PyObject *obj, Py_buffer *view, const char *who)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT))
        return -1;
    if ((view->itemsize != 4 && view->itemsize != 8) || view->len < view->itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: offsets must be int32 or int64 items, at least one", who);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static int bit_length(uint64_t v)
{
    int b = 0;
    while (v) {
        b++;
        v >>= 1;
    }
    return b;
}

/* Strict UTF-8, as Python's decoder: no overlong forms, no surrogates, nothing above U+10FFFF.
 * (Also jsonrows.c's check of each string it decodes.) */
int valid_utf8(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        uint64_t word;
        if (i + 8 <= n && (memcpy(&word, s + i, 8), !(word & 0x8080808080808080ULL))) {
            i += 8; /* eight ASCII bytes */
        } else if (c < 0x80) {
            i++;
        } else if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80)
                return 0;
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (i + 2 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80)
                return 0;
            if ((c == 0xE0 && s[i + 1] < 0xA0) || (c == 0xED && s[i + 1] >= 0xA0))
                return 0;
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (i + 3 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80 ||
                (s[i + 3] & 0xC0) != 0x80)
                return 0;
            if ((c == 0xF0 && s[i + 1] < 0x90) || (c == 0xF4 && s[i + 1] >= 0x90))
                return 0;
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/* Valid UTF-8 bytes as UCS4 code points. */
static void to_ucs4(const unsigned char *s, Py_ssize_t n, uint32_t *out)
{
    Py_ssize_t i = 0, k = 0;
    while (i < n) {
        unsigned char c = s[i];
        uint32_t cp;
        if (c < 0x80) {
            cp = c;
            i += 1;
        } else if (c < 0xE0) {
            cp = ((uint32_t)(c & 0x1F) << 6) | (s[i + 1] & 0x3F);
            i += 2;
        } else if (c < 0xF0) {
            cp = ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
            i += 3;
        } else {
            cp = ((uint32_t)(c & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) |
                 ((uint32_t)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
            i += 4;
        }
        out[k++] = cp;
    }
}

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static int equal_nocase(const unsigned char *s, Py_ssize_t n, const char *word)
{
    if (n != (Py_ssize_t)strlen(word))
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        if (c != (unsigned char)word[i])
            return 0;
    }
    return 1;
}

enum { SCORE_BAD = 0, SCORE_OK = 1, SCORE_SLOW = 2 };

/* The score token checked against the grammar; a plain decimal of at most 15 digits is read here as
 * m / 10^k, one correctly rounded division of two exact doubles (Clinger's fast path), which is the
 * value Python's float() gives; anything else in the grammar is SCORE_SLOW (read later, with the
 * GIL, by Python's own string-to-double). NaN is SCORE_BAD (refused by the line reader). */
static int fast_score(const unsigned char *s, Py_ssize_t n, double *out)
{
    Py_ssize_t i = 0;
    int negative = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        negative = s[i] == '-';
        i++;
    }
    if (i < n && !is_digit(s[i]) && s[i] != '.') {
        if (equal_nocase(s + i, n - i, "inf") || equal_nocase(s + i, n - i, "infinity")) {
            *out = negative ? -INFINITY : INFINITY;
            return SCORE_OK;
        }
        return SCORE_BAD;
    }
    uint64_t mantissa = 0;
    int digits = 0, fraction = 0, exponent = 0;
    while (i < n && is_digit(s[i])) {
        if (digits < 19)
            mantissa = mantissa * 10 + (uint64_t)(s[i] - '0');
        digits++;
        i++;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && is_digit(s[i])) {
            if (digits < 19)
                mantissa = mantissa * 10 + (uint64_t)(s[i] - '0');
            digits++;
            fraction++;
            i++;
        }
    }
    if (digits == 0)
        return SCORE_BAD;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || !is_digit(s[i]))
            return SCORE_BAD;
        while (i < n && is_digit(s[i]))
            i++;
        exponent = 1;
    }
    if (i != n)
        return SCORE_BAD;
    if (exponent || digits > 15 || fraction > 22)
        return SCORE_SLOW;
    double value = (double)mantissa / POW10[fraction];
    *out = negative ? -value : value;
    return SCORE_OK;
}

/* A token the grammar accepts, read by Python's string-to-double (as float() reads it); 0 on NaN. */
static int slow_score(const unsigned char *s, Py_ssize_t n, double *out)
{
    char small[64];
    char *text = n < (Py_ssize_t)sizeof(small) ? small : PyMem_Malloc((size_t)n + 1);
    if (text == NULL)
        return 0;
    memcpy(text, s, (size_t)n);
    text[n] = '\0';
    char *end = NULL;
    double value = PyOS_string_to_double(text, &end, NULL);
    int ok = !PyErr_Occurred() && end == text + n && value == value;
    PyErr_Clear();
    if (text != small)
        PyMem_Free(text);
    *out = value;
    return ok;
}

/* ------------------------------------------------------------------ memory */
/* Ask for transparent huge pages over the 2 MB-aligned inside of a large fresh block (a page fault a
 * 2 MB page instead of one per 4 KB: first touches of hundreds of MB cost much less); p returned. */
static void *huge(void *p, size_t size)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t page = (uintptr_t)1 << 21;
    if (p && size >= 4 * page) {
        uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1), to = ((uintptr_t)p + size) & ~(page - 1);
        if (to > from)
            madvise((void *)from, to - from, MADV_HUGEPAGE);
    }
#endif
    return p;
}

/* ------------------------------------------------------------------ threads */
typedef void *(*work_fn)(void *);

/* fn on each of the n argument blocks (arg_size bytes apart), in n - 1 threads and this one. */
static void run_parallel(work_fn fn, void *args, size_t arg_size, int n)
{
    pthread_t threads[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int t = 1; t < n; t++)
        started[t] = pthread_create(&threads[t], NULL, fn, (char *)args + (size_t)t * arg_size) == 0;
    fn(args);
    for (int t = 1; t < n; t++) {
        if (started[t])
            pthread_join(threads[t], NULL);
        else
            fn((char *)args + (size_t)t * arg_size); /* no thread: run it here */
    }
}

/* ------------------------------------------------------------------ parsing, part by part */
typedef struct {
    Py_ssize_t entry; /* the entry it belongs to (its slot) */
    int64_t off;      /* the token in the buffer */
    uint32_t len;
} Mark;

typedef struct {
    Mark *items;
    Py_ssize_t n, cap;
} Marks;

static int marks_push(Marks *m, Py_ssize_t entry, int64_t off, uint32_t len)
{
    if (m->n == m->cap) {
        Py_ssize_t cap = m->cap ? m->cap * 2 : 256;
        Mark *items = PyMem_RawRealloc(m->items, (size_t)cap * sizeof(Mark));
        if (!items)
            return -1;
        m->items = items;
        m->cap = cap;
    }
    m->items[m->n++] = (Mark){entry, off, len};
    return 0;
}

typedef struct {
    int64_t *off;   /* document id: offset in the buffer */
    uint32_t *len;  /* document id: length in bytes */
    double *score;
    Py_ssize_t n;
    /* over all document ids: the bytes they use, the longest (bytes, code points), all ASCII? */
    unsigned char present[256];
    Py_ssize_t longest, longest_cp;
    int ascii;
} Entries;

typedef struct {
    const unsigned char *buf;
    Py_ssize_t begin, end; /* whole lines: bytes [begin, end) */
    Py_ssize_t lines;      /* slots it may fill */
    Py_ssize_t base;       /* its first slot */
    Py_ssize_t count;      /* entries it found */
    Entries *entries;      /* the shared arrays (slots base .. base + lines) */
    Marks runs;            /* where the query id changes: (first entry, query id) */
    Marks slow;            /* scores left to Python's string-to-double */
    unsigned char present[256];
    Py_ssize_t longest, longest_cp;
    int ascii;
    int status;            /* 1 parsed, 0 give up, -1 no memory */
    Py_ssize_t bad;        /* on give up: where the line it refused starts (-1: none) */
} Part;

static void *count_lines(void *arg)
{
    Part *p = arg;
    Py_ssize_t lines = 0, pos = p->begin;
    while (pos < p->end) {
        const unsigned char *nl = memchr(p->buf + pos, '\n', (size_t)(p->end - pos));
        lines++;
        pos = nl ? nl - p->buf + 1 : p->end;
    }
    p->lines = lines;
    return NULL;
}

static void *parse_part(void *arg)
{
    Part *p = arg;
    const unsigned char *buf = p->buf;
    Entries *e = p->entries;
    Py_ssize_t pos = p->begin, slot = p->base;
    int64_t cur_off = -1;
    uint32_t cur_len = 0;
    p->status = 0;
    p->bad = -1;
    p->ascii = 1;
    Py_ssize_t line = pos;
    while (pos < p->end) {
        line = pos;
        /* one line: its first six columns; stops on its LF (a CR right before it, or at the end of the
         * file, ends the line too; any other CR, or a NUL, leaves the file to the line reader) */
        Py_ssize_t start[6], finish[6], i = pos, end = p->end;
        int fields = 0;
        for (;;) {
            while (i < end && byte_class[buf[i]] == SPACE)
                i++;
            if (i >= end)
                break;
            unsigned char kind = byte_class[buf[i]];
            if (kind == NEWLINE)
                break;
            if (kind == CR) {
                if (i + 1 < end && buf[i + 1] != '\n')
                    goto refuse;
                i++;
                break;
            }
            if (kind == BAD)
                goto refuse;
            Py_ssize_t s = i;
            while (i < end && byte_class[buf[i]] == NORMAL)
                i++;
            if (fields < 6) {
                start[fields] = s;
                finish[fields] = i;
            }
            fields++;
        }
        pos = i + 1;
        if (fields == 0 || buf[start[0]] == '#')
            continue;
        if (fields < 6)
            goto refuse;
        Py_ssize_t qlen = finish[0] - start[0], doc_len = finish[2] - start[2];
        if (qlen > (Py_ssize_t)UINT32_MAX || doc_len > (Py_ssize_t)UINT32_MAX)
            goto refuse;
        double score = 0.0;
        int kind = fast_score(buf + start[4], finish[4] - start[4], &score);
        if (kind == SCORE_BAD)
            goto refuse;
        if (kind == SCORE_SLOW && marks_push(&p->slow, slot, start[4], (uint32_t)(finish[4] - start[4])) < 0)
            goto no_memory;
        if (cur_off < 0 || (uint32_t)qlen != cur_len || memcmp(buf + cur_off, buf + start[0], (size_t)qlen) != 0) {
            if (!valid_utf8(buf + start[0], qlen))
                goto refuse;
            if (marks_push(&p->runs, slot, start[0], (uint32_t)qlen) < 0)
                goto no_memory;
            cur_off = start[0];
            cur_len = (uint32_t)qlen;
        }
        const unsigned char *doc = buf + start[2];
        Py_ssize_t code_points = doc_len;
        unsigned char any = 0;
        for (Py_ssize_t k = 0; k < doc_len; k++) {
            p->present[doc[k]] = 1;
            any |= doc[k];
        }
        if (any & 0x80) {
            if (!valid_utf8(doc, doc_len))
                goto refuse;
            p->ascii = 0;
            for (Py_ssize_t k = 0; k < doc_len; k++)
                code_points -= (doc[k] & 0xC0) == 0x80;
        }
        if (doc_len > p->longest)
            p->longest = doc_len;
        if (code_points > p->longest_cp)
            p->longest_cp = code_points;
        e->off[slot] = start[2];
        e->len[slot] = (uint32_t)doc_len;
        e->score[slot] = score;
        slot++;
    }
    p->count = slot - p->base;
    p->status = 1;
    return NULL;
refuse: /* (the line reader names what is wrong with it) */
    p->bad = line;
    return NULL;
no_memory:
    p->status = -1;
    return NULL;
}

/* ------------------------------------------------------------------ queries */
typedef struct {
    int64_t *off;
    uint32_t *len;
    Py_ssize_t n, cap;
    int32_t *slots; /* open addressing: query index + 1, 0 = empty */
    size_t mask;
} Queries;

static int queries_grow(Queries *q, const unsigned char *buf)
{
    size_t size = q->mask ? (q->mask + 1) * 2 : 1024;
    int32_t *slots = PyMem_RawCalloc(size, sizeof(int32_t));
    if (!slots)
        return -1;
    for (Py_ssize_t i = 0; i < q->n; i++) {
        size_t at = hash_bytes(buf + q->off[i], q->len[i]) & (size - 1);
        while (slots[at])
            at = (at + 1) & (size - 1);
        slots[at] = (int32_t)(i + 1);
    }
    PyMem_RawFree(q->slots);
    q->slots = slots;
    q->mask = size - 1;
    return 0;
}

/* The index of the query id buf[off:off+len], added when new (*added = 1); -1 on no memory. */
static Py_ssize_t queries_find(Queries *q, const unsigned char *buf, int64_t off, uint32_t len, int *added)
{
    if ((size_t)(q->n + 1) * 2 > q->mask + 1 && queries_grow(q, buf) < 0)
        return -1;
    size_t at = hash_bytes(buf + off, len) & q->mask;
    while (q->slots[at]) {
        Py_ssize_t i = q->slots[at] - 1;
        if (q->len[i] == len && memcmp(buf + q->off[i], buf + off, len) == 0) {
            *added = 0;
            return i;
        }
        at = (at + 1) & q->mask;
    }
    if (q->n == q->cap) {
        Py_ssize_t cap = q->cap ? q->cap * 2 : 1024;
        int64_t *o = PyMem_RawRealloc(q->off, (size_t)cap * sizeof(int64_t));
        if (o)
            q->off = o;
        uint32_t *l = PyMem_RawRealloc(q->len, (size_t)cap * sizeof(uint32_t));
        if (l)
            q->len = l;
        if (!o || !l)
            return -1;
        q->cap = cap;
    }
    q->off[q->n] = off;
    q->len[q->n] = len;
    q->slots[at] = (int32_t)(q->n + 1);
    *added = 1;
    return q->n++;
}

static void queries_free(Queries *q)
{
    PyMem_RawFree(q->off);
    PyMem_RawFree(q->len);
    PyMem_RawFree(q->slots);
}

/* ------------------------------------------------------------------ grouping by query */
/* Stable counting sort of the entries by query (entry_query[i]); offsets already counted. */
static int regroup(Entries *e, const int32_t *entry_query, Py_ssize_t n_queries, const int64_t *offsets)
{
    Py_ssize_t n = e->n;
    int64_t *off = huge(PyMem_RawMalloc((size_t)n * sizeof(int64_t)), (size_t)n * sizeof(int64_t));
    uint32_t *len = huge(PyMem_RawMalloc((size_t)n * sizeof(uint32_t)), (size_t)n * sizeof(uint32_t));
    double *score = huge(PyMem_RawMalloc((size_t)n * sizeof(double)), (size_t)n * sizeof(double));
    int64_t *next = PyMem_RawMalloc((size_t)n_queries * sizeof(int64_t));
    if (!off || !len || !score || !next) {
        PyMem_RawFree(off);
        PyMem_RawFree(len);
        PyMem_RawFree(score);
        PyMem_RawFree(next);
        return -1;
    }
    memcpy(next, offsets, (size_t)n_queries * sizeof(int64_t));
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t to = next[entry_query[i]]++;
        off[to] = e->off[i];
        len[to] = e->len[i];
        score[to] = e->score[i];
    }
    memcpy(e->score, score, (size_t)n * sizeof(double)); /* (the scores live in the result's buffer) */
    PyMem_RawFree(score);
    PyMem_RawFree(next);
    PyMem_RawFree(e->off);
    PyMem_RawFree(e->len);
    e->off = off;
    e->len = len;
    return 0;
}

/* ------------------------------------------------------------------ interning */
typedef struct {
    uint64_t *keys;  /* sorted: rank-coded bytes, then the entry's position */
    int64_t *first;  /* for each distinct id, the sorted position of its first holder */
    Py_ssize_t distinct, prefix, chars;
    int bits, pos_bits, complete;
    unsigned char byte_of_rank[256];
} Interned;

typedef struct {
    const unsigned char *buf;
    const Entries *e;
    const Interned *t;
    const unsigned char *rank;
    uint64_t *keys;
    Py_ssize_t begin, end;
} KeyRange;

static void *build_keys(void *arg)
{
    KeyRange *r = arg;
    const Interned *t = r->t;
    for (Py_ssize_t i = r->begin; i < r->end; i++) {
        const unsigned char *s = r->buf + r->e->off[i] + t->prefix;
        Py_ssize_t l = (Py_ssize_t)r->e->len[i] - t->prefix, k = 0;
        uint64_t key = 0;
        for (; k < t->chars && k < l; k++)
            key = (key << t->bits) | r->rank[s[k]];
        if (k < t->chars)
            key <<= t->bits * (t->chars - k);
        r->keys[i] = (key << t->pos_bits) | (uint64_t)i;
    }
    return NULL;
}

static struct {
    const unsigned char *buf;
    const int64_t *off;
    const uint32_t *len;
    Py_ssize_t skip; /* bytes already compared through the key */
    uint64_t pos_mask;
} sort_context; /* qsort has no context argument; the GIL is held throughout */

static int compare_rest(const void *a, const void *b)
{
    Py_ssize_t i = (Py_ssize_t)(*(const uint64_t *)a & sort_context.pos_mask);
    Py_ssize_t j = (Py_ssize_t)(*(const uint64_t *)b & sort_context.pos_mask);
    Py_ssize_t skip = sort_context.skip;
    Py_ssize_t li = sort_context.len[i] > skip ? sort_context.len[i] - skip : 0;
    Py_ssize_t lj = sort_context.len[j] > skip ? sort_context.len[j] - skip : 0;
    Py_ssize_t common = li < lj ? li : lj;
    int r = common ? memcmp(sort_context.buf + sort_context.off[i] + skip, sort_context.buf + sort_context.off[j] + skip,
                            (size_t)common)
                   : 0;
    if (r)
        return r;
    if (li != lj)
        return li < lj ? -1 : 1;
    return i < j ? -1 : (i > j ? 1 : 0);
}

typedef struct {
    const uint64_t *from;
    uint64_t *to;
    int64_t *count; /* this range's histogram, then its next place in each bucket */
    size_t buckets;
    int shift;
    Py_ssize_t begin, end;
} RadixRange;

static void *radix_count(void *arg)
{
    RadixRange *r = arg;
    uint64_t mask = r->buckets - 1;
    memset(r->count, 0, r->buckets * sizeof(int64_t));
    for (Py_ssize_t i = r->begin; i < r->end; i++)
        r->count[(r->from[i] >> r->shift) & mask]++;
    return NULL;
}

static void *radix_scatter(void *arg)
{
    RadixRange *r = arg;
    uint64_t mask = r->buckets - 1;
    for (Py_ssize_t i = r->begin; i < r->end; i++)
        r->to[r->count[(r->from[i] >> r->shift) & mask]++] = r->from[i];
    return NULL;
}

typedef struct {
    const unsigned char *buf;
    const int64_t *off;
    const uint32_t *len;
    Interned *t;
    int64_t *codes;
    Py_ssize_t begin, end; /* sorted positions */
    Py_ssize_t n_new;      /* ids that start in this range */
    Py_ssize_t first_code; /* the code of the first of them */
} CodeRange;

/* Whether sorted position r holds another id than r - 1. */
static int new_id(const CodeRange *c, Py_ssize_t r)
{
    const Interned *t = c->t;
    if (r == 0 || (t->keys[r] >> t->pos_bits) != (t->keys[r - 1] >> t->pos_bits))
        return 1;
    if (t->complete)
        return 0;
    uint64_t pos_mask = (1ULL << t->pos_bits) - 1;
    Py_ssize_t i = (Py_ssize_t)(t->keys[r] & pos_mask), j = (Py_ssize_t)(t->keys[r - 1] & pos_mask);
    return c->len[i] != c->len[j] || memcmp(c->buf + c->off[i], c->buf + c->off[j], c->len[i]) != 0;
}

static void *count_new_ids(void *arg)
{
    CodeRange *c = arg;
    Py_ssize_t k = 0;
    for (Py_ssize_t r = c->begin; r < c->end; r++)
        k += new_id(c, r);
    c->n_new = k;
    return NULL;
}

static void *assign_codes(void *arg)
{
    CodeRange *c = arg;
    uint64_t pos_mask = (1ULL << c->t->pos_bits) - 1;
    Py_ssize_t code = c->first_code - 1;
    for (Py_ssize_t r = c->begin; r < c->end; r++) {
        if (new_id(c, r))
            c->t->first[++code] = r;
        c->codes[c->t->keys[r] & pos_mask] = code;
    }
    return NULL;
}

/* codes[i] = the rank of entry i's id among the distinct ids, in string order. 0, or -1 on no memory. */
static int intern(const unsigned char *buf, const Entries *e, int64_t *codes, Interned *t, int threads)
{
    Py_ssize_t n = e->n;
    const int64_t *off = e->off;
    const uint32_t *len = e->len;
    Py_ssize_t prefix = len[0]; /* the prefix every id shares: left out of the keys */
    const unsigned char *id0 = buf + off[0];
    for (Py_ssize_t i = 1; i < n && prefix; i++) {
        const unsigned char *s = buf + off[i];
        Py_ssize_t m = len[i] < prefix ? len[i] : prefix, k = 0;
        while (k < m && s[k] == id0[k])
            k++;
        prefix = k;
    }
    unsigned char rank[256] = {0};
    int used = 0;
    for (int c = 0; c < 256; c++)
        if (e->present[c]) {
            rank[c] = (unsigned char)++used;
            t->byte_of_rank[used] = (unsigned char)c;
        }
    int bits = bit_length((uint64_t)used), pos_bits = bit_length((uint64_t)(n - 1));
    if (bits == 0)
        bits = 1;
    if (pos_bits == 0)
        pos_bits = 1;
    Py_ssize_t chars = (64 - pos_bits) / bits;
    if (chars > e->longest - prefix)
        chars = e->longest - prefix;
    t->prefix = prefix;
    t->chars = chars;
    t->bits = bits;
    t->pos_bits = pos_bits;
    t->complete = e->longest - prefix <= chars;
    int key_bits = (int)chars * bits;

    uint64_t *keys = huge(PyMem_RawMalloc((size_t)n * sizeof(uint64_t)), (size_t)n * sizeof(uint64_t));
    uint64_t *tmp = huge(PyMem_RawMalloc((size_t)n * sizeof(uint64_t)), (size_t)n * sizeof(uint64_t));
    if (!keys || !tmp) {
        PyMem_RawFree(keys);
        PyMem_RawFree(tmp);
        return -1;
    }
    KeyRange ranges[MAX_THREADS];
    for (int r = 0; r < threads; r++)
        ranges[r] = (KeyRange){buf, e, t, rank, keys, n * r / threads, n * (r + 1) / threads};
    Py_BEGIN_ALLOW_THREADS
    run_parallel(build_keys, ranges, sizeof(KeyRange), threads);
    Py_END_ALLOW_THREADS
    /* LSD radix sort on the key bits (positions ride along in the low bits: equal keys stay in
     * entry order), digits of at most 14 bits; each pass split over the threads (histograms of
     * their ranges, then each scatters its range: thread order within a bucket keeps it stable) */
    if (key_bits > 0) {
        int passes = (key_bits + 13) / 14, width = (key_bits + passes - 1) / passes;
        size_t buckets = (size_t)1 << width;
        int64_t *counts = PyMem_RawMalloc((size_t)threads * buckets * sizeof(int64_t));
        if (!counts) {
            PyMem_RawFree(keys);
            PyMem_RawFree(tmp);
            return -1;
        }
        RadixRange parts[MAX_THREADS];
        for (int p = 0; p < passes; p++) {
            for (int r = 0; r < threads; r++)
                parts[r] = (RadixRange){keys, tmp, counts + (size_t)r * buckets, buckets, pos_bits + p * width,
                                        n * r / threads, n * (r + 1) / threads};
            Py_BEGIN_ALLOW_THREADS
            run_parallel(radix_count, parts, sizeof(RadixRange), threads);
            int64_t total = 0;
            for (size_t bucket = 0; bucket < buckets; bucket++)
                for (int r = 0; r < threads; r++) {
                    int64_t c = parts[r].count[bucket];
                    parts[r].count[bucket] = total;
                    total += c;
                }
            run_parallel(radix_scatter, parts, sizeof(RadixRange), threads);
            Py_END_ALLOW_THREADS
            uint64_t *swap = keys;
            keys = tmp;
            tmp = swap;
        }
        PyMem_RawFree(counts);
    }
    t->keys = keys;
    t->first = (int64_t *)tmp; /* (the radix sort's scratch, reused) */
    uint64_t pos_mask = (1ULL << pos_bits) - 1;
    if (!t->complete) { /* groups of equal keys: order by the rest of the bytes */
        sort_context.buf = buf;
        sort_context.off = off;
        sort_context.len = len;
        sort_context.skip = prefix + chars;
        sort_context.pos_mask = pos_mask;
        Py_ssize_t g = 0;
        while (g < n) {
            Py_ssize_t h = g + 1;
            while (h < n && (keys[h] >> pos_bits) == (keys[g] >> pos_bits))
                h++;
            if (h - g > 1)
                qsort(keys + g, (size_t)(h - g), sizeof(uint64_t), compare_rest);
            g = h;
        }
    }
    /* codes in two parallel passes over ranges of the sorted keys: count the new ids of each range,
     * then number them from the range's start */
    CodeRange ranges_c[MAX_THREADS];
    for (int r = 0; r < threads; r++)
        ranges_c[r] = (CodeRange){buf, off, len, t, codes, n * r / threads, n * (r + 1) / threads, 0, 0};
    Py_ssize_t distinct = 0;
    Py_BEGIN_ALLOW_THREADS
    run_parallel(count_new_ids, ranges_c, sizeof(CodeRange), threads);
    for (int r = 0; r < threads; r++) {
        ranges_c[r].first_code = distinct;
        distinct += ranges_c[r].n_new;
    }
    run_parallel(assign_codes, ranges_c, sizeof(CodeRange), threads);
    Py_END_ALLOW_THREADS
    t->distinct = distinct;
    return 0;
}

/* Whether some query lists a document twice (entries grouped by query, each query's in file order): 1, 0,
 * or -1 on no memory. On 1, *later is the repeated entry that comes first in the file (the least `off`,
 * the entries' file offsets, among each query's first repeat) and *earlier its one earlier occurrence:
 * the pair the line reader names. */
static int repeated_pair(const int64_t *codes, const int64_t *offsets, Py_ssize_t n_queries, Py_ssize_t distinct,
                         const int64_t *off, Py_ssize_t *later, Py_ssize_t *earlier)
{
    int32_t *seen = PyMem_RawMalloc((size_t)distinct * sizeof(int32_t));
    if (!seen)
        return -1;
    memset(seen, 0xff, (size_t)distinct * sizeof(int32_t));
    int repeated = 0;
    for (Py_ssize_t q = 0; q < n_queries; q++) {
        for (int64_t i = offsets[q]; i < offsets[q + 1]; i++) {
            if (seen[codes[i]] == (int32_t)q) {
                if (!repeated || off[i] < off[*later]) {
                    int64_t j = offsets[q];
                    while (codes[j] != codes[i])
                        j++;
                    *later = (Py_ssize_t)i;
                    *earlier = (Py_ssize_t)j;
                }
                repeated = 1;
                break;
            }
            seen[codes[i]] = (int32_t)q;
        }
    }
    PyMem_RawFree(seen);
    return repeated;
}

/* Each distinct id as `width` UCS4 code points (NUL-padded). An ASCII id that its key holds whole is
 * read back from the key (the shared prefix, then each rank's byte): no random reads of the file. */
static void fill_vocab(const unsigned char *buf, const Entries *e, int64_t id0, const Interned *t, uint32_t *vocab,
                       Py_ssize_t width)
{
    uint64_t pos_mask = (1ULL << t->pos_bits) - 1, char_mask = (1ULL << t->bits) - 1;
    for (Py_ssize_t c = 0; c < t->distinct; c++) {
        uint64_t key = t->keys[t->first[c]];
        uint32_t *out = vocab + c * width;
        if (t->complete && e->ascii) {
            Py_ssize_t k = 0;
            for (; k < t->prefix; k++)
                out[k] = buf[id0 + k];
            uint64_t chars = key >> t->pos_bits;
            for (Py_ssize_t j = t->chars - 1; j >= 0; j--) {
                uint64_t r = (chars >> (j * t->bits)) & char_mask;
                if (r == 0)
                    break;
                out[k++] = t->byte_of_rank[r];
            }
        } else {
            Py_ssize_t i = (Py_ssize_t)(key & pos_mask);
            to_ucs4(buf + e->off[i], e->len[i], out);
        }
    }
}

/* ------------------------------------------------------------------ the module */
/* Cut the file into parts at line ends, count their lines (in parallel). */
static int cut_parts(const unsigned char *buf, Py_ssize_t size, Part *parts, int threads)
{
    Py_ssize_t at = 0;
    for (int t = 0; t < threads; t++) {
        Py_ssize_t end = t == threads - 1 ? size : size * (t + 1) / threads;
        if (end < at)
            end = at;
        if (end < size) {
            const unsigned char *nl = memchr(buf + end, '\n', (size_t)(size - end));
            end = nl ? nl - buf + 1 : size;
        }
        parts[t].buf = buf;
        parts[t].begin = at;
        parts[t].end = end;
        at = end;
    }
    Py_BEGIN_ALLOW_THREADS
    run_parallel(count_lines, parts, sizeof(Part), threads);
    Py_END_ALLOW_THREADS
    return 0;
}

static PyObject *read_run(PyObject *self, PyObject *args)
{
    Py_buffer view;
    int threads = 1, locate = 0;
    if (!PyArg_ParseTuple(args, "y*|ii", &view, &threads, &locate))
        return NULL;
    if (threads < 1)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    const unsigned char *buf = view.buf;
    Part parts[MAX_THREADS];
    memset(parts, 0, sizeof(parts));
    Entries e = {0};
    Queries q = {0};
    Interned interned = {0};
    PyObject *result = NULL, *qids = NULL, *offsets_obj = NULL, *codes_obj = NULL, *scores_obj = NULL,
             *vocab_obj = NULL;
    int32_t *entry_query = NULL;
    int64_t *offsets = NULL, *run_start = NULL, *run_query = NULL;
    Py_ssize_t refused_at = -1, first_at = -1; /* (locate) the refused line's offset; a repeat's first */

    cut_parts(buf, view.len, parts, threads);
    Py_ssize_t slots = 0;
    for (int t = 0; t < threads; t++) {
        parts[t].base = slots;
        parts[t].entries = &e;
        slots += parts[t].lines;
    }
    if (slots == 0)
        goto give_up;
    e.off = huge(PyMem_RawMalloc((size_t)slots * sizeof(int64_t)), (size_t)slots * sizeof(int64_t));
    e.len = huge(PyMem_RawMalloc((size_t)slots * sizeof(uint32_t)), (size_t)slots * sizeof(uint32_t));
    scores_obj = PyByteArray_FromStringAndSize(NULL, slots * (Py_ssize_t)sizeof(double));
    if (!e.off || !e.len || !scores_obj)
        goto no_memory;
    e.score = huge(PyByteArray_AS_STRING(scores_obj), (size_t)slots * sizeof(double));
    Py_BEGIN_ALLOW_THREADS
    run_parallel(parse_part, parts, sizeof(Part), threads);
    Py_END_ALLOW_THREADS

    /* join the parts: entries moved together, queries interned in order, slow scores read */
    e.ascii = 1;
    for (int t = 0; t < threads; t++) {
        Part *p = &parts[t];
        if (p->status < 0)
            goto no_memory;
        if (p->status == 0) {
            refused_at = p->bad;
            goto give_up;
        }
        Py_ssize_t shift = p->base - e.n;
        if (shift) {
            memmove(e.off + e.n, e.off + p->base, (size_t)p->count * sizeof(int64_t));
            memmove(e.len + e.n, e.len + p->base, (size_t)p->count * sizeof(uint32_t));
            memmove(e.score + e.n, e.score + p->base, (size_t)p->count * sizeof(double));
            for (Py_ssize_t k = 0; k < p->runs.n; k++)
                p->runs.items[k].entry -= shift;
            for (Py_ssize_t k = 0; k < p->slow.n; k++)
                p->slow.items[k].entry -= shift;
        }
        e.n += p->count;
        for (int c = 0; c < 256; c++)
            e.present[c] |= p->present[c];
        if (p->longest > e.longest)
            e.longest = p->longest;
        if (p->longest_cp > e.longest_cp)
            e.longest_cp = p->longest_cp;
        e.ascii &= p->ascii;
        for (Py_ssize_t k = 0; k < p->slow.n; k++) {
            Mark *m = &p->slow.items[k];
            if (!slow_score(buf + m->off, m->len, &e.score[m->entry])) {
                refused_at = m->off;
                goto give_up;
            }
        }
    }
    if (e.n == 0)
        goto give_up;
    Py_ssize_t n = e.n;
    /* queries: the runs of equal query ids, in entry order; grouped unless a query comes back */
    Py_ssize_t n_runs = 0;
    for (int t = 0; t < threads; t++)
        n_runs += parts[t].runs.n;
    run_start = PyMem_RawMalloc((size_t)(n_runs + 1) * sizeof(int64_t));
    run_query = PyMem_RawMalloc((size_t)(n_runs + 1) * sizeof(int64_t));
    if (!run_start || !run_query)
        goto no_memory;
    int grouped = 1;
    Py_ssize_t cur = -1, r = 0;
    for (int t = 0; t < threads; t++) {
        for (Py_ssize_t k = 0; k < parts[t].runs.n; k++, r++) {
            Mark *m = &parts[t].runs.items[k];
            int added;
            Py_ssize_t index = queries_find(&q, buf, m->off, m->len, &added);
            if (index < 0)
                goto no_memory;
            if (!added && index != cur)
                grouped = 0;
            run_start[r] = m->entry;
            run_query[r] = cur = index;
        }
    }
    run_start[n_runs] = n;
    Py_ssize_t n_queries = q.n;
    offsets_obj = PyByteArray_FromStringAndSize(NULL, (n_queries + 1) * (Py_ssize_t)sizeof(int64_t));
    if (!offsets_obj)
        goto done;
    offsets = (int64_t *)PyByteArray_AS_STRING(offsets_obj);
    memset(offsets, 0, (size_t)(n_queries + 1) * sizeof(int64_t));
    for (r = 0; r < n_runs; r++)
        offsets[run_query[r] + 1] += run_start[r + 1] - run_start[r];
    for (Py_ssize_t k = 0; k < n_queries; k++)
        offsets[k + 1] += offsets[k];
    if (!grouped) {
        entry_query = huge(PyMem_RawMalloc((size_t)n * sizeof(int32_t)), (size_t)n * sizeof(int32_t));
        if (!entry_query)
            goto no_memory;
        for (r = 0; r < n_runs; r++)
            for (Py_ssize_t i = run_start[r]; i < run_start[r + 1]; i++)
                entry_query[i] = (int32_t)run_query[r];
        if (regroup(&e, entry_query, n_queries, offsets) < 0)
            goto no_memory;
    }

    codes_obj = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (!codes_obj)
        goto done;
    int64_t *codes = huge(PyByteArray_AS_STRING(codes_obj), (size_t)n * sizeof(int64_t));
    if (intern(buf, &e, codes, &interned, threads) < 0)
        goto no_memory;
    Py_ssize_t later = 0, earlier = 0;
    int repeated = repeated_pair(codes, offsets, n_queries, interned.distinct, e.off, &later, &earlier);
    if (repeated < 0)
        goto no_memory;
    if (repeated) {
        refused_at = e.off[later];
        first_at = e.off[earlier];
        goto give_up;
    }
    int64_t id0 = e.off[0];
    Py_ssize_t width = e.longest_cp > 0 ? e.longest_cp : 1;
    /* Fixed-width UCS4 makes every id as wide as the longest: one long id among millions of short
     * ones (a 1,000-character id in a run of 100k distinct ids: 381 MiB for a 2.5 MB file) would cost
     * distinct x width x 4 bytes. Past VOCAB_OBJECTS_AT bytes and VOCAB_OBJECTS_RATIO times the file,
     * the vocabulary is a list of str instead (width 0), in the same (string) order. */
    double fixed_bytes = (double)interned.distinct * (double)width * 4.0;
    int as_objects = fixed_bytes > VOCAB_OBJECTS_AT && fixed_bytes > VOCAB_OBJECTS_RATIO * (double)view.len;
    if (interned.complete && e.ascii && !as_objects) { /* the vocabulary comes from the keys: the ids' places are done */
        PyMem_RawFree(e.off);
        PyMem_RawFree(e.len);
        e.off = NULL;
        e.len = NULL;
    }
    if (as_objects) {
        vocab_obj = PyList_New(interned.distinct);
        if (!vocab_obj)
            goto done;
        uint64_t pos_mask = (1ULL << interned.pos_bits) - 1;
        for (Py_ssize_t c = 0; c < interned.distinct; c++) {
            Py_ssize_t i = (Py_ssize_t)(interned.keys[interned.first[c]] & pos_mask);
            PyObject *s = PyUnicode_DecodeUTF8((const char *)buf + e.off[i], e.len[i], "strict");
            if (!s)
                goto done;
            PyList_SET_ITEM(vocab_obj, c, s);
        }
        width = 0;
    } else {
        if ((size_t)interned.distinct > (size_t)PY_SSIZE_T_MAX / 4 / (size_t)width)
            goto no_memory;
        vocab_obj = PyByteArray_FromStringAndSize(NULL, interned.distinct * width * 4);
        if (!vocab_obj)
            goto done;
        uint32_t *vocab = huge(PyByteArray_AS_STRING(vocab_obj), (size_t)interned.distinct * (size_t)width * 4);
        memset(vocab, 0, (size_t)interned.distinct * (size_t)width * 4);
        fill_vocab(buf, &e, id0, &interned, vocab, width);
    }
    if (PyByteArray_Resize(scores_obj, n * (Py_ssize_t)sizeof(double)) < 0)
        goto done;
    qids = PyList_New(n_queries);
    if (!qids)
        goto done;
    for (Py_ssize_t k = 0; k < n_queries; k++) {
        PyObject *s = PyUnicode_DecodeUTF8((const char *)buf + q.off[k], q.len[k], "strict");
        if (!s)
            goto done;
        PyList_SET_ITEM(qids, k, s);
    }
    result = Py_BuildValue("(OOOOOn)", qids, offsets_obj, codes_obj, scores_obj, vocab_obj, width);
    goto done;
give_up:
    result = locate && refused_at >= 0 ? Py_BuildValue("(nn)", refused_at, first_at) : Py_NewRef(Py_None);
    goto done;
no_memory:
    PyErr_NoMemory();
done:
    Py_XDECREF(qids);
    Py_XDECREF(offsets_obj);
    Py_XDECREF(codes_obj);
    Py_XDECREF(scores_obj);
    Py_XDECREF(vocab_obj);
    PyMem_RawFree(interned.keys);
    PyMem_RawFree(interned.first);
    PyMem_RawFree(entry_query);
    PyMem_RawFree(run_start);
    PyMem_RawFree(run_query);
    PyMem_RawFree(e.off);
    PyMem_RawFree(e.len);
    for (int t = 0; t < MAX_THREADS; t++) {
        PyMem_RawFree(parts[t].runs.items);
        PyMem_RawFree(parts[t].slow.items);
    }
    queries_free(&q);
    PyBuffer_Release(&view);
    return result;
}

/* ------------------------------------------------------------------ writing */
/* format_lines(query_ids, offsets, doc_codes, scores, vocab, tag, threads=1) -> bytes: the TREC
 * lines "qid Q0 docid rank score tag\n" of a run's entries, query by query in their given order,
 * rank 1-based within the query, score as Python's repr of the float, all text as UTF-8. query_ids
 * is a list of str, vocab a list of str or a tuple (offsets: int32 or int64 items, UTF-8 data) of an Arrow string
 * array (a corpus's ids, read in place; its bytes are written as they are); offsets (int64, len(query_ids) + 1, offsets[0] == 0), doc_codes
 * (int64, indexes into vocab) and scores (float64) are buffers. Each distinct score (by bit
 * pattern) is formatted once, by harness_shortest_repr (shortest.cpp: repr's digits and layout
 * without Python's dtoa, which needs the GIL), on `threads` threads (8,192 distinct or more). The
 * document id objects are read at random (prefetched a few entries ahead) and their UTF-8 copied
 * into one buffer while at hand, so that the lines are assembled from sequential memory. With an
 * Arrow vocabulary the whole formatting runs on the threads (format_arrow_lines). The reference is
 * harness/formats/trec.py's _run_lines. format_scores(scores) -> bytes: each score's repr, one a
 * line (for the tests and checks of harness_shortest_repr). */
int harness_shortest_repr(double x, char *out);

#define REPR_MAX 24 /* the longest repr of a float: "-2.2250738585072014e-308" */
#define ID_AHEAD 16 /* entries ahead whose document id (object, or Arrow offset) is prefetched */

typedef struct {
    const double *values;
    Py_ssize_t start, end;
    char *text;            /* REPR_MAX bytes per value */
    unsigned char *len;
} ReprJob;

static void *repr_range(void *arg)
{
    ReprJob *j = arg;
    char buf[32];
    for (Py_ssize_t i = j->start; i < j->end; i++) {
        int n = harness_shortest_repr(j->values[i], buf);
        memcpy(j->text + i * REPR_MAX, buf, (size_t)n);
        j->len[i] = (unsigned char)n;
    }
    return NULL;
}

/* repr of values[0..n) into text (REPR_MAX bytes each) and len, on up to `threads` threads (GIL released). */
static void repr_values(const double *values, Py_ssize_t n, char *text, unsigned char *len, int threads)
{
    if (threads < 1 || n < 8192)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    ReprJob jobs[MAX_THREADS];
    for (int t = 0; t < threads; t++)
        jobs[t] = (ReprJob){values, n * t / threads, n * (t + 1) / threads, text, len};
    Py_BEGIN_ALLOW_THREADS
    run_parallel(repr_range, jobs, sizeof(ReprJob), threads);
    Py_END_ALLOW_THREADS
}
typedef struct {
    uint64_t *keys;
    int32_t *slot; /* distinct index + 1; 0 = empty */
    uint64_t mask;
} ScoreTable;

/* The lines of an Arrow vocabulary's run, on threads: each thread takes a range of whole queries
 * (about as many entries each) and makes its lines in two passes, GIL released: the first checks
 * each entry's code and id offsets, formats its score (once per run of equal scores) and sums the
 * lines' size; once the output is allocated (with the GIL) at each range's place, the second
 * writes them. The bytes are those of the one-thread loop (the same fields, in the same order). */
typedef struct {
    const char *const *qtext;
    const Py_ssize_t *qlen;
    const int64_t *offsets, *codes;
    const void *v_off; /* int64 items when v_wide, else int32 */
    int v_wide;
    const double *scores;
    const unsigned char *v_data;
    Py_ssize_t v_len, n_vocab, q0, q1, size;
    const char *tag;
    Py_ssize_t tag_len;
    char *stext;           /* per entry of the range: its score's repr (REPR_MAX bytes) ... */
    unsigned char *slen;   /* ... and its length */
    int64_t *id_start;     /* per entry of the range: its id's bytes at v_data + id_start ... */
    int32_t *id_len;       /* ... id_len of them */
    char *out;             /* the second pass writes here */
    int bad;               /* 1: a code out of range; 2: offsets out of order or past the data */
} LineJob;

static int rank_digits(int64_t rank)
{
    int digits = 1;
    while (rank >= 10) {
        rank /= 10;
        digits++;
    }
    return digits;
}

static void *lines_measure(void *arg)
{
    LineJob *j = arg;
    int64_t first = j->offsets[j->q0], last = j->offsets[j->q1];
    Py_ssize_t size = 0;
    uint64_t prev_bits = 0;
    int have_prev = 0;
    for (Py_ssize_t i = j->q0; i < j->q1; i++) {
        Py_ssize_t fixed = j->qlen[i] + 4 + 1 + 1 + 1 + j->tag_len + 1;
        for (int64_t e = j->offsets[i]; e < j->offsets[i + 1]; e++) {
            int64_t code = j->codes[e], at = e - first;
            if (e + 2 * ID_AHEAD < last) {
                int64_t far = j->codes[e + 2 * ID_AHEAD];
                if (far >= 0 && far < j->n_vocab)
                    __builtin_prefetch((const char *)j->v_off + (j->v_wide ? 8 : 4) * far);
            }
            if (e + ID_AHEAD < last) {
                int64_t ahead = j->codes[e + ID_AHEAD];
                int64_t at_ahead = ahead >= 0 && ahead < j->n_vocab ? column_offset(j->v_off, j->v_wide, ahead) : -1;
                if (at_ahead >= 0 && at_ahead < j->v_len)
                    __builtin_prefetch(j->v_data + at_ahead);
            }
            if (code < 0 || code >= j->n_vocab) {
                j->bad = 1;
                return NULL;
            }
            int64_t start = column_offset(j->v_off, j->v_wide, code), stop = column_offset(j->v_off, j->v_wide, code + 1);
            if (start < 0 || stop < start || stop > j->v_len || stop - start > INT32_MAX) {
                j->bad = 2;
                return NULL;
            }
            j->id_start[at] = start;
            j->id_len[at] = (int32_t)(stop - start);
            uint64_t bits;
            memcpy(&bits, &j->scores[e], sizeof bits);
            char *text = j->stext + (size_t)at * REPR_MAX;
            if (have_prev && bits == prev_bits) {
                memcpy(text, text - REPR_MAX, REPR_MAX);
                j->slen[at] = j->slen[at - 1];
            } else {
                char buf[32];
                int n = harness_shortest_repr(j->scores[e], buf);
                memcpy(text, buf, (size_t)n);
                j->slen[at] = (unsigned char)n;
            }
            prev_bits = bits;
            have_prev = 1;
            size += fixed + (stop - start) + rank_digits(e - j->offsets[i] + 1) + j->slen[at];
        }
    }
    j->size = size;
    return NULL;
}

/* Copies n bytes (a short field of a line: an id, a score, the tag) with fixed-size moves: two
 * overlapping 4-, 8- or 16-byte copies cover 4..32 bytes, three single bytes 1..3; longer fields go
 * to memcpy. Reads src[0..n) and writes dst[0..n) only. (A memcpy of a length known only at run time
 * is a call into libc: four per line, 65% of formatting a 1M-line run.) */
static inline void copy_short(char *dst, const char *src, size_t n)
{
    if (n >= 16) {
        if (n > 32) {
            memcpy(dst, src, n);
            return;
        }
        memcpy(dst, src, 16);
        memcpy(dst + n - 16, src + n - 16, 16);
    } else if (n >= 8) {
        memcpy(dst, src, 8);
        memcpy(dst + n - 8, src + n - 8, 8);
    } else if (n >= 4) {
        memcpy(dst, src, 4);
        memcpy(dst + n - 4, src + n - 4, 4);
    } else if (n) {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

static void *lines_write(void *arg)
{
    LineJob *j = arg;
    int64_t first = j->offsets[j->q0], last = j->offsets[j->q1];
    char *out = j->out;
    for (Py_ssize_t i = j->q0; i < j->q1; i++) {
        const char *q = j->qtext[i];
        Py_ssize_t q_len = j->qlen[i];
        for (int64_t e = j->offsets[i]; e < j->offsets[i + 1]; e++) {
            int64_t at = e - first;
            if (e + ID_AHEAD < last) /* the id a few entries on: read at random in the Arrow data */
                __builtin_prefetch(j->v_data + j->id_start[at + ID_AHEAD]);
            copy_short(out, q, (size_t)q_len);
            out += q_len;
            memcpy(out, " Q0 ", 4);
            out += 4;
            copy_short(out, (const char *)j->v_data + j->id_start[at], (size_t)j->id_len[at]);
            out += j->id_len[at];
            *out++ = ' ';
            char digits[24];
            int k = 0;
            for (int64_t rank = e - j->offsets[i] + 1; rank; rank /= 10)
                digits[k++] = (char)('0' + rank % 10);
            while (k)
                *out++ = digits[--k];
            *out++ = ' ';
            copy_short(out, j->stext + (size_t)at * REPR_MAX, j->slen[at]);
            out += j->slen[at];
            *out++ = ' ';
            copy_short(out, j->tag, (size_t)j->tag_len);
            out += j->tag_len;
            *out++ = '\n';
        }
    }
    return NULL;
}

/* format_lines for an Arrow vocabulary (checked arguments: offsets ascend from 0 to n). */
static PyObject *format_arrow_lines(PyObject *qids, const int64_t *offsets, const int64_t *codes,
                                    const double *scores, Py_ssize_t n, const void *v_off, int v_wide, Py_ssize_t n_vocab,
                                    const unsigned char *v_data, Py_ssize_t v_len, const char *tag,
                                    Py_ssize_t tag_len, int threads)
{
    Py_ssize_t n_q = PyList_GET_SIZE(qids);
    PyObject *result = NULL;
    const char **qtext = PyMem_RawMalloc((size_t)(n_q ? n_q : 1) * sizeof(char *));
    Py_ssize_t *qlen = PyMem_RawMalloc((size_t)(n_q ? n_q : 1) * sizeof(Py_ssize_t));
    char *stext = PyMem_RawMalloc((size_t)(n ? n : 1) * REPR_MAX);
    unsigned char *slen = PyMem_RawMalloc((size_t)(n ? n : 1));
    int64_t *id_start = PyMem_RawMalloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int32_t *id_len = PyMem_RawMalloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (!qtext || !qlen || !stext || !slen || !id_start || !id_len) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_q; i++) {
        PyObject *q = PyList_GET_ITEM(qids, i);
        if (!PyUnicode_Check(q)) {
            PyErr_SetString(PyExc_TypeError, "format_lines: query ids must be str");
            goto done;
        }
        if (!(qtext[i] = PyUnicode_AsUTF8AndSize(q, &qlen[i])))
            goto done;
    }
    if (threads < 1 || n < 8192)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    LineJob jobs[MAX_THREADS];
    Py_ssize_t q = 0;
    for (int t = 0; t < threads; t++) { /* whole queries, about n / threads entries each */
        Py_ssize_t q0 = q;
        int64_t want = n * (t + 1) / threads;
        if (t == threads - 1)
            q = n_q;
        else
            while (q < n_q && offsets[q + 1] <= want)
                q++;
        int64_t base = offsets[q0];
        jobs[t] = (LineJob){qtext, qlen, offsets, codes, v_off, v_wide, scores, v_data, v_len, n_vocab, q0, q,
                            0, tag, tag_len, stext + (size_t)base * REPR_MAX, slen + base, id_start + base,
                            id_len + base, NULL, 0};
    }
    Py_BEGIN_ALLOW_THREADS
    run_parallel(lines_measure, jobs, sizeof(LineJob), threads);
    Py_END_ALLOW_THREADS
    Py_ssize_t total = 0;
    for (int t = 0; t < threads; t++) {
        if (jobs[t].bad == 1) {
            PyErr_SetString(PyExc_IndexError, "format_lines: document code out of range");
            goto done;
        }
        if (jobs[t].bad == 2) {
            PyErr_SetString(PyExc_ValueError, "format_lines: vocabulary offsets out of order or past the data");
            goto done;
        }
        total += jobs[t].size;
    }
    result = PyBytes_FromStringAndSize(NULL, total);
    if (!result)
        goto done;
    char *out = PyBytes_AS_STRING(result);
    for (int t = 0; t < threads; t++) {
        jobs[t].out = out;
        out += jobs[t].size;
    }
    Py_BEGIN_ALLOW_THREADS
    run_parallel(lines_write, jobs, sizeof(LineJob), threads);
    Py_END_ALLOW_THREADS
done:
    PyMem_RawFree(qtext);
    PyMem_RawFree(qlen);
    PyMem_RawFree(stext);
    PyMem_RawFree(slen);
    PyMem_RawFree(id_start);
    PyMem_RawFree(id_len);
    return result;
}

static PyObject *format_lines(PyObject *self, PyObject *args)
{
    PyObject *qids, *vocab, *tag_obj, *result = NULL;
    Py_buffer ov = {0}, cv = {0}, sv = {0};
    ScoreTable table = {0};
    double *distinct_value = NULL;
    unsigned char *text_len = NULL;
    int32_t *entry_score = NULL;
    char *id_text = NULL;         /* each entry's document id as UTF-8, one after the other ... */
    int64_t *id_off = NULL;       /* ... entry j's at id_off[j]..id_off[j + 1] */
    size_t id_cap = 1 << 20;
    char *text = NULL;
    int threads = 1;
    Py_buffer vo = {0}, vd = {0}; /* vocab as an Arrow string array's offsets (int32 or int64) and UTF-8 data */
    const void *v_off = NULL;
    const unsigned char *v_data = NULL;
    if (!PyArg_ParseTuple(args, "O!y*y*y*OU|i", &PyList_Type, &qids, &ov, &cv, &sv, &vocab, &tag_obj, &threads))
        return NULL;
    Py_ssize_t n_q = PyList_GET_SIZE(qids), n_vocab;
    if (PyTuple_Check(vocab)) {
        PyObject *vo_obj;
        if (!PyArg_ParseTuple(vocab, "Oy*", &vo_obj, &vd))
            goto done;
        if (offsets_view(vo_obj, &vo, "format_lines"))
            goto done;
        v_off = vo.buf;
        v_data = vd.buf;
        n_vocab = vo.len / vo.itemsize - 1;
    } else if (PyList_Check(vocab)) {
        n_vocab = PyList_GET_SIZE(vocab);
    } else {
        PyErr_SetString(PyExc_TypeError, "format_lines: vocab must be a list of str or (offsets, data)");
        goto done;
    }
    Py_ssize_t n = cv.len / (Py_ssize_t)sizeof(int64_t);
    const int64_t *offsets = ov.buf, *codes = cv.buf;
    const double *scores = sv.buf;
    if (ov.len != (n_q + 1) * (Py_ssize_t)sizeof(int64_t) || sv.len != cv.len || offsets[0] != 0 || offsets[n_q] != n) {
        PyErr_SetString(PyExc_ValueError, "format_lines: offsets, doc_codes and scores do not agree");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_q; i++)
        if (offsets[i + 1] < offsets[i]) {
            PyErr_SetString(PyExc_ValueError, "format_lines: offsets must not decrease");
            goto done;
        }
    Py_ssize_t tag_len;
    const char *tag = PyUnicode_AsUTF8AndSize(tag_obj, &tag_len);
    if (!tag)
        goto done;
    if (v_off) {
        result = format_arrow_lines(qids, offsets, codes, scores, n, v_off, vo.itemsize == 8, n_vocab, v_data, vd.len,
                                    tag, tag_len, threads);
        goto done;
    }
    /* Distinct scores by bit pattern (so -0.0 stays apart from 0.0), each repr-ed once. */
    uint64_t size = 16;
    while (size < 2 * (uint64_t)n)
        size <<= 1;
    table.mask = size - 1;
    table.keys = PyMem_RawMalloc(size * sizeof(uint64_t));
    table.slot = PyMem_RawCalloc(size, sizeof(int32_t));
    entry_score = PyMem_RawMalloc((size_t)(n ? n : 1) * sizeof(int32_t));
    id_text = PyMem_RawMalloc(id_cap);
    id_off = PyMem_RawMalloc(((size_t)n + 1) * sizeof(int64_t));
    distinct_value = PyMem_RawMalloc((size_t)(n ? n : 1) * sizeof(double));
    if (!table.keys || !table.slot || !entry_score || !id_text || !id_off || !distinct_value) {
        PyErr_NoMemory();
        goto done;
    }
    int32_t distinct = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        uint64_t key;
        memcpy(&key, &scores[j], sizeof key);
        uint64_t h = key * 0x9E3779B97F4A7C15ULL;
        h = (h ^ (h >> 32)) & table.mask;
        while (table.slot[h] && table.keys[h] != key)
            h = (h + 1) & table.mask;
        if (!table.slot[h]) {
            distinct_value[distinct++] = scores[j];
            table.keys[h] = key;
            table.slot[h] = distinct;
        }
        entry_score[j] = table.slot[h] - 1;
    }
    text = PyMem_RawMalloc((size_t)(distinct ? distinct : 1) * REPR_MAX);
    text_len = PyMem_RawMalloc((size_t)(distinct ? distinct : 1));
    if (!text || !text_len) {
        PyErr_NoMemory();
        goto done;
    }
    repr_values(distinct_value, distinct, text, text_len, threads);
    /* Size of the output, checking every id. */
    Py_ssize_t total = 0;
    size_t id_used = 0;
    for (Py_ssize_t i = 0; i < n_q; i++) {
        PyObject *q = PyList_GET_ITEM(qids, i);
        Py_ssize_t q_len;
        if (!PyUnicode_Check(q)) {
            PyErr_SetString(PyExc_TypeError, "format_lines: query ids must be str");
            goto done;
        }
        if (!PyUnicode_AsUTF8AndSize(q, &q_len))
            goto done;
        for (int64_t j = offsets[i]; j < offsets[i + 1]; j++) {
            int64_t code = codes[j];
            if (code < 0 || code >= n_vocab) {
                PyErr_SetString(PyExc_IndexError, "format_lines: document code out of range");
                goto done;
            }
            if (j + ID_AHEAD < n) { /* the id objects are read at random: start loading one ahead */
                int64_t ahead = codes[j + ID_AHEAD];
                if (ahead >= 0 && ahead < n_vocab)
                    __builtin_prefetch(PyList_GET_ITEM(vocab, ahead));
            }
            PyObject *d = PyList_GET_ITEM(vocab, code);
            if (!PyUnicode_Check(d)) {
                PyErr_SetString(PyExc_TypeError, "format_lines: document ids must be str");
                goto done;
            }
            Py_ssize_t d_len;
            const char *d_text = PyUnicode_AsUTF8AndSize(d, &d_len);
            if (!d_text)
                goto done;
            /* copied while at hand, so that the lines are written from one sequential buffer */
            if (id_used + (size_t)d_len > id_cap) {
                while (id_used + (size_t)d_len > id_cap)
                    id_cap *= 2;
                char *grown = PyMem_RawRealloc(id_text, id_cap);
                if (!grown) {
                    PyErr_NoMemory();
                    goto done;
                }
                id_text = grown;
            }
            memcpy(id_text + id_used, d_text, (size_t)d_len);
            id_off[j] = (int64_t)id_used;
            id_used += (size_t)d_len;
            id_off[j + 1] = (int64_t)id_used;
            int64_t rank = j - offsets[i] + 1, digits = 1;
            while (rank >= 10) {
                rank /= 10;
                digits++;
            }
            total += q_len + 4 + d_len + 1 + digits + 1 + text_len[entry_score[j]] + 1 + tag_len + 1;
        }
    }
    result = PyBytes_FromStringAndSize(NULL, total);
    if (!result)
        goto done;
    char *out = PyBytes_AS_STRING(result);
    for (Py_ssize_t i = 0; i < n_q; i++) {
        Py_ssize_t q_len;
        const char *q = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(qids, i), &q_len);
        for (int64_t j = offsets[i]; j < offsets[i + 1]; j++) {
            memcpy(out, q, (size_t)q_len);
            out += q_len;
            memcpy(out, " Q0 ", 4);
            out += 4;
            memcpy(out, id_text + id_off[j], (size_t)(id_off[j + 1] - id_off[j]));
            out += id_off[j + 1] - id_off[j];
            *out++ = ' ';
            char digits[24];
            int k = 0;
            for (int64_t rank = j - offsets[i] + 1; rank; rank /= 10)
                digits[k++] = (char)('0' + rank % 10);
            while (k)
                *out++ = digits[--k];
            *out++ = ' ';
            int32_t s = entry_score[j];
            memcpy(out, text + (size_t)s * REPR_MAX, text_len[s]);
            out += text_len[s];
            *out++ = ' ';
            memcpy(out, tag, (size_t)tag_len);
            out += tag_len;
            *out++ = '\n';
        }
    }
done:
    PyMem_RawFree(table.keys);
    PyMem_RawFree(table.slot);
    PyMem_RawFree(entry_score);
    PyMem_RawFree(id_text);
    PyMem_RawFree(id_off);
    PyMem_RawFree(distinct_value);
    PyMem_RawFree(text_len);
    PyMem_RawFree(text);
    PyBuffer_Release(&ov);
    PyBuffer_Release(&cv);
    PyBuffer_Release(&sv);
    if (vo.obj)
        PyBuffer_Release(&vo);
    if (vd.obj)
        PyBuffer_Release(&vd);
    return result;
}

static PyObject *format_scores(PyObject *self, PyObject *args)
{
    Py_buffer sv = {0};
    int threads = 1;
    if (!PyArg_ParseTuple(args, "y*|i", &sv, &threads))
        return NULL;
    Py_ssize_t n = sv.len / (Py_ssize_t)sizeof(double);
    PyObject *result = NULL;
    char *text = PyMem_RawMalloc((size_t)(n ? n : 1) * REPR_MAX);
    unsigned char *len = PyMem_RawMalloc((size_t)(n ? n : 1));
    if (!text || !len) {
        PyErr_NoMemory();
        goto done;
    }
    repr_values(sv.buf, n, text, len, threads);
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        total += len[i] + 1;
    result = PyBytes_FromStringAndSize(NULL, total);
    if (!result)
        goto done;
    char *out = PyBytes_AS_STRING(result);
    for (Py_ssize_t i = 0; i < n; i++) {
        memcpy(out, text + i * REPR_MAX, len[i]);
        out += len[i];
        *out++ = '\n';
    }
done:
    PyMem_RawFree(text);
    PyMem_RawFree(len);
    PyBuffer_Release(&sv);
    return result;
}

/* ------------------------------------------------------------------ present_ids
 * present_ids(columns, ids) -> list[bool]: for each str of `ids`, whether it is one of the strings
 * of the Arrow string arrays given in `columns`, a list of (offsets, data): each array's offsets
 * (n + 1, as sliced; a buffer of int32 or int64 items, e.g. a numpy view of the array's own) and
 * UTF-8 data. The few judged document ids are probed against a corpus's ids (every chunk of its
 * column, one table of the ids for all) without a Python string per corpus id. A corpus id is
 * hashed (byte by byte) and probed only when its tail_key is one of the judged ids' (a 64 Kbit
 * filter: one multiply of its last 8 bytes and length). */
static inline unsigned tail_key(const unsigned char *s, Py_ssize_t l, const unsigned char *end)
{
    uint64_t w = 0; /* the last (up to) 8 bytes, the first in the low byte */
    if (l >= 8) {
        memcpy(&w, s + l - 8, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
    } else if (end && end - s >= 8) { /* a short id with 8 bytes readable: one load, masked */
        memcpy(&w, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        w = l ? w & (~0ULL >> (64 - 8 * l)) : 0;
    } else {
        for (Py_ssize_t i = 0; i < l; i++)
            w |= (uint64_t)s[i] << (8 * i);
    }
    return (unsigned)(((w ^ (uint64_t)l) * 0x9E3779B97F4A7C15ULL) >> 48);
}

static PyObject *present_ids(PyObject *self, PyObject *args)
{
    PyObject *columns, *ids;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &columns, &PyList_Type, &ids))
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t m = PyList_GET_SIZE(ids), cap = 16, n_cols = PyList_GET_SIZE(columns), n_views = 0;
    int64_t *slot = NULL; /* judged index + 1, 0 = empty */
    char *found = NULL;
    const char **text = NULL;
    Py_ssize_t *len = NULL;
    Py_buffer *views = calloc((size_t)(2 * n_cols + 1), sizeof(Py_buffer)); /* offsets, data of each column */
    uint64_t tail[1024] = {0}; /* bit tail_key(id) of each judged id */
    if (!views) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t c = 0; c < n_cols; c++) {
        PyObject *pair = PyList_GET_ITEM(columns, c);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "present_ids: columns must be (offsets, data) tuples");
            goto done;
        }
        if (offsets_view(PyTuple_GET_ITEM(pair, 0), &views[n_views], "present_ids"))
            goto done;
        n_views++;
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(pair, 1), &views[n_views], PyBUF_C_CONTIGUOUS))
            goto done;
        n_views++;
        Py_buffer *ov = &views[n_views - 2], *dv = &views[n_views - 1];
        if (!offsets_fit(ov->buf, ov->itemsize == 8, ov->len / ov->itemsize - 1, dv->len)) {
            PyErr_SetString(PyExc_ValueError, "present_ids: offsets out of order or past the data");
            goto done;
        }
    }
    while (cap < 2 * m)
        cap *= 2;
    slot = calloc((size_t)cap, sizeof(int64_t));
    found = calloc((size_t)(m ? m : 1), 1);
    text = malloc((size_t)(m ? m : 1) * sizeof(char *));
    len = malloc((size_t)(m ? m : 1) * sizeof(Py_ssize_t));
    if (!slot || !found || !text || !len) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0; j < m; j++) { /* the ids' table (a repeated id keeps its first slot) */
        PyObject *id = PyList_GET_ITEM(ids, j);
        if (!PyUnicode_Check(id)) {
            PyErr_SetString(PyExc_TypeError, "present_ids: ids must be str");
            goto done;
        }
        text[j] = PyUnicode_AsUTF8AndSize(id, &len[j]);
        if (!text[j])
            goto done;
        size_t h = (size_t)hash_bytes((const unsigned char *)text[j], len[j]) & (size_t)(cap - 1);
        while (slot[h]) {
            Py_ssize_t k = (Py_ssize_t)slot[h] - 1;
            if (len[k] == len[j] && !memcmp(text[k], text[j], (size_t)len[j]))
                break;
            h = (h + 1) & (size_t)(cap - 1);
        }
        if (!slot[h])
            slot[h] = j + 1;
        unsigned key = tail_key((const unsigned char *)text[j], len[j], NULL); /* the filter */
        tail[key >> 6] |= (uint64_t)1 << (key & 63);
    }
    if (m) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t c = 0; c < n_cols; c++) {
            const void *off = views[2 * c].buf;
            int wide = views[2 * c].itemsize == 8;
            Py_ssize_t n = views[2 * c].len / views[2 * c].itemsize - 1;
            const unsigned char *data = views[2 * c + 1].buf, *data_end = data + views[2 * c + 1].len;
            int64_t start = column_offset(off, wide, 0);
            for (Py_ssize_t i = 0; i < n; i++) {
                int64_t stop = column_offset(off, wide, i + 1);
                const unsigned char *s = data + start;
                Py_ssize_t l = (Py_ssize_t)(stop - start);
                start = stop;
                unsigned key = tail_key(s, l, data_end); /* most ids fail the filter: not hashed */
                if (!(tail[key >> 6] >> (key & 63) & 1))
                    continue;
                size_t h = (size_t)hash_bytes(s, l) & (size_t)(cap - 1);
                while (slot[h]) {
                    Py_ssize_t k = (Py_ssize_t)slot[h] - 1;
                    if (len[k] == l && !memcmp(text[k], s, (size_t)l)) {
                        found[k] = 1;
                        break;
                    }
                    h = (h + 1) & (size_t)(cap - 1);
                }
            }
        }
        Py_END_ALLOW_THREADS
    }
    out = PyList_New(m);
    if (!out)
        goto done;
    for (Py_ssize_t j = 0; j < m; j++) { /* a repeat answers as its first occurrence */
        size_t h = (size_t)hash_bytes((const unsigned char *)text[j], len[j]) & (size_t)(cap - 1);
        Py_ssize_t k;
        for (;; h = (h + 1) & (size_t)(cap - 1)) {
            k = (Py_ssize_t)slot[h] - 1;
            if (len[k] == len[j] && !memcmp(text[k], text[j], (size_t)len[j]))
                break;
        }
        PyObject *b = found[k] ? Py_True : Py_False;
        Py_INCREF(b);
        PyList_SET_ITEM(out, j, b);
    }
done:
    free(slot); free(found); free(text); free(len);
    for (Py_ssize_t i = 0; i < n_views; i++)
        PyBuffer_Release(&views[i]);
    free(views);
    return out;
}

/* ------------------------------------------------------------------ find_ranked
 * find_ranked(offsets, data, order, ids) -> bytes: the int64 code of each str of `ids` among the
 * strings of an Arrow string array (offsets, n + 1 int32 or int64 items, and UTF-8 data), -1 where absent, by
 * binary search over `order` (int64, n: the code at each rank of the strings in byte order, which
 * is code point order): a run's few thousand looked-up ids against a corpus's ids with no Python
 * string per corpus id. An id that is not valid UTF-8 (a lone surrogate) is absent. */
static PyObject *find_ranked(PyObject *self, PyObject *args)
{
    Py_buffer ov, dv, rv;
    PyObject *ids, *offsets_obj, *out = NULL;
    if (!PyArg_ParseTuple(args, "Oy*y*O!", &offsets_obj, &dv, &rv, &PyList_Type, &ids))
        return NULL;
    if (offsets_view(offsets_obj, &ov, "find_ranked")) {
        PyBuffer_Release(&dv);
        PyBuffer_Release(&rv);
        return NULL;
    }
    Py_ssize_t m = PyList_GET_SIZE(ids);
    const char **text = NULL;
    Py_ssize_t *len = NULL;
    int bad = 0, wide = ov.itemsize == 8;
    if (rv.len % 8 || rv.len / 8 != ov.len / ov.itemsize - 1) {
        PyErr_SetString(PyExc_ValueError, "find_ranked: order must be int64, one per string (offsets: n + 1)");
        goto done;
    }
    const void *off = ov.buf;
    const int64_t *order = rv.buf;
    const unsigned char *data = dv.buf;
    Py_ssize_t n = rv.len / 8;
    text = malloc((size_t)(m ? m : 1) * sizeof(char *));
    len = malloc((size_t)(m ? m : 1) * sizeof(Py_ssize_t));
    out = PyBytes_FromStringAndSize(NULL, (m ? m : 0) * (Py_ssize_t)sizeof(int64_t));
    if (!text || !len || !out) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        Py_CLEAR(out);
        goto done;
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *id = PyList_GET_ITEM(ids, j);
        if (!PyUnicode_Check(id)) {
            PyErr_SetString(PyExc_TypeError, "find_ranked: ids must be str");
            Py_CLEAR(out);
            goto done;
        }
        text[j] = PyUnicode_AsUTF8AndSize(id, &len[j]);
        if (!text[j]) { /* not encodable: no corpus id equals it */
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
                Py_CLEAR(out);
                goto done;
            }
            PyErr_Clear();
            len[j] = -1;
        }
    }
    int64_t *codes = (int64_t *)PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t j = 0; j < m && !bad; j++) {
        codes[j] = -1;
        if (len[j] < 0)
            continue;
        const unsigned char *probe = (const unsigned char *)text[j];
        Py_ssize_t lo = 0, hi = n, plen = len[j];
        while (lo < hi) { /* the first rank whose string is >= the probe */
            Py_ssize_t mid = lo + (hi - lo) / 2;
            int64_t c = order[mid];
            int64_t start = c < 0 || c >= n ? -1 : column_offset(off, wide, c);
            int64_t stop = start < 0 ? -1 : column_offset(off, wide, c + 1);
            if (start < 0 || stop < start || stop > dv.len) {
                bad = 1;
                break;
            }
            Py_ssize_t l = (Py_ssize_t)(stop - start);
            int cmp = memcmp(data + start, probe, (size_t)(l < plen ? l : plen));
            if (cmp < 0 || (cmp == 0 && l < plen))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (!bad && lo < n) {
            int64_t c = order[lo];
            int64_t start = c < 0 || c >= n ? -1 : column_offset(off, wide, c);
            int64_t stop = start < 0 ? -1 : column_offset(off, wide, c + 1);
            if (start < 0 || stop < start || stop > dv.len)
                bad = 1;
            else if (stop - start == plen && !memcmp(data + start, probe, (size_t)plen))
                codes[j] = c;
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "find_ranked: order or offsets out of range");
        Py_CLEAR(out);
    }
done:
    free(text);
    free(len);
    PyBuffer_Release(&ov);
    PyBuffer_Release(&dv);
    PyBuffer_Release(&rv);
    return out;
}

/* ------------------------------------------------------------------ string_order
 * string_order(offsets, data, threads=1) -> bytes: the int64 positions of an Arrow string array's
 * values (offsets: n + 1 int32 or int64 items; UTF-8 data) in ascending byte order (which is code
 * point order), equal values in their given order (a stable sort): what pyarrow.compute.sort_indices
 * gives, without its comparison sort (1M short ids: ~0.3 s there). A most-significant-first radix
 * sort on 8-byte words: the positions are sorted (LSD, stable, a byte at a time, skipping the bytes
 * every key shares) by their values' bytes [8d, 8d + 8) read big-endian and zero-padded; a run of
 * equal words whose values all end within those bytes is in order once stably sorted by length (the
 * shorter is a prefix of the longer, padding being zeros); any other run of equal words goes one
 * word deeper, up to STR_RADIX_DEPTH bytes, past which a run is merge-sorted. Runs of up to 24 are
 * sorted by comparing their values. */
typedef struct {
    const void *off;
    int wide;
    const unsigned char *data;
    int64_t data_len;
} StrCol;

static inline int64_t str_start(const StrCol *c, int64_t i) { return column_offset(c->off, c->wide, i); }
static inline int64_t str_len(const StrCol *c, int64_t i) { return column_offset(c->off, c->wide, i + 1) - str_start(c, i); }

static inline uint64_t str_word(const StrCol *c, int64_t i, int64_t from)
{
    int64_t start = str_start(c, i) + from, len = str_len(c, i) - from;
    uint64_t w = 0;
    if (len <= 0)
        return 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (start + 8 <= c->data_len) { /* one load: the bytes past the value masked off */
        memcpy(&w, c->data + start, 8);
        w = __builtin_bswap64(w);
        return len >= 8 ? w : w & ~(~0ULL >> (8 * len));
    }
#endif
    for (int64_t b = 0; b < 8 && b < len; b++)
        w |= (uint64_t)c->data[start + b] << (56 - 8 * b);
    return w;
}

static inline int str_cmp(const StrCol *c, int64_t a, int64_t b)
{
    int64_t la = str_len(c, a), lb = str_len(c, b);
    int r = memcmp(c->data + str_start(c, a), c->data + str_start(c, b), (size_t)(la < lb ? la : lb));
    return r ? r : (la > lb) - (la < lb);
}

static void str_insertion(const StrCol *c, int64_t *idx, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        int64_t v = idx[i], j = i;
        while (j > 0 && str_cmp(c, idx[j - 1], v) > 0) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

/* Stable bottom-up merge sort of idx[0..n) by value (an equal pair keeps its order); tmp: scratch of n. */
static void str_merge_sort(const StrCol *c, int64_t *idx, int64_t n, int64_t *tmp)
{
    int64_t *src = idx, *dst = tmp;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, k = lo;
            while (i < mid && j < hi) dst[k++] = str_cmp(c, src[j], src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        int64_t *t = src; src = dst; dst = t;
    }
    if (src != idx) memcpy(idx, src, (size_t)n * sizeof(int64_t));
}

#define STR_RADIX_DEPTH 128 /* bytes: a run sharing more is merge-sorted (each radix level, a word deeper,
                               takes a ~2 KB stack frame: values sharing 30 KB overflowed an 8 MiB stack) */

/* Sort idx[0..n) (all sharing bytes [0, from) of their values, zero-padded) from byte `from` on;
 * key and tmp_key / tmp_idx: scratch of n. */
static void str_radix(const StrCol *c, int64_t *idx, int64_t n, int64_t from, uint64_t *key, uint64_t *tmp_key,
                      int64_t *tmp_idx)
{
    if (n <= 24) {
        str_insertion(c, idx, n);
        return;
    }
    if (from >= STR_RADIX_DEPTH) {
        str_merge_sort(c, idx, n, tmp_idx);
        return;
    }
    uint64_t all_and = ~0ULL, all_or = 0;
    for (int64_t i = 0; i < n; i++) {
        key[i] = str_word(c, idx[i], from);
        all_and &= key[i];
        all_or |= key[i];
    }
    uint64_t *k_src = key, *k_dst = tmp_key;
    int64_t *i_src = idx, *i_dst = tmp_idx;
    for (int shift = 0; shift < 64; shift += 8) {
        if (((all_and ^ all_or) >> shift & 255) == 0)
            continue; /* every key has this byte */
        int64_t count[257] = {0};
        for (int64_t i = 0; i < n; i++)
            count[(k_src[i] >> shift & 255) + 1]++;
        for (int b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (int64_t i = 0; i < n; i++) {
            int64_t at = count[k_src[i] >> shift & 255]++;
            k_dst[at] = k_src[i];
            i_dst[at] = i_src[i];
        }
        uint64_t *kt = k_src; k_src = k_dst; k_dst = kt;
        int64_t *it = i_src; i_src = i_dst; i_dst = it;
    }
    if (i_src != idx) {
        memcpy(idx, i_src, (size_t)n * sizeof(int64_t));
        memcpy(key, k_src, (size_t)n * sizeof(uint64_t));
    }
    for (int64_t lo = 0; lo < n;) { /* runs of equal words */
        int64_t hi = lo + 1, longest = str_len(c, idx[lo]);
        while (hi < n && key[hi] == key[lo]) {
            int64_t l = str_len(c, idx[hi]);
            if (l > longest) longest = l;
            hi++;
        }
        if (hi - lo > 1) {
            if (longest > from + 8) {
                str_radix(c, idx + lo, hi - lo, from + 8, key + lo, tmp_key + lo, tmp_idx + lo);
            } else { /* all end here: shorter first, stable (insertion by length) */
                for (int64_t i = lo + 1; i < hi; i++) {
                    int64_t v = idx[i], lv = str_len(c, v), j = i;
                    while (j > lo && str_len(c, idx[j - 1]) > lv) {
                        idx[j] = idx[j - 1];
                        j--;
                    }
                    idx[j] = v;
                }
            }
        }
        lo = hi;
    }
}

static PyObject *string_order(PyObject *self, PyObject *args)
{
    PyObject *offsets_obj, *out = NULL;
    Py_buffer ov, dv;
    if (!PyArg_ParseTuple(args, "Oy*", &offsets_obj, &dv))
        return NULL;
    if (offsets_view(offsets_obj, &ov, "string_order")) {
        PyBuffer_Release(&dv);
        return NULL;
    }
    StrCol col = {ov.buf, ov.itemsize == 8, dv.buf, (int64_t)dv.len};
    int64_t n = ov.len / ov.itemsize - 1;
    if (!offsets_fit(col.off, col.wide, n, dv.len)) {
        PyErr_SetString(PyExc_ValueError, "string_order: offsets out of order or past the data");
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    uint64_t *key = malloc((size_t)(n ? n : 1) * 8), *tmp_key = malloc((size_t)(n ? n : 1) * 8);
    int64_t *tmp_idx = malloc((size_t)(n ? n : 1) * 8);
    if (!out || !key || !tmp_key || !tmp_idx) {
        free(key); free(tmp_key); free(tmp_idx);
        Py_CLEAR(out);
        PyErr_NoMemory();
        goto done;
    }
    int64_t *idx = (int64_t *)PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = 0; i < n; i++)
        idx[i] = i;
    str_radix(&col, idx, n, 0, key, tmp_key, tmp_idx);
    Py_END_ALLOW_THREADS
    free(key); free(tmp_key); free(tmp_idx);
done:
    PyBuffer_Release(&ov);
    PyBuffer_Release(&dv);
    return out;
}

/* first_repeat(offsets, data, order) -> int: the first rank r >= 1 at which an Arrow string array's value
 * at order[r] equals the one at order[r - 1] (order: the int64 positions of its values in string order, as
 * string_order gives them, equal values side by side), or -1: whether its values are all distinct, without
 * gathering them in that order (pyarrow.compute's take and equal, and its import, at the end of a cold load). */
static PyObject *first_repeat(PyObject *self, PyObject *args)
{
    PyObject *offsets_obj;
    Py_buffer ov, dv, rv;
    if (!PyArg_ParseTuple(args, "Oy*y*", &offsets_obj, &dv, &rv))
        return NULL;
    if (offsets_view(offsets_obj, &ov, "first_repeat")) {
        PyBuffer_Release(&dv);
        PyBuffer_Release(&rv);
        return NULL;
    }
    const void *off = ov.buf;
    int wide = ov.itemsize == 8;
    int64_t n = ov.len / ov.itemsize - 1, found = -1;
    const int64_t *order = rv.buf;
    PyObject *ret = NULL;
    if (rv.len != n * 8 || !offsets_fit(off, wide, n, dv.len)) {
        PyErr_SetString(PyExc_ValueError, "first_repeat: offsets out of order or past the data, or an order of "
                                          "another length");
        goto done;
    }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t r = 0; r < n && !bad; r++)
        bad = order[r] < 0 || order[r] >= n;
    const unsigned char *data = dv.buf;
    for (int64_t r = 1; r < n && !bad && found < 0; r++) {
        int64_t a = order[r - 1], b = order[r];
        int64_t a0 = column_offset(off, wide, a), a1 = column_offset(off, wide, a + 1);
        int64_t b0 = column_offset(off, wide, b), b1 = column_offset(off, wide, b + 1);
        if (a1 - a0 == b1 - b0 && !memcmp(data + a0, data + b0, (size_t)(a1 - a0)))
            found = r;
    }
    Py_END_ALLOW_THREADS
    if (bad)
        PyErr_SetString(PyExc_ValueError, "first_repeat: a position out of range");
    else
        ret = PyLong_FromLongLong(found);
done:
    PyBuffer_Release(&ov);
    PyBuffer_Release(&dv);
    PyBuffer_Release(&rv);
    return ret;
}

/* repeated_entry(offsets, codes, n_vocab) -> int: the position of the first entry whose document
 * (int64 code in [0, n_vocab)) was already listed for its query (offsets: int64, n_queries + 1, rising
 * from 0 to len(codes)), or -1. One pass: last[code] holds the last query (+ 1) that listed the code (a
 * query's entries are contiguous), so a repeat within a query is found where it occurs; O(n) and an
 * int32 per vocabulary entry (calloc: only the pages the codes touch are zeroed), or, for a vocabulary
 * over 16 times the entries, a hash table of the query's codes (twice its length, Fibonacci hashing,
 * linear probing) whose slots are stamped with the query. */
static PyObject *repeated_entry(PyObject *self, PyObject *args)
{
    PyObject *ob, *cb;
    Py_ssize_t n_vocab;
    if (!PyArg_ParseTuple(args, "OOn", &ob, &cb, &n_vocab))
        return NULL;
    Py_buffer ov, cv;
    if (PyObject_GetBuffer(ob, &ov, PyBUF_C_CONTIGUOUS))
        return NULL;
    if (PyObject_GetBuffer(cb, &cv, PyBUF_C_CONTIGUOUS)) {
        PyBuffer_Release(&ov);
        return NULL;
    }
    PyObject *out = NULL;
    const int64_t *offsets = ov.buf, *codes = cv.buf;
    Py_ssize_t n_off = ov.len / 8, n = cv.len / 8;
    if (ov.len % 8 || cv.len % 8 || n_off < 1 || offsets[0] != 0 || offsets[n_off - 1] != n || n_vocab < 0) {
        PyErr_SetString(PyExc_ValueError, "repeated_entry: int64 offsets from 0 to len(codes), int64 codes");
        goto done;
    }
    if (n_off - 1 >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "repeated_entry: at most 2^31 - 2 queries");
        goto done;
    }
    Py_ssize_t longest = 0; /* the most entries of one query */
    for (Py_ssize_t q = 0; q + 1 < n_off; q++) {
        if (offsets[q + 1] < offsets[q] || offsets[q + 1] > n) {
            PyErr_SetString(PyExc_ValueError, "repeated_entry: offsets must rise");
            goto done;
        }
        if (offsets[q + 1] - offsets[q] > longest)
            longest = (Py_ssize_t)(offsets[q + 1] - offsets[q]);
    }
    /* A vocabulary far larger than the entries (a batch of 32 queries x 1,000 over 1M documents): a
     * table per query of at least twice its entries, stamped with the query (no clearing between
     * queries), where an int32 per vocabulary entry cost a page fault per page the codes touch. */
    int hashed = (size_t)n * 16 < (size_t)n_vocab;
    size_t m = 16;
    while (hashed && m < 2 * (size_t)longest)
        m <<= 1;
    int shift = 64;
    for (size_t b = m; b > 1; b >>= 1)
        shift--;
    int32_t *last = hashed ? calloc(m, sizeof(int32_t)) : calloc((size_t)(n_vocab ? n_vocab : 1), sizeof(int32_t));
    int64_t *key = hashed ? malloc(m * sizeof(int64_t)) : NULL;
    if (!last || (hashed && !key)) {
        free(last);
        free(key);
        PyErr_NoMemory();
        goto done;
    }
    int64_t found = -1;
    const char *bad = NULL;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t q = 0; q + 1 < n_off && found < 0 && !bad; q++) {
        for (int64_t i = offsets[q]; i < offsets[q + 1]; i++) {
            int64_t c = codes[i];
            if (c < 0 || c >= n_vocab) {
                bad = "repeated_entry: a code is out of the vocabulary";
                break;
            }
            if (hashed) { /* last[h]: the query (+ 1) whose code key[h] is; another query's: free */
                size_t h = (size_t)(((uint64_t)c * 0x9E3779B97F4A7C15ULL) >> shift);
                while (last[h] == (int32_t)(q + 1) && key[h] != c)
                    h = (h + 1) & (m - 1);
                if (last[h] == (int32_t)(q + 1)) {
                    found = i;
                    break;
                }
                last[h] = (int32_t)(q + 1);
                key[h] = c;
                continue;
            }
            if (last[c] == (int32_t)(q + 1)) {
                found = i;
                break;
            }
            last[c] = (int32_t)(q + 1);
        }
    }
    Py_END_ALLOW_THREADS
    free(last);
    free(key);
    if (bad)
        PyErr_SetString(PyExc_ValueError, bad);
    else
        out = PyLong_FromLongLong(found);
done:
    PyBuffer_Release(&ov);
    PyBuffer_Release(&cv);
    return out;
}

PyObject *jsonrows_string_rows(PyObject *self, PyObject *args); /* jsonrows.c */

/* jsonl_lines(buffer, open, last, blank, cr) -> (open, last, blank, cr, line_ends), or None: the checks
 * harness/datasets/jsonl.py's _ObjectBlocks makes of the next bytes read of a JSON Lines file, in one
 * pass (memchr for each LF and CR) where numpy made a mask and an index array per read. A line that
 * is not blank (blanks: space, tab, CR) must start with '{' and end with '}', and come before any
 * blank line; every CR must be followed by an LF. The state carries a line across reads: `open`
 * (the current line holds a byte that is not blank), `last` (its last such byte), `blank` (a blank
 * line was read), `cr` (the last read ended with a CR). None: a check failed. */
static inline int jsonl_blank(unsigned char c) { return c == ' ' || c == '\t' || c == '\r'; }

static PyObject *jsonl_lines(PyObject *self, PyObject *args)
{
    Py_buffer view;
    int open, last, blank, cr;
    if (!PyArg_ParseTuple(args, "y*iiii", &view, &open, &last, &blank, &cr))
        return NULL;
    const unsigned char *p = view.buf, *end = p + view.len;
    long long line_ends = 0;
    int fault = 0;
    Py_BEGIN_ALLOW_THREADS
    if (view.len > 0 && cr && p[0] != '\n')
        fault = 1;
    cr = view.len > 0 && end[-1] == '\r';
    if (view.len > 0) {
        for (const unsigned char *c = p; !fault && (c = memchr(c, '\r', (size_t)(end - 1 - c))) != NULL; c++)
            if (c[1] != '\n')
                fault = 1;
    }
    while (!fault && p < end) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        const unsigned char *stop = nl ? nl : end, *a = p;
        while (a < stop && jsonl_blank(*a))
            a++;
        if (a < stop) {
            if (!open) {
                if (blank || *a != '{') {
                    fault = 1;
                    break;
                }
                open = 1;
            }
            const unsigned char *b = stop - 1;
            while (jsonl_blank(*b))
                b--;
            last = *b;
        }
        if (!nl)
            break;
        line_ends++;
        if (open) {
            if (last != '}') {
                fault = 1;
                break;
            }
            open = 0;
        } else {
            blank = 1;
        }
        p = nl + 1;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (fault)
        Py_RETURN_NONE;
    return Py_BuildValue("(iiiiL)", open, last, blank, cr, line_ends);
}

static PyMethodDef methods[] = {
    {"first_repeat", first_repeat, METH_VARARGS,
     "first_repeat(offsets, data, order) -> int: the first rank whose value equals the one before it in order "
     "(int64 positions in string order), or -1."},
    {"string_order", string_order, METH_VARARGS,
     "string_order(offsets, data) -> bytes: the int64 positions of an Arrow string array's values (offsets: "
     "int32 or int64 items; UTF-8 data) in byte order, equal values in their order (a stable sort)."},
    {"read_run", read_run, METH_VARARGS,
     "read_run(buffer, threads=1, locate=0) -> (query_ids, offsets, doc_codes, scores, vocab, width) or None "
     "(with locate, (at, first) where it refused a line or a repeat): a TREC run's bytes as the columns of a Run "
     "(see harness/native/trecrun.c)."},
    {"format_lines", format_lines, METH_VARARGS,
     "format_lines(query_ids, offsets, doc_codes, scores, vocab, tag, threads=1) -> bytes: a run's TREC lines; "
     "vocab: a list of str or an Arrow string array's (int64 offsets, data) (see harness/native/trecrun.c)."},
    {"present_ids", present_ids, METH_VARARGS,
     "present_ids(columns, ids) -> list[bool]: whether each id is one of the values of the Arrow string arrays "
     "given as a list of (offsets: int32 or int64 items, UTF-8 data)."},
    {"find_ranked", find_ranked, METH_VARARGS,
     "find_ranked(offsets, data, order, ids) -> bytes: the int64 code of each id among an Arrow string array's "
     "values (-1 where absent), by binary search over their byte order."},
    {"repeated_entry", repeated_entry, METH_VARARGS,
     "repeated_entry(offsets, codes, n_vocab) -> int: the first entry whose document its query already listed, "
     "or -1 (int64 offsets and codes)."},
    {"string_rows", jsonrows_string_rows, METH_VARARGS,
     "string_rows(fields, head, data, final) -> (rows, columns, head) or None: the string columns of JSON Lines "
     "(harness/native/jsonrows.c); None where the plain case it accepts is not met."},
    {"jsonl_lines", jsonl_lines, METH_VARARGS,
     "jsonl_lines(buffer, open, last, blank, cr) -> (open, last, blank, cr, line_ends) or None: the per-line "
     "checks of a JSON Lines read (see harness/datasets/jsonl.py _ObjectBlocks); None when one fails."},
    {"format_scores", format_scores, METH_VARARGS,
     "format_scores(scores, threads=1) -> bytes: repr of each float64 of the buffer, one a line."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_trecrun", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__trecrun(void)
{
    byte_class[' '] = byte_class['\t'] = byte_class['\v'] = byte_class['\f'] = SPACE;
    byte_class['\0'] = BAD;
    byte_class['\n'] = NEWLINE;
    byte_class['\r'] = CR;
    return PyModule_Create(&module);
}
