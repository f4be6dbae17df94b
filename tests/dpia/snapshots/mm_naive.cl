kernel void mm_naive(
    global const float* restrict a1,
    global const float* restrict b,
    global float* restrict output,
    const int M,
    const int K,
    const int N) {
  for (int gid1 = get_global_id(0); gid1 < M; gid1 += get_global_size(0)) {
    for (int i2 = 0; i2 < N; i2 += 1) {
      {
        float acc3;
        acc3 = 0.0f;
        for (int i4 = 0; i4 < K; i4 += 1) {
          acc3 = (acc3 + (a1[i4 + K * gid1] * b[i2 + N * i4]));
        }
        output[i2 + N * gid1] = acc3;
      }
    }
  }
}
