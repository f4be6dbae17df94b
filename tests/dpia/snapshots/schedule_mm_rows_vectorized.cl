kernel void schedule_mm_rows_vectorized_0(
    global const float* restrict a,
    global const float* restrict b,
    global float* restrict output,
    global float* restrict tmp1,
    const int M,
    const int K,
    const int N) {
  for (int gid2 = get_global_id(1); gid2 < K; gid2 += get_global_size(1)) {
    for (int gid3 = get_global_id(0); gid3 < N; gid3 += get_global_size(0)) {
      tmp1[(gid3 % 16) + 16 * gid2 + 16 * K * (gid3 / 16)] = b[gid3 + N * gid2];
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
  for (int gid4 = get_global_id(1); gid4 < M / 2; gid4 += get_global_size(1)) {
    for (int gid7 = get_global_id(0); gid7 < N / 16; gid7 += get_global_size(0)) {
      {
        float8 acc8_0;
        float8 acc8_1;
        float8 acc8_2;
        float8 acc8_3;
        acc8_0 = ((float8)(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
        acc8_1 = ((float8)(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
        acc8_2 = ((float8)(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
        acc8_3 = ((float8)(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
        for (int i14 = 0; i14 < K; i14 += 1) {
          acc8_0 = (acc8_0 + (((float8)a[i14 + 2 * K * gid4]) * ((global const float8*)tmp1)[2 * i14 + 2 * K * gid7]));
          acc8_1 = (acc8_1 + (((float8)a[i14 + 2 * K * gid4]) * ((global const float8*)tmp1)[2 * i14 + 2 * K * gid7 + 1]));
          acc8_2 = (acc8_2 + (((float8)a[i14 + 2 * K * gid4 + K]) * ((global const float8*)tmp1)[2 * i14 + 2 * K * gid7]));
          acc8_3 = (acc8_3 + (((float8)a[i14 + 2 * K * gid4 + K]) * ((global const float8*)tmp1)[2 * i14 + 2 * K * gid7 + 1]));
        }
        ((global float8*)output)[2 * gid7 + (N / 4) * gid4] = acc8_0;
        ((global float8*)output)[2 * gid7 + 1 + (N / 4) * gid4] = acc8_1;
        ((global float8*)output)[2 * gid7 + N / 8 + (N / 4) * gid4] = acc8_2;
        ((global float8*)output)[2 * gid7 + 1 + N / 8 + (N / 4) * gid4] = acc8_3;
      }
    }
  }
}
