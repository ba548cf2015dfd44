#include "dtype.h"

#include <math.h>
#include <string.h>

static const char *const names[] = {"bf16", "fp16", "fp32"};

const char *dtype_name(dtype_t t) { return names[t]; }

int dtype_parse(const char *s, dtype_t *out)
{
    for (int i = 0; i < 3; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (dtype_t)i;
            return 0;
        }
    }
    return -1;
}

size_t dtype_size(dtype_t t) { return t == DTYPE_FP32 ? 4 : 2; }

/* bf16 keeps 8 significant bits, so one output rounding alone is up to 2^-8 relative;
 * fp16 keeps 11 (2^-11); fp32 results differ from the double reference by accumulation
 * order only. The bounds leave room for a few roundings, and catch any real bug (a wrong
 * index or an unwritten element gives errors of order 1). */
double dtype_tolerance(dtype_t t)
{
    switch (t) {
    case DTYPE_BF16: return 1e-2;
    case DTYPE_FP16: return 2e-3;
    default: return 1e-5;
    }
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t float_to_bf16(float f)
{
    uint32_t u = float_bits(f);
    if (isnan(f)) return (uint16_t)((u >> 16) | 0x40); /* stay NaN after truncation */
    u += 0x7FFF + ((u >> 16) & 1);                     /* round half to even */
    return (uint16_t)(u >> 16);
}

float bf16_to_float(uint16_t h) { return bits_float((uint32_t)h << 16); }

uint16_t float_to_fp16(float f)
{
    uint32_t u = float_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t abs = u & 0x7FFFFFFF;
    if (abs > 0x7F800000) return sign | 0x7E00; /* NaN */
    if (abs >= 0x477FF000) return sign | 0x7C00; /* rounds to >= 65520: infinity */
    if (abs < 0x38800000) {                      /* below 2^-14: subnormal or zero */
        /* Scale so the subnormal's integer mantissa appears, then round to nearest even. */
        float scaled = bits_float(abs) * 16777216.0f; /* * 2^24 */
        return sign | (uint16_t)lrintf(scaled);
    }
    uint32_t mant = abs & 0x7FFFFF;
    uint32_t exp = (abs >> 23) - 127 + 15;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1FFF;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++; /* carries into the exponent */
    return sign | (uint16_t)h;
}

float fp16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1F;
    uint32_t mant = h & 0x3FF;
    if (exp == 0) { /* zero or subnormal: mant * 2^-24 */
        float v = (float)mant / 16777216.0f;
        return sign ? -v : v;
    }
    if (exp == 31) return bits_float(sign | 0x7F800000 | (mant << 13));
    return bits_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

void dtype_round_and_pack(dtype_t t, float *values, void *dst, size_t n)
{
    if (t == DTYPE_FP32) {
        memcpy(dst, values, n * sizeof(float));
        return;
    }
    uint16_t *out = dst;
    for (size_t i = 0; i < n; i++) {
        out[i] = t == DTYPE_BF16 ? float_to_bf16(values[i]) : float_to_fp16(values[i]);
        values[i] = t == DTYPE_BF16 ? bf16_to_float(out[i]) : fp16_to_float(out[i]);
    }
}

void dtype_unpack(dtype_t t, const void *src, float *dst, size_t n)
{
    if (t == DTYPE_FP32) {
        memcpy(dst, src, n * sizeof(float));
        return;
    }
    const uint16_t *in = src;
    for (size_t i = 0; i < n; i++) dst[i] = t == DTYPE_BF16 ? bf16_to_float(in[i]) : fp16_to_float(in[i]);
}
