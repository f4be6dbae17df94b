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
      output[gid1] = ((((((((((((((((((((erf(xs[gid1]) + erfc(ys[gid1])) + tan(xs[gid1])) + asin(xs[gid1])) + acos(ys[gid1])) + atan(xs[gid1])) + sinh(xs[gid1])) + cosh(ys[gid1])) + tanh(xs[gid1])) + exp2(xs[gid1])) + expm1(ys[gid1])) + log2(common1)) + log10(common2)) + log1p(common1)) + cbrt(xs[gid1])) + rsqrt(common2)) + floor((xs[gid1] * 4.0f))) + ceil((ys[gid1] * 4.0f))) + trunc((xs[gid1] * 4.0f))) + round((ys[gid1] * 4.0f))) + (((((pow(common1, ys[gid1]) + fmod((xs[gid1] * 5.0f), common2)) + atan2(ys[gid1], xs[gid1])) + hypot(xs[gid1], ys[gid1])) + copysign(xs[gid1], ys[gid1])) + fmin(fmax(xs[gid1], (-0.5f)), 0.5f)));
    }
  }
}
