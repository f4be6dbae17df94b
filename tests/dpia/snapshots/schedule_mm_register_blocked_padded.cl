__attribute__((reqd_work_group_size(4, 2, 1)))
kernel void schedule_mm_register_blocked_padded(
    global const float* restrict a,
    global const float* restrict b,
    global float* restrict output,
    const int M,
    const int K,
    const int N) {
  local float tmp14[72] __attribute__((aligned(16)));
  local float tmp18[64] __attribute__((aligned(16)));
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
            float acc3_4;
            float acc3_5;
            float acc3_6;
            float acc3_7;
            {
              const int lid9 = get_local_id(1);
              {
                const int lid10 = get_local_id(0);
                acc3_0 = 0.0f;
                acc3_1 = 0.0f;
                acc3_2 = 0.0f;
                acc3_3 = 0.0f;
                acc3_4 = 0.0f;
                acc3_5 = 0.0f;
                acc3_6 = 0.0f;
                acc3_7 = 0.0f;
              }
            }
            for (int i13 = 0; i13 < K / 8; i13 += 1) {
              for (int lid15 = get_local_id(0); lid15 < 8; lid15 += 4) {
                for (int lid16 = get_local_id(1); lid16 < 9; lid16 += 2) {
                  tmp14[lid16 + 9 * lid15] = (((lid16) < (8)) ? a[lid15 + 8 * i13 + 8 * K * wg1 + K * lid16] : 0.0f);
                }
              }
              for (int lid19 = get_local_id(1); lid19 < 8; lid19 += 2) {
                for (int lid20 = get_local_id(0); lid20 < 8; lid20 += 4) {
                  tmp18[lid20 + 8 * lid19] = b[8 * wg2 + lid20 + N * lid19 + 8 * N * i13];
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid21 = get_local_id(1);
                {
                  const int lid22 = get_local_id(0);
                  {
                    float acc23_0;
                    float acc23_1;
                    float acc23_2;
                    float acc23_3;
                    float acc23_4;
                    float acc23_5;
                    float acc23_6;
                    float acc23_7;
                    acc23_0 = acc3_0;
                    acc23_1 = acc3_1;
                    acc23_2 = acc3_2;
                    acc23_3 = acc3_3;
                    acc23_4 = acc3_4;
                    acc23_5 = acc3_5;
                    acc23_6 = acc3_6;
                    acc23_7 = acc3_7;
                    for (int i26 = 0; i26 < 8; i26 += 1) {
                      {
                        float tmp27_0;
                        float tmp27_1;
                        float tmp27_2;
                        float tmp27_3;
                        tmp27_0 = tmp14[4 * lid21 + 9 * i26];
                        tmp27_1 = tmp14[4 * lid21 + 9 * i26 + 1];
                        tmp27_2 = tmp14[4 * lid21 + 9 * i26 + 2];
                        tmp27_3 = tmp14[4 * lid21 + 9 * i26 + 3];
                        {
                          float tmp29_0;
                          float tmp29_1;
                          tmp29_0 = tmp18[2 * lid22 + 8 * i26];
                          tmp29_1 = tmp18[2 * lid22 + 8 * i26 + 1];
                          acc23_0 = (acc23_0 + (tmp27_0 * tmp29_0));
                          acc23_1 = (acc23_1 + (tmp27_0 * tmp29_1));
                          acc23_2 = (acc23_2 + (tmp27_1 * tmp29_0));
                          acc23_3 = (acc23_3 + (tmp27_1 * tmp29_1));
                          acc23_4 = (acc23_4 + (tmp27_2 * tmp29_0));
                          acc23_5 = (acc23_5 + (tmp27_2 * tmp29_1));
                          acc23_6 = (acc23_6 + (tmp27_3 * tmp29_0));
                          acc23_7 = (acc23_7 + (tmp27_3 * tmp29_1));
                        }
                      }
                    }
                    acc3_0 = acc23_0;
                    acc3_1 = acc23_1;
                    acc3_2 = acc23_2;
                    acc3_3 = acc23_3;
                    acc3_4 = acc23_4;
                    acc3_5 = acc23_5;
                    acc3_6 = acc23_6;
                    acc3_7 = acc23_7;
                  }
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
            }
            {
              const int lid35 = get_local_id(1);
              {
                const int lid36 = get_local_id(0);
                output[8 * wg2 + 2 * lid36 + 8 * N * wg1 + 4 * N * lid35] = acc3_0;
                output[8 * wg2 + 2 * lid36 + 8 * N * wg1 + 4 * N * lid35 + 1] = acc3_1;
                output[8 * wg2 + 2 * lid36 + 8 * N * wg1 + 4 * N * lid35 + N] = acc3_2;
                output[8 * wg2 + 2 * lid36 + 8 * N * wg1 + 4 * N * lid35 + N + 1] = acc3_3;
                output[8 * wg2 + 2 * lid36 + 8 * N * wg1 + 4 * N * lid35 + 2 * N] = acc3_4;
                output[8 * wg2 + 2 * lid36 + 8 * N * wg1 + 4 * N * lid35 + 2 * N + 1] = acc3_5;
                output[8 * wg2 + 2 * lid36 + 8 * N * wg1 + 4 * N * lid35 + 3 * N] = acc3_6;
                output[8 * wg2 + 2 * lid36 + 8 * N * wg1 + 4 * N * lid35 + 3 * N + 1] = acc3_7;
              }
            }
          }
          barrier(CLK_LOCAL_MEM_FENCE);
        }
      }
    }
  }
}
