float dpia_tf32_float(float x) {
  return select(x, as_float((as_uint(x) + 0x1000u) & 0xffffe000u), isfinite(x));
}
__attribute__((reqd_work_group_size(32, 2, 2)))
kernel void mm_tf32_four_warps(
    global const float* restrict a,
    global const float* restrict b,
    global float* restrict output,
    const int M,
    const int K,
    const int N) {
  local float tmp21[384] __attribute__((aligned(16)));
  local float tmp28[192] __attribute__((aligned(16)));
  for (int wg1 = get_group_id(1); wg1 < M / 32; wg1 += get_num_groups(1)) {
    for (int wg2 = get_group_id(0); wg2 < N / 16; wg2 += get_num_groups(0)) {
      {
        float acc3_0;
        float acc3_1;
        float acc3_2;
        float acc3_3;
        {
          const int lid14 = get_local_id(2);
          {
            const int lid15 = get_local_id(1);
            {
              const int lid18 = get_local_id(0);
              acc3_0 = 0.0f;
              acc3_1 = 0.0f;
              acc3_2 = 0.0f;
              acc3_3 = 0.0f;
            }
          }
        }
        for (int i20 = 0; i20 < K / 8; i20 += 1) {
          for (int lid23 = get_local_id(2); lid23 < 6; lid23 += get_local_size(2)) {
            {
              const int lid24 = get_local_id(1);
              {
                const int lid25 = get_local_id(0);
                tmp21[lid25 + 32 * lid24 + 64 * lid23] = dpia_tf32_float(((((((lid25 + 8 * lid24 + 4 * lid23) % 12)) >= (0)) && ((((lid25 + 8 * lid24 + 4 * lid23) % 12)) < (8))) ? a[((lid25 + 8 * lid24 + 4 * lid23) % 12) + 8 * i20 + K * ((lid25 + 8 * lid24 + 4 * lid23) / 12) + 32 * K * wg1 + 2 * K * lid24 + 5 * K * lid23] : 0.0f));
              }
            }
          }
          for (int lid30 = get_local_id(2); lid30 < 3; lid30 += get_local_size(2)) {
            {
              const int lid31 = get_local_id(1);
              {
                const int lid32 = get_local_id(0);
                tmp28[lid32 + 32 * lid31 + 64 * lid30] = dpia_tf32_float(((((((lid32 + 8 * lid31 + 16 * lid30) % 24)) >= (0)) && ((((lid32 + 8 * lid31 + 16 * lid30) % 24)) < (16))) ? b[((lid32 + 8 * lid31 + 16 * lid30) % 24) + 16 * wg2 + N * ((lid32 + 8 * lid31 + 16 * lid30) / 24) + N * lid31 + 2 * N * lid30 + 8 * N * i20] : 0.0f));
              }
            }
          }
          barrier(CLK_LOCAL_MEM_FENCE);
          {
            const int lid35 = get_local_id(2);
            {
              const int lid36 = get_local_id(1);
              {
                float acc37_0;
                float acc37_1;
                float acc37_2;
                float acc37_3;
                {
                  const int lid44 = get_local_id(0);
                  acc37_0 = acc3_0;
                  acc37_1 = acc3_1;
                  acc37_2 = acc3_2;
                  acc37_3 = acc3_3;
                }
                {
                  const int lane49 = get_local_id(0);
                  {
                    float mma50;
                    float mma51;
                    float mma52;
                    float mma53;
                    mma50 = acc37_0;
                    mma50 = (mma50 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35] * tmp28[2 * (lane49 % 4) + 8 * lid36]));
                    mma50 = (mma50 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 1] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 24]));
                    mma50 = (mma50 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 2] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 48]));
                    mma50 = (mma50 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 3] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 72]));
                    mma50 = (mma50 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 4] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 96]));
                    mma50 = (mma50 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 5] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 120]));
                    mma50 = (mma50 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 6] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 144]));
                    mma50 = (mma50 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 7] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 168]));
                    mma51 = acc37_1;
                    mma51 = (mma51 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 1]));
                    mma51 = (mma51 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 1] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 25]));
                    mma51 = (mma51 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 2] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 49]));
                    mma51 = (mma51 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 3] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 73]));
                    mma51 = (mma51 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 4] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 97]));
                    mma51 = (mma51 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 5] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 121]));
                    mma51 = (mma51 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 6] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 145]));
                    mma51 = (mma51 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 7] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 169]));
                    mma52 = acc37_2;
                    mma52 = (mma52 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 96] * tmp28[2 * (lane49 % 4) + 8 * lid36]));
                    mma52 = (mma52 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 97] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 24]));
                    mma52 = (mma52 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 98] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 48]));
                    mma52 = (mma52 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 99] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 72]));
                    mma52 = (mma52 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 100] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 96]));
                    mma52 = (mma52 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 101] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 120]));
                    mma52 = (mma52 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 102] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 144]));
                    mma52 = (mma52 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 103] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 168]));
                    mma53 = acc37_3;
                    mma53 = (mma53 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 96] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 1]));
                    mma53 = (mma53 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 97] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 25]));
                    mma53 = (mma53 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 98] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 49]));
                    mma53 = (mma53 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 99] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 73]));
                    mma53 = (mma53 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 100] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 97]));
                    mma53 = (mma53 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 101] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 121]));
                    mma53 = (mma53 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 102] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 145]));
                    mma53 = (mma53 + (tmp21[12 * ((lane49 / 4) % 8) + 192 * lid35 + 103] * tmp28[2 * (lane49 % 4) + 8 * lid36 + 169]));
                    acc37_0 = mma50;
                    acc37_1 = mma51;
                    acc37_2 = mma52;
                    acc37_3 = mma53;
                  }
                }
                {
                  const int lid56 = get_local_id(0);
                  acc3_0 = acc37_0;
                  acc3_1 = acc37_1;
                  acc3_2 = acc37_2;
                  acc3_3 = acc37_3;
                }
              }
            }
          }
          barrier(CLK_LOCAL_MEM_FENCE);
        }
        {
          const int lid58 = get_local_id(2);
          {
            const int lid59 = get_local_id(1);
            {
              const int lid62 = get_local_id(0);
              output[2 * (lid62 % 4) + 16 * wg2 + 8 * lid59 + N * (lid62 / 4) + 32 * N * wg1 + 16 * N * lid58] = acc3_0;
              output[2 * (lid62 % 4) + 16 * wg2 + 8 * lid59 + N * (lid62 / 4) + 32 * N * wg1 + 16 * N * lid58 + 1] = acc3_1;
              output[2 * (lid62 % 4) + 16 * wg2 + 8 * lid59 + N * (lid62 / 4) + 32 * N * wg1 + 16 * N * lid58 + 8 * N] = acc3_2;
              output[2 * (lid62 % 4) + 16 * wg2 + 8 * lid59 + N * (lid62 / 4) + 32 * N * wg1 + 16 * N * lid58 + 8 * N + 1] = acc3_3;
            }
          }
        }
      }
    }
  }
}
