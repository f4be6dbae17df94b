kernel void column_sums_transpose(
    global const float* restrict m,
    global float* restrict output,
    const int M,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < N; gid1 += get_global_size(0)) {
    {
      float acc2;
      acc2 = 0.0f;
      for (int i3 = 0; i3 < M; i3 += 1) {
        acc2 = (acc2 + m[gid1 + N * i3]);
      }
      output[gid1] = acc2;
    }
  }
}
