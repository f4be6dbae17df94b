float clamp01(float x) {
  return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
}
kernel void scalar_operations(
    global const float* restrict xs,
    global const float* restrict ys,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    output[gid1] = ((((xs[gid1] >= ys[gid1]) && (xs[gid1] != ys[gid1])) || (!(xs[gid1] <= ys[gid1]))) ? (fma(cos(xs[gid1]), sin(ys[gid1]), exp(fmin(xs[gid1], ys[gid1]))) + log((fabs(xs[gid1]) + 1.0f))) : clamp01(ys[gid1]));
  }
}
