kernel void select_cast(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    output[gid1] = ((xs[gid1] < 0.0f) ? ((float)((int)(xs[gid1] * 10.0f))) : sqrt(xs[gid1]));
  }
}
