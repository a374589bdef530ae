/* A string -> int32 hash map (declarations and lookups in fastbm25.h). */
#include "fastbm25.h"

void map_free(StrMap *m) {
    free(m->slots); free(m->eoff); free(m->elen); free(m->arena);
    memset(m, 0, sizeof(*m));
}

static Slot *new_slots(size_t cap) {
    Slot *slots = malloc(cap * sizeof(Slot));
    if (slots) for (size_t i = 0; i < cap; i++) slots[i].len = -1;
    return slots;
}

int map_init(StrMap *m) {
    memset(m, 0, sizeof(*m));
    m->slots = new_slots(1024);
    if (!m->slots) return -1;
    m->mask = 1023;
    return 0;
}

int map_rehash(StrMap *m, size_t cap) {
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
int map_reserve(StrMap *m, Py_ssize_t more) {
    size_t cap = m->mask + 1;
    while ((size_t)(m->n + more) * 2 > cap) cap *= 2;
    return cap > m->mask + 1 ? map_rehash(m, cap) : 0;
}

/* Adds a key known to be absent with its value; returns its entry number or -1 (out of memory). */
Py_ssize_t map_add(StrMap *m, const char *s, Py_ssize_t n, uint64_t h, int32_t val) {
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
