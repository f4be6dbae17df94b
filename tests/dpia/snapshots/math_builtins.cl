float dpia_erfc_float(float x) {
  float a = fabs(x);
  float r = ((float)(1.0f)) / (a + ((float)(2.0f)));
  float q = (a - ((float)(2.0f))) * r;
  q = fma(r, fma(q, -a, fma(q + ((float)(1.0f)), ((float)(-2.0f)), a)), q);  /* (a - 2) / (a + 2), refined */
  float p = ((float)(-0x1.a49672p-12f));
  p = fma(p, q, ((float)(-0x1.42a72ap-10f)));
  p = fma(p, q, ((float)(0x1.585bf0p-10f)));
  p = fma(p, q, ((float)(0x1.1addf4p-7f)));
  p = fma(p, q, ((float)(-0x1.081a20p-7f)));
  p = fma(p, q, ((float)(-0x1.bc0b0ep-5f)));
  p = fma(p, q, ((float)(0x1.4ffc3cp-3f)));
  p = fma(p, q, ((float)(-0x1.540846p-3f)));
  p = fma(p, q, ((float)(-0x1.7bf616p-4f)));
  p = fma(p, q, ((float)(0x1.46e80ep+0f)));
  float d = fma(((float)(2.0f)), a, ((float)(1.0f)));
  float inv = ((float)(1.0f)) / d;
  float y = p * inv;
  y = fma(fma(-y, d, p), inv, y);  /* p / (1 + 2a), refined */
  float s = a * a;
  float e = exp(-s);
  y = y * fma(e, -fma(a, a, -s), e);  /* exp(-a^2) = exp(-s) (1 - (a^2 - s)) */
  y = select(y, ((float)(0.0f)), a > ((float)(10.0546f)));  /* NaN stays NaN */
  return select(y, ((float)(2.0f)) - y, x < ((float)(0.0f)));
}
kernel void math_builtins(
    global const float* restrict xs,
    global const float* restrict ys,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    {
      float common1;
      float common2;
      common1 = (fabs(xs[gid1]) + 0.5f);
      common2 = (fabs(ys[gid1]) + 0.25f);
      output[gid1] = ((((((((((((((((((((erf(xs[gid1]) + dpia_erfc_float(ys[gid1])) + tan(xs[gid1])) + asin(xs[gid1])) + acos(ys[gid1])) + atan(xs[gid1])) + sinh(xs[gid1])) + cosh(ys[gid1])) + tanh(xs[gid1])) + exp2(xs[gid1])) + expm1(ys[gid1])) + log2(common1)) + log10(common2)) + log1p(common1)) + cbrt(xs[gid1])) + rsqrt(common2)) + floor((xs[gid1] * 4.0f))) + ceil((ys[gid1] * 4.0f))) + trunc((xs[gid1] * 4.0f))) + round((ys[gid1] * 4.0f))) + (((((pow(common1, ys[gid1]) + fmod((xs[gid1] * 5.0f), common2)) + atan2(ys[gid1], xs[gid1])) + hypot(xs[gid1], ys[gid1])) + copysign(xs[gid1], ys[gid1])) + fmin(fmax(xs[gid1], (-0.5f)), 0.5f)));
    }
  }
}
