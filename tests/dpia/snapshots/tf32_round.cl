float dpia_tf32_float(float x) {
  return select(x, as_float((as_uint(x) + 0x1000u) & 0xffffe000u), isfinite(x));
}
kernel void tf32_round(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    output[gid1] = (dpia_tf32_float(xs[gid1]) * 3.0f);
  }
}
