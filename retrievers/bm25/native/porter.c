/*
 * porter.c -- the Porter stemmer as Lucene's PorterStemFilter applies it.
 *
 * Lucene's org.apache.lucene.analysis.en.PorterStemmer follows Martin Porter's reference
 * implementation of his algorithm (the ANSI C version), not the letter of the 1980 paper:
 *
 *   - words of one or two characters are left unchanged;
 *   - in step 2, (m>0) ABLI -> ABLE is replaced by (m>0) BLI -> BLE, and (m>0) LOGI -> LOG is added;
 *   - in step 1b, a double consonant other than l, s, z is undoubled whatever the letter
 *     (the paper's rule; Snowball's "porter" only undoubles b d f g m n p r t).
 *
 * This file is a self-contained implementation of that behaviour (C99; only <string.h> and
 * <stddef.h>). It keeps no global state, so it is safe to call from several threads at once.
 *
 *     int porter_stem(char *b, int len);   (declared in fastbm25.h)
 *
 * stems the lowercase word b[0..len) in place and returns its new length (never more than len).
 * The word may hold any bytes: every byte that is not a, e, i, o, u is a consonant, except that
 * y is a vowel when it follows a consonant (see porter_cons). Digits and punctuation such as
 * "e.g", "don't", "3.14" are therefore consonants, exactly as in the reference code.
 *
 * Notation (Porter's): C is a run of consonants, V a run of vowels; any word is [C](VC){m}[V],
 * and m is its "measure". In the rules below, a condition applies to the stem that is left once
 * the suffix is removed:
 *   (m>n)  the stem's measure is greater than n
 *   *v*    the stem contains a vowel
 *   *d     the stem ends with a double consonant
 *   *o     the stem ends consonant-vowel-consonant, the last consonant not w, x or y
 *   *S     the stem ends with the letter S (likewise for other letters)
 * Within a step, the rule with the longest matching suffix is the one tried; if its condition
 * fails, the step does nothing (no shorter suffix is tried).
 */
#include <stddef.h>
#include <string.h>

int porter_stem(char *b, int len);

/* The word being stemmed: b[0..k] is the current word (k is the index of its last byte), and
 * j marks the end of the stem once a suffix has matched: the stem is b[0..j], the suffix b[j+1..k]. */
typedef struct {
    char *b;
    int k;
    int j;
} porter_word;

/* Is b[i] a consonant? a, e, i, o, u are vowels; y is a consonant at the start of the word or
 * after a vowel, and a vowel after a consonant; every other byte is a consonant. */
static int porter_cons(const porter_word *w, int i)
{
    /* walk back over a run of y's: the parity of the run decides */
    int cons_at_i = 1;
    for (;;) {
        switch (w->b[i]) {
        case 'a': case 'e': case 'i': case 'o': case 'u':
            return !cons_at_i;              /* a vowel at this point of the run */
        case 'y':
            if (i == 0)
                return cons_at_i;           /* y at the start: a consonant */
            cons_at_i = !cons_at_i;         /* y is a consonant iff the byte before it is not */
            i--;
            continue;
        default:
            return cons_at_i;               /* any other byte: a consonant */
        }
    }
}

/* m: the number of VC sequences in the stem b[0..j]. */
static int porter_measure(const porter_word *w)
{
    int n = 0, i = 0, j = w->j;
    while (i <= j && porter_cons(w, i))     /* skip the leading [C] */
        i++;
    while (i <= j) {
        while (i <= j && !porter_cons(w, i))  /* a V run ... */
            i++;
        if (i > j)
            break;
        n++;                                  /* ... followed by a C run */
        while (i <= j && porter_cons(w, i))
            i++;
    }
    return n;
}

/* *v*: does the stem b[0..j] contain a vowel? */
static int porter_vowel_in_stem(const porter_word *w)
{
    for (int i = 0; i <= w->j; i++)
        if (!porter_cons(w, i))
            return 1;
    return 0;
}

