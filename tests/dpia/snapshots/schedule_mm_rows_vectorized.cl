kernel void schedule_mm_rows_vectorized_0(
    global const float* restrict a,
    global const float* restrict b,
    global float* restrict output,
    global float* restrict tmp1,
    const int M,
    const int K,
    const int N) {
  for (int gid4 = get_global_id(1); gid4 < N / 16; gid4 += get_global_size(1)) {
    for (int gid5 = get_global_id(0); gid5 < K; gid5 += get_global_size(0)) {
      for (int i6 = 0; i6 < 16; i6 += 1) {
        tmp1[i6 + 16 * gid5 + 16 * K * gid4] = b[i6 + 16 * gid4 + N * gid5];
      }
    }
  }
}

kernel void schedule_mm_rows_vectorized_1(
    global const float* restrict a,
    global const float* restrict b,
    global float* restrict output,
    global float* restrict tmp1,
    const int M,
    const int K,
    const int N) {
  for (int gid7 = get_global_id(1); gid7 < M / 2; gid7 += get_global_size(1)) {
    for (int gid10 = get_global_id(0); gid10 < N / 16; gid10 += get_global_size(0)) {
      {
        float8 acc11_0;
        float8 acc11_1;
        float8 acc11_2;
        float8 acc11_3;
        acc11_0 = ((float8)(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
        acc11_1 = ((float8)(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
        acc11_2 = ((float8)(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
        acc11_3 = ((float8)(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
        for (int i17 = 0; i17 < K; i17 += 1) {
          acc11_0 = (acc11_0 + (((float8)a[i17 + 2 * K * gid7]) * ((global const float8*)tmp1)[2 * i17 + 2 * K * gid10]));
          acc11_1 = (acc11_1 + (((float8)a[i17 + 2 * K * gid7]) * ((global const float8*)tmp1)[2 * i17 + 2 * K * gid10 + 1]));
          acc11_2 = (acc11_2 + (((float8)a[i17 + 2 * K * gid7 + K]) * ((global const float8*)tmp1)[2 * i17 + 2 * K * gid10]));
          acc11_3 = (acc11_3 + (((float8)a[i17 + 2 * K * gid7 + K]) * ((global const float8*)tmp1)[2 * i17 + 2 * K * gid10 + 1]));
        }
        ((global float8*)output)[2 * gid10 + (N / 4) * gid7] = acc11_0;
        ((global float8*)output)[2 * gid10 + 1 + (N / 4) * gid7] = acc11_1;
        ((global float8*)output)[2 * gid10 + N / 8 + (N / 4) * gid7] = acc11_2;
        ((global float8*)output)[2 * gid10 + 1 + N / 8 + (N / 4) * gid7] = acc11_3;
      }
    }
  }
}
