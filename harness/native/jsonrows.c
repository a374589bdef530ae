/* JSON Lines -> string columns, one row per line: the corpus stream's parse (harness/datasets/jsonl.py,
 * stream_string_columns), in place of pyarrow.json where this module is built.
 *
 * It accepts only the plain case, and refuses (returns None) anything else, whose file the caller then reads
 * as before (pyarrow.json, then the line scan that names a faulty line): so where a file is accepted, its
 * columns are what pyarrow.json and json.loads make of it, and where it is refused, nothing changed. Each line
 * that is not blank (blanks: space, tab, CR) holds one JSON object (RFC 8259: strings with valid escapes, no
 * raw control character and valid UTF-8, numbers of JSON's grammar, true / false / null, nesting up to
 * MAX_DEPTH) and nothing else. A field asked for is a string (decoded: escapes, surrogate pairs) or null, at
 * most once per object (its key compared once decoded); it is null where absent. Every other key's value is
 * checked and skipped. Refused: anything else (a number where a string belongs, a lone surrogate escape, a
 * duplicate field asked for, NaN, a comma too many). */
#include <Python.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_FIELDS 8
#define MAX_DEPTH 256

typedef struct {
    const char *name;
    Py_ssize_t name_len;
    char *data;          /* the decoded strings (room for every input byte and the SIMD copy's overrun) */
    Py_ssize_t n;
    int32_t *offsets;    /* rows + 1 */
    uint8_t *valid;      /* NULL until a null (then a bit per row, 1 = a value) */
    Py_ssize_t nulls;
    int seen;            /* set in the current row */
    int null_now;        /* the current row's value is null */
} Column;

typedef struct {
    Column col[MAX_FIELDS];
    int n_fields;
    Py_ssize_t rows, max_rows;
    int oom;
    char key[272];       /* a decoded key (one with an escape) */
} Rows;

static inline const unsigned char *ws(const unsigned char *s, const unsigned char *e) {
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
    return s;
}

static inline int hex4(const unsigned char *s, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = s[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v * 16 + d;
    }
    *out = v;
    return 0;
}

int valid_utf8(const unsigned char *s, Py_ssize_t n); /* trecrun.c: strict UTF-8, as Python's decoder */

/* The end of the run of plain string bytes from s (no quote, backslash or control byte), copied to dst
 * when dst is not NULL (which may be written up to 15 bytes past the run); *high gets a bit set where a
 * byte >= 0x80 may be among them (or among the 15 after). */
static inline const unsigned char *plain_run(const unsigned char *s, const unsigned char *e, char *dst, int *high) {
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'), low = _mm_set1_epi8(0x1F);
    while (e - s >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)s);
        if (dst) _mm_storeu_si128((__m128i *)dst, x);
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, slash)),
                                   _mm_cmpeq_epi8(_mm_min_epu8(x, low), x));
        int mask = _mm_movemask_epi8(hit);
        *high |= _mm_movemask_epi8(x);
        if (mask) return s + __builtin_ctz((unsigned)mask);
        s += 16;
        if (dst) dst += 16;
    }
#endif
    while (s < e && *s != '"' && *s != '\\' && *s >= 0x20) {
        if (dst) *dst++ = (char)*s;
        *high |= *s & 0x80;
        s++;
    }
    return s;
}

/* A JSON string from s (its opening quote passed): the position after its closing quote, or NULL when
 * it is not valid. dst (or NULL: checked only) gets the decoded UTF-8 and *len its length. */