/* *d: do b[i-1] and b[i] hold the same consonant? */
static int porter_double_cons(const porter_word *w, int i)
{
    return i >= 1 && w->b[i] == w->b[i - 1] && porter_cons(w, i);
}

/* *o: is b[i-2..i] consonant-vowel-consonant, with b[i] not w, x or y? */
static int porter_cvc(const porter_word *w, int i)
{
    if (i < 2 || !porter_cons(w, i) || porter_cons(w, i - 1) || !porter_cons(w, i - 2))
        return 0;
    return w->b[i] != 'w' && w->b[i] != 'x' && w->b[i] != 'y';
}

/* Does the word b[0..k] end with the suffix s (n bytes)? If so, set j to the end of the stem
 * before it. The last byte is compared first: most tries fail there. */
static inline int porter_ends_n(porter_word *w, const char *s, int n)
{
    if (n > w->k + 1 || w->b[w->k] != s[n - 1] || memcmp(w->b + w->k - n + 1, s, (size_t)n) != 0)
        return 0;
    w->j = w->k - n;
    return 1;
}

/* porter_ends(w, "literal") */
#define porter_ends(w, lit) porter_ends_n((w), (lit), (int)sizeof(lit) - 1)

/* A suffix rule with the lengths of its strings. */
typedef struct { const char *suffix; int n; const char *repl; } porter_rule;
#define PORTER_RULE(a, b) {(a), (int)sizeof(a) - 1, (b)}

/* The first of rules[0..n) whose suffix ends the word (j set to the stem's end), or NULL. Rules
 * whose last letter differs are skipped before any comparison: most fail there. */
static const porter_rule *porter_first_rule(porter_word *w, const porter_rule *rules, size_t n)
{
    for (size_t r = 0; r < n; r++)
        if (rules[r].suffix[rules[r].n - 1] == w->b[w->k] && porter_ends_n(w, rules[r].suffix, rules[r].n))
            return rules + r;
    return NULL;
}

/* Replace the suffix b[j+1..k] with s. */
static void porter_set_to(porter_word *w, const char *s)
{
    int n = (int)strlen(s);
    memcpy(w->b + w->j + 1, s, (size_t)n);
    w->k = w->j + n;
}

/* Replace the suffix b[j+1..k] with s if the stem has m > 0. */
static void porter_replace_m0(porter_word *w, const char *s)
{
    if (porter_measure(w) > 0)
        porter_set_to(w, s);
}

/* Step 1a: plurals.
 *     SSES -> SS        caresses -> caress
 *     IES  -> I         ponies -> poni, ties -> ti
 *     SS   -> SS        caress -> caress
 *     S    ->           cats -> cat
 * Step 1b: past tenses and gerunds.
 *     (m>0) EED -> EE   feed -> feed, agreed -> agree
 *     (*v*) ED  ->      plastered -> plaster, bled -> bled
 *     (*v*) ING ->      motoring -> motor, sing -> sing
 *   and when ED or ING was removed, tidy the stem up:
 *     AT -> ATE         conflat(ed) -> conflate
 *     BL -> BLE         troubl(ed) -> trouble
 *     IZ -> IZE         siz(ed) -> size
 *     (*d and not (*L or *S or *Z)) -> single letter
 *                       hopp(ing) -> hop, tann(ed) -> tan, fall(ing) -> fall,
 *                       hiss(ing) -> hiss, fizz(ed) -> fizz
 *     (m=1 and *o) -> E fail(ing) -> fail, fil(ing) -> file
 */
static void porter_step1ab(porter_word *w)
{
    if (w->b[w->k] == 's') {
        if (porter_ends(w, "sses"))
            w->k -= 2;
        else if (porter_ends(w, "ies"))
            porter_set_to(w, "i");
        else if (w->b[w->k - 1] != 's')
            w->k--;
    }
    if (porter_ends(w, "eed")) {
        if (porter_measure(w) > 0)
            w->k--;
    } else if ((porter_ends(w, "ed") || porter_ends(w, "ing")) && porter_vowel_in_stem(w)) {
        w->k = w->j;                        /* drop ED / ING; from here the stem is the word */
        if (porter_ends(w, "at"))
            porter_set_to(w, "ate");
        else if (porter_ends(w, "bl"))
            porter_set_to(w, "ble");
        else if (porter_ends(w, "iz"))
            porter_set_to(w, "ize");
        else if (porter_double_cons(w, w->k)) {
            char c = w->b[w->k];
            if (c != 'l' && c != 's' && c != 'z')
                w->k--;
        } else {
            w->j = w->k;                    /* measure the whole word */
            if (porter_measure(w) == 1 && porter_cvc(w, w->k))
                porter_set_to(w, "e");      /* j == k: appends the e */
        }
    }
}

