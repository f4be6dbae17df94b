__attribute__((reqd_work_group_size(4, 4, 1)))
kernel void schedule_mm_register_blocked(
    global const float* restrict a,
    global const float* restrict b,
    global float* restrict output,
    const int M,
    const int K,
    const int N) {
  local float tmp14[32] __attribute__((aligned(16)));
  local float tmp17[32] __attribute__((aligned(16)));
  {
    const int wg1 = get_group_id(1);
    if (wg1 < M / 8) {
      {
        const int wg2 = get_group_id(0);
        if (wg2 < N / 8) {
          {
            float acc3_0;
            float acc3_1;
            float acc3_2;
            float acc3_3;
            {
              const int lid9 = get_local_id(1);
              {
                const int lid10 = get_local_id(0);
                acc3_0 = 0.0f;
                acc3_1 = 0.0f;
                acc3_2 = 0.0f;
                acc3_3 = 0.0f;
              }
            }
            for (int i13 = 0; i13 < K / 4; i13 += 1) {
              {
                const int lid15 = get_local_id(1);
                for (int lid16 = get_local_id(0); lid16 < 8; lid16 += 4) {
                  tmp14[lid16 + 8 * lid15] = a[lid15 + 4 * i13 + 8 * K * wg1 + K * lid16];
                }
              }
              {
                const int lid18 = get_local_id(1);
                for (int lid19 = get_local_id(0); lid19 < 8; lid19 += 4) {
                  tmp17[lid19 + 8 * lid18] = b[8 * wg2 + lid19 + N * lid18 + 4 * N * i13];
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid20 = get_local_id(1);
                {
                  const int lid21 = get_local_id(0);
                  {
                    float acc22_0;
                    float acc22_1;
                    float acc22_2;
                    float acc22_3;
                    acc22_0 = acc3_0;
                    acc22_1 = acc3_1;
                    acc22_2 = acc3_2;
                    acc22_3 = acc3_3;
                    for (int i25 = 0; i25 < 4; i25 += 1) {
                      {
                        float tmp26_0;
                        float tmp26_1;
                        tmp26_0 = tmp14[2 * lid20 + 8 * i25];
                        tmp26_1 = tmp14[2 * lid20 + 8 * i25 + 1];
                        {
                          float tmp28_0;
                          float tmp28_1;
                          tmp28_0 = tmp17[2 * lid21 + 8 * i25];
                          tmp28_1 = tmp17[2 * lid21 + 8 * i25 + 1];
                          acc22_0 = (acc22_0 + (tmp26_0 * tmp28_0));
                          acc22_1 = (acc22_1 + (tmp26_0 * tmp28_1));
                          acc22_2 = (acc22_2 + (tmp26_1 * tmp28_0));
                          acc22_3 = (acc22_3 + (tmp26_1 * tmp28_1));
                        }
                      }
                    }
                    acc3_0 = acc22_0;
                    acc3_1 = acc22_1;
                    acc3_2 = acc22_2;
                    acc3_3 = acc22_3;
                  }
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
            }
            {
              const int lid34 = get_local_id(1);
              {
                const int lid35 = get_local_id(0);
                output[8 * wg2 + 2 * lid35 + 8 * N * wg1 + 2 * N * lid34] = acc3_0;
                output[8 * wg2 + 2 * lid35 + 8 * N * wg1 + 2 * N * lid34 + 1] = acc3_1;
                output[8 * wg2 + 2 * lid35 + 8 * N * wg1 + 2 * N * lid34 + N] = acc3_2;
                output[8 * wg2 + 2 * lid35 + 8 * N * wg1 + 2 * N * lid34 + N + 1] = acc3_3;
              }
            }
          }
          barrier(CLK_LOCAL_MEM_FENCE);
        }
      }
    }
  }
}
