kernel void split_join_views(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N / 8; gid1 += get_global_size(0)) {
    for (int i3 = 0; i3 < 8; i3 += 1) {
      output[i3 + 8 * gid1] = (xs[i3 + 8 * gid1] * xs[i3 + 8 * gid1]);
    }
  }
}
