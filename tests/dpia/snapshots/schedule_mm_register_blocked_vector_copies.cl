__attribute__((reqd_work_group_size(2, 4, 1)))
kernel void schedule_mm_register_blocked_vector_copies(
    global const float* restrict a,
    global const float* restrict b,
    global float* restrict output,
    const int M,
    const int K,
    const int N) {
  local float tmp14[64] __attribute__((aligned(16)));
  local float tmp18[128] __attribute__((aligned(16)));
  {
    const int wg1 = get_group_id(1);
    if (wg1 < M / 8) {
      {
        const int wg2 = get_group_id(0);
        if (wg2 < N / 16) {
          {
            float acc3_0;
            float acc3_1;
            float acc3_2;
            float acc3_3;
            float acc3_4;
            float acc3_5;
            float acc3_6;
            float acc3_7;
            float acc3_8;
            float acc3_9;
            float acc3_10;
            float acc3_11;
            float acc3_12;
            float acc3_13;
            float acc3_14;
            float acc3_15;
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
                acc3_8 = 0.0f;
                acc3_9 = 0.0f;
                acc3_10 = 0.0f;
                acc3_11 = 0.0f;
                acc3_12 = 0.0f;
                acc3_13 = 0.0f;
                acc3_14 = 0.0f;
                acc3_15 = 0.0f;
              }
            }
            for (int i13 = 0; i13 < K / 8; i13 += 1) {
              for (int lid15 = get_local_id(1); lid15 < 8; lid15 += 4) {
                {
                  const int lid16 = get_local_id(0);
                  tmp14[32 * lid16 + lid15] = ((global const float4*)a)[lid16 + 2 * i13 + 2 * K * wg1 + (K / 4) * lid15].s0;
                  tmp14[32 * lid16 + lid15 + 8] = ((global const float4*)a)[lid16 + 2 * i13 + 2 * K * wg1 + (K / 4) * lid15].s1;
                  tmp14[32 * lid16 + lid15 + 16] = ((global const float4*)a)[lid16 + 2 * i13 + 2 * K * wg1 + (K / 4) * lid15].s2;
                  tmp14[32 * lid16 + lid15 + 24] = ((global const float4*)a)[lid16 + 2 * i13 + 2 * K * wg1 + (K / 4) * lid15].s3;
                }
              }
              for (int lid19 = get_local_id(1); lid19 < 16; lid19 += 4) {
                {
                  const int lid20 = get_local_id(0);
                  ((local float4*)tmp18)[(lid19 % 2) + 4 * (lid19 / 2) + 2 * lid20] = ((global const float4*)b)[2 * (lid19 % 2) + 4 * wg2 + lid20 + 2 * N * i13 + (N / 4) * (lid19 / 2)];
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid25 = get_local_id(1);
                {
                  const int lid26 = get_local_id(0);
                  {
                    float acc27_0;
                    float acc27_1;
                    float acc27_2;
                    float acc27_3;
                    float acc27_4;
                    float acc27_5;
                    float acc27_6;
                    float acc27_7;
                    float acc27_8;
                    float acc27_9;
                    float acc27_10;
                    float acc27_11;
                    float acc27_12;
                    float acc27_13;
                    float acc27_14;
                    float acc27_15;
                    acc27_0 = acc3_0;
                    acc27_1 = acc3_1;
                    acc27_2 = acc3_2;
                    acc27_3 = acc3_3;
                    acc27_4 = acc3_4;
                    acc27_5 = acc3_5;
                    acc27_6 = acc3_6;
                    acc27_7 = acc3_7;
                    acc27_8 = acc3_8;
                    acc27_9 = acc3_9;
                    acc27_10 = acc3_10;
                    acc27_11 = acc3_11;
                    acc27_12 = acc3_12;
                    acc27_13 = acc3_13;
                    acc27_14 = acc3_14;
                    acc27_15 = acc3_15;
                    for (int i30 = 0; i30 < 8; i30 += 1) {
                      {
                        float tmp31_0;
                        float tmp31_1;
                        tmp31_0 = tmp14[2 * lid25 + 8 * i30];
                        tmp31_1 = tmp14[2 * lid25 + 8 * i30 + 1];
                        {
                          float tmp33_0;
                          float tmp33_1;
                          float tmp33_2;
                          float tmp33_3;
                          float tmp33_4;
                          float tmp33_5;
                          float tmp33_6;
                          float tmp33_7;
                          tmp33_0 = tmp18[4 * lid26 + 16 * i30];
                          tmp33_1 = tmp18[4 * lid26 + 16 * i30 + 1];
                          tmp33_2 = tmp18[4 * lid26 + 16 * i30 + 2];
                          tmp33_3 = tmp18[4 * lid26 + 16 * i30 + 3];
                          tmp33_4 = tmp18[4 * lid26 + 16 * i30 + 8];
                          tmp33_5 = tmp18[4 * lid26 + 16 * i30 + 9];
                          tmp33_6 = tmp18[4 * lid26 + 16 * i30 + 10];
                          tmp33_7 = tmp18[4 * lid26 + 16 * i30 + 11];
                          acc27_0 = (acc27_0 + (tmp31_0 * tmp33_0));
                          acc27_1 = (acc27_1 + (tmp31_0 * tmp33_1));
                          acc27_2 = (acc27_2 + (tmp31_0 * tmp33_2));
                          acc27_3 = (acc27_3 + (tmp31_0 * tmp33_3));
                          acc27_4 = (acc27_4 + (tmp31_0 * tmp33_4));
                          acc27_5 = (acc27_5 + (tmp31_0 * tmp33_5));
                          acc27_6 = (acc27_6 + (tmp31_0 * tmp33_6));
                          acc27_7 = (acc27_7 + (tmp31_0 * tmp33_7));
                          acc27_8 = (acc27_8 + (tmp31_1 * tmp33_0));
                          acc27_9 = (acc27_9 + (tmp31_1 * tmp33_1));
                          acc27_10 = (acc27_10 + (tmp31_1 * tmp33_2));
                          acc27_11 = (acc27_11 + (tmp31_1 * tmp33_3));
                          acc27_12 = (acc27_12 + (tmp31_1 * tmp33_4));
                          acc27_13 = (acc27_13 + (tmp31_1 * tmp33_5));
                          acc27_14 = (acc27_14 + (tmp31_1 * tmp33_6));
                          acc27_15 = (acc27_15 + (tmp31_1 * tmp33_7));
                        }
                      }
                    }
                    acc3_0 = acc27_0;
                    acc3_1 = acc27_1;
                    acc3_2 = acc27_2;
                    acc3_3 = acc27_3;
                    acc3_4 = acc27_4;
                    acc3_5 = acc27_5;
                    acc3_6 = acc27_6;
                    acc3_7 = acc27_7;
                    acc3_8 = acc27_8;
                    acc3_9 = acc27_9;
                    acc3_10 = acc27_10;
                    acc3_11 = acc27_11;
                    acc3_12 = acc27_12;
                    acc3_13 = acc27_13;
                    acc3_14 = acc27_14;
                    acc3_15 = acc27_15;
                  }
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
            }
            {
              const int lid39 = get_local_id(1);
              {
                const int lid40 = get_local_id(0);
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39] = acc3_0;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + 1] = acc3_1;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + 2] = acc3_2;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + 3] = acc3_3;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + 4] = acc3_4;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + 5] = acc3_5;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + 6] = acc3_6;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + 7] = acc3_7;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + N] = acc3_8;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + N + 1] = acc3_9;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + N + 2] = acc3_10;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + N + 3] = acc3_11;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + N + 4] = acc3_12;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + N + 5] = acc3_13;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + N + 6] = acc3_14;
                output[16 * wg2 + 8 * lid40 + 8 * N * wg1 + 2 * N * lid39 + N + 7] = acc3_15;
              }
            }
          }
          barrier(CLK_LOCAL_MEM_FENCE);
        }
      }
    }
  }
}