static const unsigned char *string_value(const unsigned char *s, const unsigned char *e, char *dst, Py_ssize_t *len) {
    char *start = dst;
    const unsigned char *raw = s;
    int high = 0; /* a raw byte >= 0x80 may be in the string: its UTF-8 is checked */
    for (;;) {
        const unsigned char *run = s;
        s = plain_run(s, e, dst, &high);
        if (dst) dst += s - run;
        if (s >= e) return NULL;
        if (*s == '"') break;
        if (*s < 0x20) return NULL;
        s++; /* a backslash */
        if (s >= e) return NULL;
        unsigned c = *s++, cp;
        char one;
        switch (c) {
        case '"': one = '"'; break;
        case '\\': one = '\\'; break;
        case '/': one = '/'; break;
        case 'b': one = '\b'; break;
        case 'f': one = '\f'; break;
        case 'n': one = '\n'; break;
        case 'r': one = '\r'; break;
        case 't': one = '\t'; break;
        case 'u':
            if (e - s < 4 || hex4(s, &cp)) return NULL;
            s += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF) return NULL; /* a lone low surrogate */
            if (cp >= 0xD800 && cp <= 0xDBFF) {            /* a high one: its low one must follow */
                unsigned lo;
                if (e - s < 6 || s[0] != '\\' || s[1] != 'u' || hex4(s + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                    return NULL;
                s += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (dst) {
                if (cp < 0x80) {
                    *dst++ = (char)cp;
                } else if (cp < 0x800) {
                    *dst++ = (char)(0xC0 | (cp >> 6));
                    *dst++ = (char)(0x80 | (cp & 0x3F));
                } else if (cp < 0x10000) {
                    *dst++ = (char)(0xE0 | (cp >> 12));
                    *dst++ = (char)(0x80 | ((cp >> 6) & 0x3F));
                    *dst++ = (char)(0x80 | (cp & 0x3F));
                } else {
                    *dst++ = (char)(0xF0 | (cp >> 18));
                    *dst++ = (char)(0x80 | ((cp >> 12) & 0x3F));
                    *dst++ = (char)(0x80 | ((cp >> 6) & 0x3F));
                    *dst++ = (char)(0x80 | (cp & 0x3F));
                }
            }
            continue;
        default:
            return NULL;
        }
        if (dst) *dst++ = one;
    }
    /* raw bytes >= 0x80 must be UTF-8 (what escapes give is, by construction) */
    if (dst) {
        *len = dst - start;
        if (high && !valid_utf8((const unsigned char *)start, *len)) return NULL;
    } else if (high && !valid_utf8(raw, s - raw)) {
        return NULL;
    }
    return s + 1;
}

static const unsigned char *skip_value(const unsigned char *s, const unsigned char *e, int depth);

static const unsigned char *skip_number(const unsigned char *s, const unsigned char *e) {
    if (s < e && *s == '-') s++;
    if (s >= e) return NULL;
    if (*s == '0') {
        s++;
    } else if (*s >= '1' && *s <= '9') {
        while (s < e && *s >= '0' && *s <= '9') s++;
    } else {
        return NULL;
    }
    if (s < e && *s == '.') {
        s++;
        if (s >= e || *s < '0' || *s > '9') return NULL;
        while (s < e && *s >= '0' && *s <= '9') s++;
    }
    if (s < e && (*s == 'e' || *s == 'E')) {
        s++;
        if (s < e && (*s == '+' || *s == '-')) s++;
        if (s >= e || *s < '0' || *s > '9') return NULL;
        while (s < e && *s >= '0' && *s <= '9') s++;
    }
    return s;
}

static const unsigned char *literal(const unsigned char *s, const unsigned char *e, const char *word, Py_ssize_t n) {
    return e - s >= n && !memcmp(s, word, (size_t)n) ? s + n : NULL;
}

/* A whole object's or array's members from s (after its opening bracket), checked and skipped. */
static const unsigned char *skip_container(const unsigned char *s, const unsigned char *e, int depth, int object) {
    const unsigned char close = object ? '}' : ']';
    s = ws(s, e);
    if (s < e && *s == close) return s + 1;
    for (;;) {
        if (object) {
            if (s >= e || *s != '"' || !(s = string_value(s + 1, e, NULL, NULL))) return NULL;
            s = ws(s, e);
            if (s >= e || *s != ':') return NULL;
            s = ws(s + 1, e);
        }
        if (!(s = skip_value(s, e, depth + 1))) return NULL;
        s = ws(s, e);
        if (s >= e) return NULL;
        if (*s == close) return s + 1;
        if (*s != ',') return NULL;
        s = ws(s + 1, e);
    }
}

static const unsigned char *skip_value(const unsigned char *s, const unsigned char *e, int depth) {
    if (s >= e || depth > MAX_DEPTH) return NULL;
    switch (*s) {
    case '"': return string_value(s + 1, e, NULL, NULL);
    case '{': return skip_container(s + 1, e, depth, 1);
    case '[': return skip_container(s + 1, e, depth, 0);
    case 't': return literal(s, e, "true", 4);
    case 'f': return literal(s, e, "false", 5);
    case 'n': return literal(s, e, "null", 4);
    default: return skip_number(s, e);
    }
}

/* One line (no LF): 1 a row, 0 blank, -1 refused. */
static int parse_line(Rows *r, const unsigned char *s, const unsigned char *e) {
    s = ws(s, e);
    if (s == e) return 0;
    if (*s != '{' || r->rows >= r->max_rows) return -1;
    for (int f = 0; f < r->n_fields; f++) r->col[f].seen = r->col[f].null_now = 0;
    s = ws(s + 1, e);
    if (s < e && *s == '}') {
        s++;
    } else {
        for (;;) {
            if (s >= e || *s != '"') return -1;
            const unsigned char *key = ++s;
            while (s < e && *s != '"' && *s != '\\' && *s >= 0x20 && *s < 0x80) s++;
            Py_ssize_t key_len = s - key;
            if (s < e && *s != '"') { /* a key with an escape or a byte >= 0x80: checked, and decoded */
                const unsigned char *after = string_value(key, e, NULL, NULL);
                if (!after) return -1;
                if (after - key > (Py_ssize_t)sizeof(r->key) - 16) { /* longer than any field's name */
                    key = (const unsigned char *)"";
                    key_len = -1;
                } else {
                    string_value(key, e, r->key, &key_len);
                    key = (const unsigned char *)r->key;
                }
                s = after - 1;
            }
            if (s >= e) return -1;
            s = ws(s + 1, e);
            if (s >= e || *s != ':') return -1;
            s = ws(s + 1, e);
            Column *c = NULL;
            for (int f = 0; f < r->n_fields; f++)
                if (r->col[f].name_len == key_len && !memcmp(r->col[f].name, key, (size_t)key_len)) c = &r->col[f];
            if (c) {
                if (c->seen) return -1;
                c->seen = 1;
                if (s < e && *s == '"') {
                    Py_ssize_t len;
                    if (!(s = string_value(s + 1, e, c->data + c->n, &len))) return -1;
                    c->n += len;
                } else if ((s = literal(s, e, "null", 4))) {
                    c->null_now = 1;
                } else {
                    return -1;
                }
            } else if (!(s = skip_value(s, e, 1))) {
                return -1;
            }
            s = ws(s, e);
            if (s >= e) return -1;
            if (*s == '}') { s++; break; }
            if (*s != ',') return -1;
            s = ws(s + 1, e);
        }
    }
    if (ws(s, e) != e) return -1; /* one object per line */
    Py_ssize_t row = r->rows;
    for (int f = 0; f < r->n_fields; f++) {
        Column *c = &r->col[f];
        if (c->n > INT32_MAX) return -1;
        c->offsets[row + 1] = (int32_t)c->n;
        if (!c->seen || c->null_now) {
            if (!c->valid) {
                c->valid = malloc((size_t)(r->max_rows / 8 + 1));
                if (!c->valid) { r->oom = 1; return -1; }
                memset(c->valid, 0xFF, (size_t)(r->max_rows / 8 + 1));
            }
            c->valid[row / 8] &= (uint8_t)~(1u << (row % 8));
            c->nulls++;
        }
    }
    r->rows++;
    return 1;
}

/* string_rows(fields, head, data, final) -> (rows, columns, head) or None (refused).
 * The lines of head + data (head: the unfinished line of the last call, no LF): every whole line, and with
 * final the last one too. columns: per field (offsets int32 bytes, UTF-8 bytes, validity bitmap bytes or
 * None, null count); head: what is left of an unfinished line, for the next call. */
PyObject *jsonrows_string_rows(PyObject *self, PyObject *args) {
    PyObject *fields;
    Py_buffer hb, db;
    int final;
    if (!PyArg_ParseTuple(args, "O!y*y*p", &PyTuple_Type, &fields, &hb, &db, &final)) return NULL;
    PyObject *ret = NULL, *objs[MAX_FIELDS][2] = {{NULL}}, *tail = NULL;
    char *joined = NULL;
    Rows r;
    memset(&r, 0, sizeof(r));
    r.n_fields = (int)PyTuple_GET_SIZE(fields);
    if (r.n_fields < 1 || r.n_fields > MAX_FIELDS) {
        PyErr_Format(PyExc_ValueError, "string_rows takes 1 to %d fields", MAX_FIELDS);
        goto done;
    }
    const unsigned char *data = db.buf, *end = data + db.len;
    const unsigned char *last_lf = end;
    while (last_lf > data && last_lf[-1] != '\n') last_lf--;
    last_lf = last_lf > data ? last_lf - 1 : NULL; /* the last LF, if any */
    if (!last_lf && !final) { /* no line ends here: all of it is still the unfinished line */
        tail = PyBytes_FromStringAndSize(NULL, hb.len + db.len);
        if (tail) {
            memcpy(PyBytes_AS_STRING(tail), hb.buf, (size_t)hb.len);
            memcpy(PyBytes_AS_STRING(tail) + hb.len, db.buf, (size_t)db.len);
            ret = Py_BuildValue("(nOO)", (Py_ssize_t)0, Py_None, tail);
        }
        goto done;
    }
    Py_ssize_t total = hb.len + db.len;
    r.max_rows = total / 2 + 2;
    for (int f = 0; f < r.n_fields; f++) {
        PyObject *name = PyTuple_GET_ITEM(fields, f);
        if (!PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "string_rows: fields must be str");
            goto done;
        }
        r.col[f].name = PyUnicode_AsUTF8AndSize(name, &r.col[f].name_len);
        if (!r.col[f].name) goto done;
        if (r.col[f].name_len > 255) {
            PyErr_SetString(PyExc_ValueError, "string_rows: a field's name is longer than 255 bytes");
            goto done;
        }
        objs[f][0] = PyBytes_FromStringAndSize(NULL, (r.max_rows + 1) * 4);
        objs[f][1] = PyBytes_FromStringAndSize(NULL, total + 16);
        if (!objs[f][0] || !objs[f][1]) goto done;
        r.col[f].offsets = (int32_t *)PyBytes_AS_STRING(objs[f][0]);
        r.col[f].data = PyBytes_AS_STRING(objs[f][1]);
        r.col[f].offsets[0] = 0;
    }
    const unsigned char *from = data, *upto = final ? end : last_lf + 1;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    if (hb.len) { /* the line begun in the last call, ended here */
        const unsigned char *lf = memchr(data, '\n', (size_t)db.len);
        Py_ssize_t part = lf ? lf - data : db.len;
        joined = malloc((size_t)(hb.len + part + 1));
        if (!joined) {
            r.oom = bad = 1;
        } else {
            memcpy(joined, hb.buf, (size_t)hb.len);
            memcpy(joined + hb.len, data, (size_t)part);
            bad = parse_line(&r, (const unsigned char *)joined, (const unsigned char *)joined + hb.len + part) < 0;
            from = lf ? lf + 1 : end;
        }
    }
    while (!bad && from < upto) {
        const unsigned char *lf = memchr(from, '\n', (size_t)(upto - from));
        const unsigned char *line_end = lf ? lf : upto;
        bad = parse_line(&r, from, line_end) < 0;
        from = lf ? lf + 1 : upto;
    }
    Py_END_ALLOW_THREADS
    if (r.oom) {
        PyErr_NoMemory();
        goto done;
    }
    if (bad) {
        Py_INCREF(Py_None);
        ret = Py_None;
        goto done;
    }
    PyObject *columns = PyTuple_New(r.n_fields);
    if (!columns) goto done;
    for (int f = 0; f < r.n_fields; f++) {
        Column *c = &r.col[f];
        if (_PyBytes_Resize(&objs[f][0], (r.rows + 1) * 4) || _PyBytes_Resize(&objs[f][1], c->n)) {
            Py_DECREF(columns);
            goto done;
        }
        PyObject *valid = c->valid ? PyBytes_FromStringAndSize((const char *)c->valid, r.rows / 8 + 1) : Py_NewRef(Py_None);
        PyObject *item = valid ? Py_BuildValue("(OONn)", objs[f][0], objs[f][1], valid, c->nulls) : NULL;
        if (!item) {
            Py_DECREF(columns);
            goto done;
        }
        PyTuple_SET_ITEM(columns, f, item);
    }
    tail = PyBytes_FromStringAndSize(final ? "" : (const char *)upto, final ? 0 : end - upto);
    if (tail) ret = Py_BuildValue("(nNO)", r.rows, columns, tail);
    else Py_DECREF(columns);
done:
    for (int f = 0; f < MAX_FIELDS; f++) {
        Py_XDECREF(objs[f][0]);
        Py_XDECREF(objs[f][1]);
        free(r.col[f].valid);
    }
    Py_XDECREF(tail);
    free(joined);
    PyBuffer_Release(&hb);
    PyBuffer_Release(&db);
    return ret;
}
