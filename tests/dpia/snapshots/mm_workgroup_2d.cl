kernel void mm_workgroup_2d(
    global const float* restrict a1,
    global const float* restrict b,
    global float* restrict output,
    const int M,
    const int K,
    const int N) {
  {
    const int wg1 = get_group_id(1);
    if (wg1 < M / 4) {
      {
        const int wg2 = get_group_id(0);
        if (wg2 < N / 4) {
          for (int lid3 = get_local_id(0); lid3 < 4; lid3 += get_local_size(0)) {
            for (int lid4 = get_local_id(1); lid4 < 4; lid4 += get_local_size(1)) {
              {
                float acc5;
                acc5 = 0.0f;
                for (int i6 = 0; i6 < K; i6 += 1) {
                  acc5 = (acc5 + (a1[i6 + 4 * K * wg1 + K * lid4] * b[4 * wg2 + lid3 + N * i6]));
                }
                output[4 * wg2 + lid3 + 4 * N * wg1 + N * lid4] = acc5;
              }
            }
          }
        }
      }
    }
  }
}
