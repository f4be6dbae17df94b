kernel void matrix_map_seq(
    global const float* restrict m,
    global float* restrict output,
    const int M,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < M; gid1 += get_global_size(0)) {
    for (int i3 = 0; i3 < N; i3 += 1) {
      output[i3 + N * gid1] = (fabs(m[i3 + N * gid1]) - 0.5f);
    }
  }
}
