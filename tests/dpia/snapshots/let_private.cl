kernel void let_private(
    global const float* restrict m,
    global float* restrict output,
    const int M,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < M; gid1 += get_global_size(0)) {
    {
      float acc2;
      acc2 = 0.0f;
      for (int i3 = 0; i3 < N; i3 += 1) {
        acc2 = (acc2 + m[i3 + N * gid1]);
      }
      for (int i6 = 0; i6 < N; i6 += 1) {
        output[i6 + N * gid1] = (m[i6 + N * gid1] / acc2);
      }
    }
  }
}
