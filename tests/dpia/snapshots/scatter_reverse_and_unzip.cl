kernel void scatter_reverse_and_unzip(
    global const float* restrict xs,
    global const float* restrict ys,
    global float* restrict output,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    output[-gid1 + N - 1] = (xs[gid1] - (ys[gid1] * 2.0f));
  }
}
