/* The ASCII character classes of Lucene's StandardTokenizer rules, and where words may be cut:
 * separators (characters no token holds: ASCII punctuation, separators.h). The tokenizing itself
 * runs in encoder.c, which memoizes each token's term. */
#include "fastbm25.h"
#include "separators.h"

unsigned char CLS[256];

void init_classes(void) {
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
int is_separator_cp(uint32_t cp) {
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
int next_piece(const unsigned char *w, Py_ssize_t n, Py_ssize_t *i, Py_ssize_t *start, int *high) {
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
