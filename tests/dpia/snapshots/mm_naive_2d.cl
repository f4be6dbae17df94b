kernel void mm_naive_2d(
    global const float* restrict a1,
    global const float* restrict b,
    global float* restrict output,
    const int M,
    const int K,
    const int N) {
  for (int gid1 = get_global_id(1); gid1 < M; gid1 += get_global_size(1)) {
    for (int gid2 = get_global_id(0); gid2 < N; gid2 += get_global_size(0)) {
      {
        float acc3;
        acc3 = 0.0f;
        for (int i4 = 0; i4 < K; i4 += 1) {
          acc3 = (acc3 + (a1[i4 + K * gid1] * b[gid2 + N * i4]));
        }
        output[gid2 + N * gid1] = acc3;
      }
    }
  }
}
