// gelu.cuh (03_simple_mlp): the one GELU formula every kernel of the MLP stages uses.
//
// The tanh approximation, as PyTorch's gelu(approximate="tanh"):
//   gelu(x) = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
// computed in fp32 whatever the storage type, in the equivalent form
//   gelu(x) = x / (1 + exp(-2u))          since 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u))
// The direct form with the accurate tanhf is a branchy libdevice routine of a few dozen
// instructions per element, enough to make the GELU kernel compute-bound on an H200 (it moved
// bytes markedly slower than the multiply kernel). This form costs one fast exponential
// (__expf: the ex2.approx instruction, about 2 ulp) and one fast division (__fdividef: a
// reciprocal and a multiply, about 2 ulp), and it is more accurate where it matters: 1 + tanh(u)
// cancels for negative x, 1 / (1 + exp(-2u)) does not. tanh.approx.f32 would be cheaper still,
// but its relative error (about 2^-11) is as large as an fp16 rounding. The limits come out
// right: for very negative x the denominator passes 2^126 or overflows and __fdividef returns 0
// (gelu is below 1e-37 there), for very positive x exp underflows to 0 and gelu(x) = x.
// Kept in its own header so that 04_fused_mlp's fused kernels compute exactly the same function.
#ifndef GELU_CUH
#define GELU_CUH

__device__ __forceinline__ float gelu_tanh(float x)
{
    const float k0 = 0.7978845608028654f; // sqrt(2 / pi)
    const float k1 = 0.044715f;
    const float u = k0 * (x + k1 * x * x * x);
    return __fdividef(x, 1.0f + __expf(-2.0f * u));
}

#endif
