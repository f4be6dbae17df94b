float dpia_tf32_float(float x) {
  return select(x, as_float((as_uint(x) + 0x1000u) & 0xffffe000u), isfinite(x));
}
__attribute__((reqd_work_group_size(32, 1, 1)))
kernel void mm_tf32_one_warp(
    global const float* restrict a,
    global const float* restrict b,
    global float* restrict output,
    const int M,
    const int K,
    const int N) {
  local float tmp17[192] __attribute__((aligned(16)));
  local float tmp21[192] __attribute__((aligned(16)));
  for (int wg1 = get_group_id(1); wg1 < M / 16; wg1 += get_num_groups(1)) {
    for (int wg2 = get_group_id(0); wg2 < N / 16; wg2 += get_num_groups(0)) {
      {
        float acc3_0;
        float acc3_1;
        float acc3_2;
        float acc3_3;
        float acc3_128;
        float acc3_129;
        float acc3_130;
        float acc3_131;
        {
          const int lid14 = get_local_id(0);
          acc3_0 = 0.0f;
          acc3_1 = 0.0f;
          acc3_2 = 0.0f;
          acc3_3 = 0.0f;
        }
        {
          const int lid14 = get_local_id(0);
          acc3_128 = 0.0f;
          acc3_129 = 0.0f;
          acc3_130 = 0.0f;
          acc3_131 = 0.0f;
        }
        for (int i16 = 0; i16 < K / 8; i16 += 1) {
          for (int lid19 = get_local_id(0); lid19 < 192; lid19 += get_local_size(0)) {
            tmp17[lid19] = (((((lid19 % 12)) >= (0)) && (((lid19 % 12)) < (8))) ? a[(lid19 % 12) + 8 * i16 + K * (lid19 / 12) + 16 * K * wg1] : 0.0f);
          }
          for (int lid23 = get_local_id(0); lid23 < 192; lid23 += get_local_size(0)) {
            tmp21[lid23] = (((((lid23 % 24)) >= (0)) && (((lid23 % 24)) < (16))) ? b[(lid23 % 24) + 16 * wg2 + N * (lid23 / 24) + 8 * N * i16] : 0.0f);
          }
          {
            float acc25_0;
            float acc25_1;
            float acc25_2;
            float acc25_3;
            float acc25_128;
            float acc25_129;
            float acc25_130;
            float acc25_131;
            {
              const int lid32 = get_local_id(0);
              acc25_0 = acc3_0;
              acc25_1 = acc3_1;
              acc25_2 = acc3_2;
              acc25_3 = acc3_3;
            }
            {
              const int lid32 = get_local_id(0);
              acc25_128 = acc3_128;
              acc25_129 = acc3_129;
              acc25_130 = acc3_130;
              acc25_131 = acc3_131;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            {
              const int lane37 = get_local_id(0);
              {
                float mma38;
                float mma39;
                float mma40;
                float mma41;
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
                mma38 = acc25_0;
                common1 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8)]);
                common2 = dpia_tf32_float(tmp21[2 * (lane37 % 4)]);
                mma38 = (mma38 + (common1 * common2));
                common3 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 1]);
                common4 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 24]);
                mma38 = (mma38 + (common3 * common4));
                common5 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 2]);
                common6 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 48]);
                mma38 = (mma38 + (common5 * common6));
                common7 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 3]);
                common8 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 72]);
                mma38 = (mma38 + (common7 * common8));
                common9 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 4]);
                common10 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 96]);
                mma38 = (mma38 + (common9 * common10));
                common11 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 5]);
                common12 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 120]);
                mma38 = (mma38 + (common11 * common12));
                common13 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 6]);
                common14 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 144]);
                mma38 = (mma38 + (common13 * common14));
                common15 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 7]);
                common16 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 168]);
                mma38 = (mma38 + (common15 * common16));
                mma39 = acc25_1;
                common17 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 1]);
                mma39 = (mma39 + (common1 * common17));
                common18 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 25]);
                mma39 = (mma39 + (common3 * common18));
                common19 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 49]);
                mma39 = (mma39 + (common5 * common19));
                common20 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 73]);
                mma39 = (mma39 + (common7 * common20));
                common21 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 97]);
                mma39 = (mma39 + (common9 * common21));
                common22 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 121]);
                mma39 = (mma39 + (common11 * common22));
                common23 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 145]);
                mma39 = (mma39 + (common13 * common23));
                common24 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 169]);
                mma39 = (mma39 + (common15 * common24));
                mma40 = acc25_2;
                common25 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 96]);
                mma40 = (mma40 + (common25 * common2));
                common26 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 97]);
                mma40 = (mma40 + (common26 * common4));
                common27 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 98]);
                mma40 = (mma40 + (common27 * common6));
                common28 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 99]);
                mma40 = (mma40 + (common28 * common8));
                common29 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 100]);
                mma40 = (mma40 + (common29 * common10));
                common30 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 101]);
                mma40 = (mma40 + (common30 * common12));
                common31 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 102]);
                mma40 = (mma40 + (common31 * common14));
                common32 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 103]);
                mma40 = (mma40 + (common32 * common16));
                mma41 = acc25_3;
                mma41 = (mma41 + (common25 * common17));
                mma41 = (mma41 + (common26 * common18));
                mma41 = (mma41 + (common27 * common19));
                mma41 = (mma41 + (common28 * common20));
                mma41 = (mma41 + (common29 * common21));
                mma41 = (mma41 + (common30 * common22));
                mma41 = (mma41 + (common31 * common23));
                mma41 = (mma41 + (common32 * common24));
                acc25_0 = mma38;
                acc25_1 = mma39;
                acc25_2 = mma40;
                acc25_3 = mma41;
              }
            }
            {
              const int lane37 = get_local_id(0);
              {
                float mma38;
                float mma39;
                float mma40;
                float mma41;
                float common33;
                float common34;
                float common35;
                float common36;
                float common37;
                float common38;
                float common39;
                float common40;
                float common41;
                float common42;
                float common43;
                float common44;
                float common45;
                float common46;
                float common47;
                float common48;
                float common49;
                float common50;
                float common51;
                float common52;
                float common53;
                float common54;
                float common55;
                float common56;
                float common57;
                float common58;
                float common59;
                float common60;
                float common61;
                float common62;
                float common63;
                float common64;
                mma38 = acc25_128;
                common33 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8)]);
                common34 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 8]);
                mma38 = (mma38 + (common33 * common34));
                common35 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 1]);
                common36 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 32]);
                mma38 = (mma38 + (common35 * common36));
                common37 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 2]);
                common38 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 56]);
                mma38 = (mma38 + (common37 * common38));
                common39 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 3]);
                common40 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 80]);
                mma38 = (mma38 + (common39 * common40));
                common41 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 4]);
                common42 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 104]);
                mma38 = (mma38 + (common41 * common42));
                common43 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 5]);
                common44 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 128]);
                mma38 = (mma38 + (common43 * common44));
                common45 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 6]);
                common46 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 152]);
                mma38 = (mma38 + (common45 * common46));
                common47 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 7]);
                common48 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 176]);
                mma38 = (mma38 + (common47 * common48));
                mma39 = acc25_129;
                common49 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 9]);
                mma39 = (mma39 + (common33 * common49));
                common50 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 33]);
                mma39 = (mma39 + (common35 * common50));
                common51 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 57]);
                mma39 = (mma39 + (common37 * common51));
                common52 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 81]);
                mma39 = (mma39 + (common39 * common52));
                common53 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 105]);
                mma39 = (mma39 + (common41 * common53));
                common54 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 129]);
                mma39 = (mma39 + (common43 * common54));
                common55 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 153]);
                mma39 = (mma39 + (common45 * common55));
                common56 = dpia_tf32_float(tmp21[2 * (lane37 % 4) + 177]);
                mma39 = (mma39 + (common47 * common56));
                mma40 = acc25_130;
                common57 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 96]);
                mma40 = (mma40 + (common57 * common34));
                common58 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 97]);
                mma40 = (mma40 + (common58 * common36));
                common59 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 98]);
                mma40 = (mma40 + (common59 * common38));
                common60 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 99]);
                mma40 = (mma40 + (common60 * common40));
                common61 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 100]);
                mma40 = (mma40 + (common61 * common42));
                common62 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 101]);
                mma40 = (mma40 + (common62 * common44));
                common63 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 102]);
                mma40 = (mma40 + (common63 * common46));
                common64 = dpia_tf32_float(tmp17[12 * ((lane37 / 4) % 8) + 103]);
                mma40 = (mma40 + (common64 * common48));
                mma41 = acc25_131;
                mma41 = (mma41 + (common57 * common49));
                mma41 = (mma41 + (common58 * common50));
                mma41 = (mma41 + (common59 * common51));
                mma41 = (mma41 + (common60 * common52));
                mma41 = (mma41 + (common61 * common53));
                mma41 = (mma41 + (common62 * common54));
                mma41 = (mma41 + (common63 * common55));
                mma41 = (mma41 + (common64 * common56));
                acc25_128 = mma38;
                acc25_129 = mma39;
                acc25_130 = mma40;
                acc25_131 = mma41;
              }
            }
            {
              const int lid44 = get_local_id(0);
              acc3_0 = acc25_0;
              acc3_1 = acc25_1;
              acc3_2 = acc25_2;
              acc3_3 = acc25_3;
            }
            {
              const int lid44 = get_local_id(0);
              acc3_128 = acc25_128;
              acc3_129 = acc25_129;
              acc3_130 = acc25_130;
              acc3_131 = acc25_131;
            }
          }
          barrier(CLK_LOCAL_MEM_FENCE);
        }
        {
          const int lid48 = get_local_id(0);
          output[2 * (lid48 % 4) + 16 * wg2 + N * (lid48 / 4) + 16 * N * wg1] = acc3_0;
          output[2 * (lid48 % 4) + 16 * wg2 + N * (lid48 / 4) + 16 * N * wg1 + 1] = acc3_1;
          output[2 * (lid48 % 4) + 16 * wg2 + N * (lid48 / 4) + 16 * N * wg1 + 8 * N] = acc3_2;
          output[2 * (lid48 % 4) + 16 * wg2 + N * (lid48 / 4) + 16 * N * wg1 + 8 * N + 1] = acc3_3;
        }
        {
          const int lid48 = get_local_id(0);
          output[2 * (lid48 % 4) + 16 * wg2 + N * (lid48 / 4) + 16 * N * wg1 + 8] = acc3_128;
          output[2 * (lid48 % 4) + 16 * wg2 + N * (lid48 / 4) + 16 * N * wg1 + 9] = acc3_129;
          output[2 * (lid48 % 4) + 16 * wg2 + N * (lid48 / 4) + 16 * N * wg1 + 8 * N + 8] = acc3_130;
          output[2 * (lid48 % 4) + 16 * wg2 + N * (lid48 / 4) + 16 * N * wg1 + 8 * N + 9] = acc3_131;
        }
      }
    }
  }
}
