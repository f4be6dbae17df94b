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
  local float tmp27[192] __attribute__((aligned(16)));
  {
    const int wg1 = get_group_id(1);
    if (wg1 < M / 32) {
      {
        const int wg2 = get_group_id(0);
        if (wg2 < N / 16) {
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
              for (int lid23 = get_local_id(2); lid23 < 6; lid23 += 2) {
                {
                  const int lid24 = get_local_id(1);
                  {
                    const int lid25 = get_local_id(0);
                    tmp21[lid25 + 32 * lid24 + 64 * lid23] = ((((((lid25 + 8 * lid24 + 4 * lid23) % 12)) >= (0)) && ((((lid25 + 8 * lid24 + 4 * lid23) % 12)) < (8))) ? a[((lid25 + 8 * lid24 + 4 * lid23) % 12) + 8 * i20 + K * ((lid25 + 8 * lid24 + 4 * lid23) / 12) + 32 * K * wg1 + 2 * K * lid24 + 5 * K * lid23] : 0.0f);
                  }
                }
              }
              for (int lid29 = get_local_id(2); lid29 < 3; lid29 += 2) {
                {
                  const int lid30 = get_local_id(1);
                  {
                    const int lid31 = get_local_id(0);
                    tmp27[lid31 + 32 * lid30 + 64 * lid29] = ((((((lid31 + 8 * lid30 + 16 * lid29) % 24)) >= (0)) && ((((lid31 + 8 * lid30 + 16 * lid29) % 24)) < (16))) ? b[((lid31 + 8 * lid30 + 16 * lid29) % 24) + 16 * wg2 + N * ((lid31 + 8 * lid30 + 16 * lid29) / 24) + N * lid30 + 2 * N * lid29 + 8 * N * i20] : 0.0f);
                  }
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              {
                const int lid33 = get_local_id(2);
                {
                  const int lid34 = get_local_id(1);
                  {
                    float acc35_0;
                    float acc35_1;
                    float acc35_2;
                    float acc35_3;
                    {
                      const int lid42 = get_local_id(0);
                      acc35_0 = acc3_0;
                      acc35_1 = acc3_1;
                      acc35_2 = acc3_2;
                      acc35_3 = acc3_3;
                    }
                    {
                      const int lane47 = get_local_id(0);
                      {
                        float mma48;
                        float mma49;
                        float mma50;
                        float mma51;
                        float common1;
                        float common2;
                        float common3;
                        float common4;
                        float common5;
                        float common6;
                        float common7;
                        float common8;
                        float common9;
                        float common10;
                        float common11;
                        float common12;
                        float common13;
                        float common14;
                        float common15;
                        float common16;
                        float common17;
                        float common18;
                        float common19;
                        float common20;
                        float common21;
                        float common22;
                        float common23;
                        float common24;
                        float common25;
                        float common26;
                        float common27;
                        float common28;
                        float common29;
                        float common30;
                        float common31;
                        float common32;
                        mma48 = acc35_0;
                        common1 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33]);
                        common2 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34]);
                        mma48 = (mma48 + (common1 * common2));
                        common3 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 1]);
                        common4 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 24]);
                        mma48 = (mma48 + (common3 * common4));
                        common5 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 2]);
                        common6 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 48]);
                        mma48 = (mma48 + (common5 * common6));
                        common7 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 3]);
                        common8 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 72]);
                        mma48 = (mma48 + (common7 * common8));
                        common9 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 4]);
                        common10 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 96]);
                        mma48 = (mma48 + (common9 * common10));
                        common11 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 5]);
                        common12 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 120]);
                        mma48 = (mma48 + (common11 * common12));
                        common13 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 6]);
                        common14 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 144]);
                        mma48 = (mma48 + (common13 * common14));
                        common15 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 7]);
                        common16 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 168]);
                        mma48 = (mma48 + (common15 * common16));
                        mma49 = acc35_1;
                        common17 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 1]);
                        mma49 = (mma49 + (common1 * common17));
                        common18 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 25]);
                        mma49 = (mma49 + (common3 * common18));
                        common19 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 49]);
                        mma49 = (mma49 + (common5 * common19));
                        common20 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 73]);
                        mma49 = (mma49 + (common7 * common20));
                        common21 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 97]);
                        mma49 = (mma49 + (common9 * common21));
                        common22 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 121]);
                        mma49 = (mma49 + (common11 * common22));
                        common23 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 145]);
                        mma49 = (mma49 + (common13 * common23));
                        common24 = dpia_tf32_float(tmp27[2 * (lane47 % 4) + 8 * lid34 + 169]);
                        mma49 = (mma49 + (common15 * common24));
                        mma50 = acc35_2;
                        common25 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 96]);
                        mma50 = (mma50 + (common25 * common2));
                        common26 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 97]);
                        mma50 = (mma50 + (common26 * common4));
                        common27 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 98]);
                        mma50 = (mma50 + (common27 * common6));
                        common28 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 99]);
                        mma50 = (mma50 + (common28 * common8));
                        common29 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 100]);
                        mma50 = (mma50 + (common29 * common10));
                        common30 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 101]);
                        mma50 = (mma50 + (common30 * common12));
                        common31 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 102]);
                        mma50 = (mma50 + (common31 * common14));
                        common32 = dpia_tf32_float(tmp21[12 * ((lane47 / 4) % 8) + 192 * lid33 + 103]);
                        mma50 = (mma50 + (common32 * common16));
                        mma51 = acc35_3;
                        mma51 = (mma51 + (common25 * common17));
                        mma51 = (mma51 + (common26 * common18));
                        mma51 = (mma51 + (common27 * common19));
                        mma51 = (mma51 + (common28 * common20));
                        mma51 = (mma51 + (common29 * common21));
                        mma51 = (mma51 + (common30 * common22));
                        mma51 = (mma51 + (common31 * common23));
                        mma51 = (mma51 + (common32 * common24));
                        acc35_0 = mma48;
                        acc35_1 = mma49;
                        acc35_2 = mma50;
                        acc35_3 = mma51;
                      }
                    }
                    {
                      const int lid54 = get_local_id(0);
                      acc3_0 = acc35_0;
                      acc3_1 = acc35_1;
                      acc3_2 = acc35_2;
                      acc3_3 = acc35_3;
                    }
                  }
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
            }
            {
              const int lid56 = get_local_id(2);
              {
                const int lid57 = get_local_id(1);
                {
                  const int lid60 = get_local_id(0);
                  output[2 * (lid60 % 4) + 16 * wg2 + 8 * lid57 + N * (lid60 / 4) + 32 * N * wg1 + 16 * N * lid56] = acc3_0;
                  output[2 * (lid60 % 4) + 16 * wg2 + 8 * lid57 + N * (lid60 / 4) + 32 * N * wg1 + 16 * N * lid56 + 1] = acc3_1;
                  output[2 * (lid60 % 4) + 16 * wg2 + 8 * lid57 + N * (lid60 / 4) + 32 * N * wg1 + 16 * N * lid56 + 8 * N] = acc3_2;
                  output[2 * (lid60 % 4) + 16 * wg2 + 8 * lid57 + N * (lid60 / 4) + 32 * N * wg1 + 16 * N * lid56 + 8 * N + 1] = acc3_3;
                }
              }
            }
          }
          barrier(CLK_LOCAL_MEM_FENCE);
        }
      }
    }
  }
}
