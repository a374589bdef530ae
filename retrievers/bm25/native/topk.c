/* Sorting and top k of int64 keys. A key is retrievers/topk.py's: positive float32 score bits << 32
 * | the document id's rank in string order, so integer order is (score desc, id desc). */
#include "fastbm25.h"

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

void sort_i32(int32_t *a, Py_ssize_t n) {
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
void top_sorted(int64_t *a, int64_t *tmp, Py_ssize_t n, Py_ssize_t k) {
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
