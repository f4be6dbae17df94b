__attribute__((reqd_work_group_size(4, 4, 1)))
kernel void schedule_mm_tiled_local_memory(
    global const float* restrict a,
    global const float* restrict b,
    global float* restrict output,
    const int M,
    const int K,
    const int N) {
  local float tmp9[16] __attribute__((aligned(16)));
  local float tmp12[16] __attribute__((aligned(16)));
  {
    const int wg1 = get_group_id(1);
    if (wg1 < M / 4) {
      {
        const int wg2 = get_group_id(0);
        if (wg2 < N / 4) {
          {
            float acc3;
            {
              const int lid6 = get_local_id(1);
              {
                const int lid7 = get_local_id(0);
                acc3 = 0.0f;
              }
            }
            for (int i8 = 0; i8 < K / 4; i8 += 1) {
              {
                const int lid10 = get_local_id(0);
                {
                  const int lid11 = get_local_id(1);
                  tmp9[lid11 + 4 * lid10] = a[lid10 + 4 * i8 + 4 * K * wg1 + K * lid11];
                }
              }
              {
                const int lid13 = get_local_id(1);
                {
                  const int lid14 = get_local_id(0);
                  tmp12[lid14 + 4 * lid13] = b[4 * wg2 + lid14 + N * lid13 + 4 * N * i8];
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid15 = get_local_id(1);
                {
                  const int lid16 = get_local_id(0);
                  {
                    float acc17;
                    acc17 = 0.0f;
                    for (int i18 = 0; i18 < 4; i18 += 1) {
                      acc17 = (acc17 + (tmp9[lid15 + 4 * i18] * tmp12[lid16 + 4 * i18]));
                    }
                    acc3 = (acc3 + acc17);
                  }
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
            }
            {
              const int lid19 = get_local_id(1);
              {
                const int lid20 = get_local_id(0);
                output[4 * wg2 + lid20 + 4 * N * wg1 + N * lid19] = acc3;
              }
            }
          }
          barrier(CLK_LOCAL_MEM_FENCE);
        }
      }
    }
  }
}
