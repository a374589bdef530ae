/* Python's repr of a float, without Python: for formatting a run's scores on threads.
 *
 * CPython's repr (PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0)) writes the shortest decimal
 * digits that read back as x (David Gay's dtoa, mode 0), laid out as: exponent notation when the
 * decimal exponent e (x = d.ddd * 10^e) is below -4 or at least 16 ("1e-05", "1.5e+16": at least
 * two exponent digits, always signed), else positional with at least one digit after the point
 * ("0.0001", "3.0", "123.25"); "inf", "-inf", "nan". Its dtoa is not thread-safe (static freelists
 * guarded by the GIL), so it cannot format on threads. std::to_chars (C++17; libstdc++ implements it
 * with Ryu) gives the same shortest digits (checked against repr on hundreds of millions of values:
 * tests/formats/test_shortest_repr.py and benchmarks/shortest_repr_check.py); this file lays them
 * out as repr does. */
#include <charconv>
#include <cmath>
#include <cstring>

extern "C" int harness_shortest_repr(double x, char *out);

/* Writes repr(x) to out (room for 32 bytes; it takes at most 24) and returns its length. */
int harness_shortest_repr(double x, char *out)
{
    if (std::isnan(x)) {
        std::memcpy(out, "nan", 3);
        return 3;
    }
    if (std::isinf(x)) {
        if (x < 0) {
            std::memcpy(out, "-inf", 4);
            return 4;
        }
        std::memcpy(out, "inf", 3);
        return 3;
    }
    char buf[48];
    std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
    /* buf: [-]d[.ddd]e(+|-)dd[d] */
    const char *p = buf, *end = r.ptr;
    char *o = out;
    if (*p == '-') {
        *o++ = '-';
        p++;
    }
    char digits[20];
    int n = 0;
    while (p < end && *p != 'e') {
        if (*p != '.')
            digits[n++] = *p;
        p++;
    }
    int e = 0, negative_e = 0;
    if (p < end) { /* 'e' */
        p++;
        if (*p == '-' || *p == '+')
            negative_e = *p++ == '-';
        while (p < end)
            e = e * 10 + (*p++ - '0');
        if (negative_e)
            e = -e;
    }
    if (e < -4 || e >= 16) { /* d[.ddd]e(+|-)XX */
        *o++ = digits[0];
        if (n > 1) {
            *o++ = '.';
            std::memcpy(o, digits + 1, (size_t)(n - 1));
            o += n - 1;
        }
        *o++ = 'e';
        *o++ = e < 0 ? '-' : '+';
        int a = e < 0 ? -e : e;
        if (a >= 100) {
            *o++ = (char)('0' + a / 100);
            a %= 100;
            *o++ = (char)('0' + a / 10);
            *o++ = (char)('0' + a % 10);
        } else {
            *o++ = (char)('0' + a / 10);
            *o++ = (char)('0' + a % 10);
        }
        return (int)(o - out);
    }
    int point = e + 1; /* digits before the decimal point (<= 0: zeros after it first) */
    if (point <= 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = point; i < 0; i++)
            *o++ = '0';
        std::memcpy(o, digits, (size_t)n);
        o += n;
    } else if (point < n) {
        std::memcpy(o, digits, (size_t)point);
        o += point;
        *o++ = '.';
        std::memcpy(o, digits + point, (size_t)(n - point));
        o += n - point;
    } else {
        std::memcpy(o, digits, (size_t)n);
        o += n;
        for (int i = n; i < point; i++)
            *o++ = '0';
        *o++ = '.';
        *o++ = '0';
    }
    return (int)(o - out);
}