/* Step 1c:
 *     (*v*) Y -> I      happy -> happi, sky -> sky
 */
static void porter_step1c(porter_word *w)
{
    if (porter_ends(w, "y") && porter_vowel_in_stem(w))
        w->b[w->k] = 'i';
}

/* Step 2: double suffixes to single ones, all under (m>0).
 *     ATIONAL -> ATE    relational -> relate      TIONAL  -> TION  conditional -> condition
 *     ENCI    -> ENCE   valenci -> valence        ANCI    -> ANCE  hesitanci -> hesitance
 *     IZER    -> IZE    digitizer -> digitize
 *     BLI     -> BLE    conformabli -> conformable  (the paper: ABLI -> ABLE)
 *     ALLI    -> AL     radicalli -> radical      ENTLI   -> ENT   differentli -> different
 *     ELI     -> E      vileli -> vile            OUSLI   -> OUS   analogousli -> analogous
 *     IZATION -> IZE    vietnamization -> vietnamize
 *     ATION   -> ATE    predication -> predicate  ATOR    -> ATE   operator -> operate
 *     ALISM   -> AL     feudalism -> feudal       IVENESS -> IVE   decisiveness -> decisive
 *     FULNESS -> FUL    hopefulness -> hopeful    OUSNESS -> OUS   callousness -> callous
 *     ALITI   -> AL     formaliti -> formal       IVITI   -> IVE   sensitiviti -> sensitive
 *     BILITI  -> BLE    sensibiliti -> sensible
 *     LOGI    -> LOG    archaeologi -> archaeolog (not in the paper)
 * The rules are grouped by the word's last-but-one letter; the first suffix of the group that
 * matches decides (longer suffixes are listed before the shorter ones they end with).
 */
static void porter_step2(porter_word *w)
{
    static const porter_rule rules[] = {
        PORTER_RULE("ational", "ate"), PORTER_RULE("tional", "tion"),
        PORTER_RULE("enci", "ence"), PORTER_RULE("anci", "ance"),
        PORTER_RULE("izer", "ize"),
        PORTER_RULE("bli", "ble"), PORTER_RULE("alli", "al"), PORTER_RULE("entli", "ent"), PORTER_RULE("eli", "e"),
        PORTER_RULE("ousli", "ous"),
        PORTER_RULE("ization", "ize"), PORTER_RULE("ation", "ate"), PORTER_RULE("ator", "ate"),
        PORTER_RULE("alism", "al"), PORTER_RULE("iveness", "ive"), PORTER_RULE("fulness", "ful"),
        PORTER_RULE("ousness", "ous"),
        PORTER_RULE("aliti", "al"), PORTER_RULE("iviti", "ive"), PORTER_RULE("biliti", "ble"),
        PORTER_RULE("logi", "log"),
    };
    if (w->k == 0)
        return;
    const porter_rule *rule = porter_first_rule(w, rules, sizeof rules / sizeof rules[0]);
    if (rule) /* no two suffixes above match the same word */
        porter_replace_m0(w, rule->repl);
}

/* Step 3: all under (m>0).
 *     ICATE -> IC       triplicate -> triplic
 *     ATIVE ->          formative -> form
 *     ALIZE -> AL       formalize -> formal
 *     ICITI -> IC       electriciti -> electric
 *     ICAL  -> IC       electrical -> electric
 *     FUL   ->          hopeful -> hope
 *     NESS  ->          goodness -> good
 */
