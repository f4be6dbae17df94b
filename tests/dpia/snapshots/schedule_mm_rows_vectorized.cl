kernel void schedule_mm_rows_vectorized(
    global const float* restrict a,
    global const float* restrict b,
    global float* restrict output,
    const int M,
    const int K,
    const int N) {
  for (int gid1 = get_global_id(1); gid1 < M / 2; gid1 += get_global_size(1)) {
    for (int gid2 = get_global_id(0); gid2 < N / 16; gid2 += get_global_size(0)) {
      {
        float8 acc3_0;
        float8 acc3_1;
        float8 acc3_2;
        float8 acc3_3;
        acc3_0 = ((float8)(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
        acc3_1 = ((float8)(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
        acc3_2 = ((float8)(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
        acc3_3 = ((float8)(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
        for (int i9 = 0; i9 < K; i9 += 1) {
          acc3_0 = (acc3_0 + (((float8)a[i9 + 2 * K * gid1]) * ((global const float8*)b)[2 * gid2 + (N / 8) * i9]));
          acc3_1 = (acc3_1 + (((float8)a[i9 + 2 * K * gid1]) * ((global const float8*)b)[2 * gid2 + 1 + (N / 8) * i9]));
          acc3_2 = (acc3_2 + (((float8)a[i9 + 2 * K * gid1 + K]) * ((global const float8*)b)[2 * gid2 + (N / 8) * i9]));
          acc3_3 = (acc3_3 + (((float8)a[i9 + 2 * K * gid1 + K]) * ((global const float8*)b)[2 * gid2 + 1 + (N / 8) * i9]));
        }
        ((global float8*)output)[2 * gid2 + (N / 4) * gid1] = acc3_0;
        ((global float8*)output)[2 * gid2 + 1 + (N / 4) * gid1] = acc3_1;
        ((global float8*)output)[2 * gid2 + N / 8 + (N / 4) * gid1] = acc3_2;
        ((global float8*)output)[2 * gid2 + 1 + N / 8 + (N / 4) * gid1] = acc3_3;
      }
    }
  }
}
