kernel void pairs_out(
    global const float* restrict xs,
    global float* restrict output_0,
    global float* restrict output_1,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    output_0[gid1] = xs[gid1];
    output_1[gid1] = (xs[gid1] * 2.0f);
  }
}
