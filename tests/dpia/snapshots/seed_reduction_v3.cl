kernel void seed_reduction_v3(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  local float tmp2[1] __attribute__((aligned(16)));
  local float tmp3[2] __attribute__((aligned(16)));
  local float tmp4[4] __attribute__((aligned(16)));
  local float tmp5[8] __attribute__((aligned(16)));
  local float tmp6[16] __attribute__((aligned(16)));
  local float tmp7[32] __attribute__((aligned(16)));
  local float tmp8[64] __attribute__((aligned(16)));
  {
    const int wg1 = get_group_id(0);
    if (wg1 < N / 64) {
      for (int lid9 = get_local_id(0); lid9 < 64; lid9 += get_local_size(0)) {
        tmp8[lid9] = xs[64 * wg1 + lid9];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid10 = get_local_id(0); lid10 < 32; lid10 += get_local_size(0)) {
        {
          float acc12;
          acc12 = 0.0f;
          for (int i13 = 0; i13 < 2; i13 += 1) {
            acc12 = (acc12 + tmp8[lid10 + 32 * i13]);
          }
          tmp7[lid10] = acc12;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid16 = get_local_id(0); lid16 < 16; lid16 += get_local_size(0)) {
        {
          float acc18;
          acc18 = 0.0f;
          for (int i19 = 0; i19 < 2; i19 += 1) {
            acc18 = (acc18 + tmp7[lid16 + 16 * i19]);
          }
          tmp6[lid16] = acc18;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid22 = get_local_id(0); lid22 < 8; lid22 += get_local_size(0)) {
        {
          float acc24;
          acc24 = 0.0f;
          for (int i25 = 0; i25 < 2; i25 += 1) {
            acc24 = (acc24 + tmp6[lid22 + 8 * i25]);
          }
          tmp5[lid22] = acc24;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid28 = get_local_id(0); lid28 < 4; lid28 += get_local_size(0)) {
        {
          float acc30;
          acc30 = 0.0f;
          for (int i31 = 0; i31 < 2; i31 += 1) {
            acc30 = (acc30 + tmp5[lid28 + 4 * i31]);
          }
          tmp4[lid28] = acc30;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid34 = get_local_id(0); lid34 < 2; lid34 += get_local_size(0)) {
        {
          float acc36;
          acc36 = 0.0f;
          for (int i37 = 0; i37 < 2; i37 += 1) {
            acc36 = (acc36 + tmp4[lid34 + 2 * i37]);
          }
          tmp3[lid34] = acc36;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid40 = get_local_id(0); lid40 < 1; lid40 += get_local_size(0)) {
        {
          float acc42;
          acc42 = 0.0f;
          for (int i43 = 0; i43 < 2; i43 += 1) {
            acc42 = (acc42 + tmp3[2 * lid40 + i43]);
          }
          tmp2[lid40] = acc42;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid46 = get_local_id(0); lid46 < 1; lid46 += get_local_size(0)) {
        output[wg1 + lid46] = tmp2[lid46];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