static void porter_step3(porter_word *w)
{
    static const porter_rule rules[] = {
        PORTER_RULE("icate", "ic"), PORTER_RULE("ative", ""), PORTER_RULE("alize", "al"), PORTER_RULE("iciti", "ic"),
        PORTER_RULE("ical", "ic"), PORTER_RULE("ful", ""), PORTER_RULE("ness", ""),
    };
    const porter_rule *rule = porter_first_rule(w, rules, sizeof rules / sizeof rules[0]);
    if (rule) /* no two suffixes above match the same word */
        porter_replace_m0(w, rule->repl);
}

/* Step 4: drop a suffix when the stem has (m>1).
 *     AL    revival -> reviv           ANCE  allowance -> allow       ENCE  inference -> infer
 *     ER    airliner -> airlin         IC    gyroscopic -> gyroscop   ABLE  adjustable -> adjust
 *     IBLE  defensible -> defens       ANT   irritant -> irrit        EMENT replacement -> replac
 *     MENT  adjustment -> adjust       ENT   dependent -> depend
 *     (*S or *T) ION                   adoption -> adopt
 *     OU    homologou -> homolog       ISM   communism -> commun      ATE   activate -> activ
 *     ITI   angulariti -> angular      OUS   homologous -> homolog    IVE   effective -> effect
 *     IZE   bowdlerize -> bowdler
 * EMENT is tried before MENT, and MENT before ENT; when the longest one fails (m<=1), nothing
 * is removed. ION counts as a match only when the stem ends in s or t.
 */
static void porter_step4(porter_word *w)
{
    static const porter_rule suffixes[] = {
        PORTER_RULE("al", ""), PORTER_RULE("ance", ""), PORTER_RULE("ence", ""), PORTER_RULE("er", ""),
        PORTER_RULE("ic", ""), PORTER_RULE("able", ""), PORTER_RULE("ible", ""), PORTER_RULE("ant", ""),
        PORTER_RULE("ement", ""), PORTER_RULE("ment", ""), PORTER_RULE("ent", ""), PORTER_RULE("ion", ""),
        PORTER_RULE("ou", ""), PORTER_RULE("ism", ""), PORTER_RULE("ate", ""), PORTER_RULE("iti", ""),
        PORTER_RULE("ous", ""), PORTER_RULE("ive", ""), PORTER_RULE("ize", ""),
    };
    if (w->k == 0)
        return;
    const porter_rule *rule = porter_first_rule(w, suffixes, sizeof suffixes / sizeof suffixes[0]);
    if (!rule)
        return;
    if (rule->suffix[0] == 'i' && rule->suffix[1] == 'o') { /* ION */
        if (w->j < 0 || (w->b[w->j] != 's' && w->b[w->j] != 't'))
            return;
    }
    if (porter_measure(w) > 1)
        w->k = w->j;
}

/* Step 5a:
 *     (m>1) E ->             probate -> probat, rate -> rate
 *     (m=1 and not *o) E ->  cease -> ceas
 * Step 5b:
 *     (m>1 and *d and *L) -> single letter   controll -> control, roll -> roll
 * (m is measured on the whole word, the final e included, which does not change it.)
 */
static void porter_step5(porter_word *w)
{
    w->j = w->k;
    if (w->b[w->k] == 'e') {
        int m = porter_measure(w);
        if (m > 1 || (m == 1 && !porter_cvc(w, w->k - 1)))
            w->k--;
    }
    if (w->b[w->k] == 'l' && porter_double_cons(w, w->k) && porter_measure(w) > 1)
        w->k--;
}

/* Stem the lowercase word b[0..len) in place; returns the new length (<= len). */
int porter_stem(char *b, int len)
{
    porter_word w;
    if (len <= 2)                           /* one or two characters: left as they are */
        return len;
    w.b = b;
    w.k = len - 1;
    w.j = 0;
    porter_step1ab(&w);
    porter_step1c(&w);
    porter_step2(&w);
    porter_step3(&w);
    porter_step4(&w);
    porter_step5(&w);
    return w.k + 1;
}

