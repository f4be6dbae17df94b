__attribute__((reqd_work_group_size(4, 4, 1)))
kernel void mm_register_blocked_4x2_rectangular(
    global const float* restrict a,
    global const float* restrict b,
    global float* restrict output,
    const int M,
    const int K,
    const int N) {
  local float tmp13[64] __attribute__((aligned(16)));
  local float tmp16[32] __attribute__((aligned(16)));
  {
    const int wg1 = get_group_id(1);
    if (wg1 < M / 16) {
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
              const int lid8 = get_local_id(1);
              {
                const int lid9 = get_local_id(0);
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
            for (int i12 = 0; i12 < K / 4; i12 += 1) {
              {
                const int lid14 = get_local_id(0);
                for (int lid15 = get_local_id(1); lid15 < 16; lid15 += 4) {
                  tmp13[lid15 + 16 * lid14] = a[lid14 + 4 * i12 + 16 * K * wg1 + K * lid15];
                }
              }
              {
                const int lid17 = get_local_id(1);
                for (int lid18 = get_local_id(0); lid18 < 8; lid18 += 4) {
                  tmp16[lid18 + 8 * lid17] = b[8 * wg2 + lid18 + N * lid17 + 4 * N * i12];
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid20 = get_local_id(1);
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
                    {
                      float tmp27_0;
                      float tmp27_1;
                      float tmp27_2;
                      float tmp27_3;
                      tmp27_0 = tmp13[4 * lid20];
                      tmp27_1 = tmp13[4 * lid20 + 1];
                      tmp27_2 = tmp13[4 * lid20 + 2];
                      tmp27_3 = tmp13[4 * lid20 + 3];
                      {
                        float tmp29_0;
                        float tmp29_1;
                        tmp29_0 = tmp16[2 * lid22];
                        tmp29_1 = tmp16[2 * lid22 + 1];
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
                    {
                      float tmp27_0;
                      float tmp27_1;
                      float tmp27_2;
                      float tmp27_3;
                      tmp27_0 = tmp13[4 * lid20 + 16];
                      tmp27_1 = tmp13[4 * lid20 + 17];
                      tmp27_2 = tmp13[4 * lid20 + 18];
                      tmp27_3 = tmp13[4 * lid20 + 19];
                      {
                        float tmp29_0;
                        float tmp29_1;
                        tmp29_0 = tmp16[2 * lid22 + 8];
                        tmp29_1 = tmp16[2 * lid22 + 9];
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
                    {
                      float tmp27_0;
                      float tmp27_1;
                      float tmp27_2;
                      float tmp27_3;
                      tmp27_0 = tmp13[4 * lid20 + 32];
                      tmp27_1 = tmp13[4 * lid20 + 33];
                      tmp27_2 = tmp13[4 * lid20 + 34];
                      tmp27_3 = tmp13[4 * lid20 + 35];
                      {
                        float tmp29_0;
                        float tmp29_1;
                        tmp29_0 = tmp16[2 * lid22 + 16];
                        tmp29_1 = tmp16[2 * lid22 + 17];
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
                    {
                      float tmp27_0;
                      float tmp27_1;
                      float tmp27_2;
                      float tmp27_3;
                      tmp27_0 = tmp13[4 * lid20 + 48];
                      tmp27_1 = tmp13[4 * lid20 + 49];
                      tmp27_2 = tmp13[4 * lid20 + 50];
                      tmp27_3 = tmp13[4 * lid20 + 51];
                      {
                        float tmp29_0;
                        float tmp29_1;
                        tmp29_0 = tmp16[2 * lid22 + 24];
                        tmp29_1 = tmp16[2 * lid22 + 25];
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
                output[8 * wg2 + 2 * lid36 + 16 * N * wg1 + 4 * N * lid35] = acc3_0;
                output[8 * wg2 + 2 * lid36 + 16 * N * wg1 + 4 * N * lid35 + 1] = acc3_1;
                output[8 * wg2 + 2 * lid36 + 16 * N * wg1 + 4 * N * lid35 + N] = acc3_2;
                output[8 * wg2 + 2 * lid36 + 16 * N * wg1 + 4 * N * lid35 + N + 1] = acc3_3;
                output[8 * wg2 + 2 * lid36 + 16 * N * wg1 + 4 * N * lid35 + 2 * N] = acc3_4;
                output[8 * wg2 + 2 * lid36 + 16 * N * wg1 + 4 * N * lid35 + 2 * N + 1] = acc3_5;
                output[8 * wg2 + 2 * lid36 + 16 * N * wg1 + 4 * N * lid35 + 3 * N] = acc3_6;
                output[8 * wg2 + 2 * lid36 + 16 * N * wg1 + 4 * N * lid35 + 3 * N + 1] = acc3_7;
              }
            }
          }
          barrier(CLK_LOCAL_MEM_FENCE);
        }
      }
    }
  }
}
