/* retrievers.bm25._fastbm25: the compiled hot loops of the lucene backend (Python glue in
 * retrievers/bm25/compiled.py). Each piece equals the pure-Python path it replaces (the tests in
 * tests/retrievers/test_bm25_c_*.py check them against it). One concern per file:
 *
 *   tokenizer.c  ASCII character classes of Lucene's StandardTokenizer rules; where words are cut
 *   encoder.c    Encoder: texts -> term ids or postings (tokenize, possessives, lowercase, stopwords,
 *                stem; memoized per distinct token); types in encoder.h
 *   encode_parallel.c  the Encoder's large calls on threads, with the result of one thread
 *   porter.c     Lucene's Porter stemmer
 *   strmap.c     the string -> int32 hash map of the encoder's tables
 *   postings.c   PostingsBuilder: term ids -> term-major CSC postings with tf (counting sort)
 *   scoring.c    score_lucene: Lucene's BM25 of every posting, in float32 operations
 *   search.c     Index: an index's arrays checked once; search: per query, sum the float32 posting
 *                scores of its terms in double (a term repeated q times weighs q), round to float32,
 *                keep scores > 0, top k by (score desc, document id desc), queries on threads
 *   topk.c       sorting and top k of the int64 ranking keys (retrievers/topk.py's key)
 *   threads.c    running jobs on threads, without the GIL
 *   bindings.c   this file: the module, digest_column, stem / stem_ascii, argument helpers
 *
 * Arrays cross the boundary as bytes (out) and buffer-protocol objects (in); no numpy C API.
 * fastbm25.h declares what the files share and checks the build's assumptions at compile time. */
#include "fastbm25.h"

/* UTF-8 of a str; surrogates pass through (as "surrogatepass" encodes them). An ASCII str is read
 * in place; any other is encoded into a new bytes object, *keep, which the caller releases when done
 * (PyUnicode_AsUTF8AndSize would cache a UTF-8 copy inside every non-ASCII str of the corpus). */
const char *utf8_of(PyObject *s, Py_ssize_t *n, PyObject **keep) {
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

int get_buffer(PyObject *o, Py_buffer *view, Py_ssize_t item, const char *what) {
    if (PyObject_GetBuffer(o, view, PyBUF_SIMPLE)) return -1;
    if (view->len % item) {
        PyErr_Format(PyExc_ValueError, "%s: buffer of %zd bytes is not a whole number of %zd-byte items", what,
                     view->len, item);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}


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
    {"check_postings", check_postings, METH_VARARGS,
     "check_postings(indptr, indices, n_docs, n_threads=1): ValueError unless indptr rises from 0 to len(indices) and"
     " each term's documents are strictly ascending in [0, n_docs) (what Index's search relies on)"},
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

