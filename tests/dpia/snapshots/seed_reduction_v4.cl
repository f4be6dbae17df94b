kernel void seed_reduction_v4(
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
    if (wg1 < N / 128) {
      for (int lid9 = get_local_id(0); lid9 < 64; lid9 += get_local_size(0)) {
        {
          float acc11;
          acc11 = 0.0f;
          for (int i12 = 0; i12 < 2; i12 += 1) {
            acc11 = (acc11 + xs[128 * wg1 + lid9 + 64 * i12]);
          }
          tmp8[lid9] = acc11;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid15 = get_local_id(0); lid15 < 32; lid15 += get_local_size(0)) {
        {
          float acc17;
          acc17 = 0.0f;
          for (int i18 = 0; i18 < 2; i18 += 1) {
            acc17 = (acc17 + tmp8[lid15 + 32 * i18]);
          }
          tmp7[lid15] = acc17;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid21 = get_local_id(0); lid21 < 16; lid21 += get_local_size(0)) {
        {
          float acc23;
          acc23 = 0.0f;
          for (int i24 = 0; i24 < 2; i24 += 1) {
            acc23 = (acc23 + tmp7[lid21 + 16 * i24]);
          }
          tmp6[lid21] = acc23;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid27 = get_local_id(0); lid27 < 8; lid27 += get_local_size(0)) {
        {
          float acc29;
          acc29 = 0.0f;
          for (int i30 = 0; i30 < 2; i30 += 1) {
            acc29 = (acc29 + tmp6[lid27 + 8 * i30]);
          }
          tmp5[lid27] = acc29;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid33 = get_local_id(0); lid33 < 4; lid33 += get_local_size(0)) {
        {
          float acc35;
          acc35 = 0.0f;
          for (int i36 = 0; i36 < 2; i36 += 1) {
            acc35 = (acc35 + tmp5[lid33 + 4 * i36]);
          }
          tmp4[lid33] = acc35;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid39 = get_local_id(0); lid39 < 2; lid39 += get_local_size(0)) {
        {
          float acc41;
          acc41 = 0.0f;
          for (int i42 = 0; i42 < 2; i42 += 1) {
            acc41 = (acc41 + tmp4[lid39 + 2 * i42]);
          }
          tmp3[lid39] = acc41;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid45 = get_local_id(0); lid45 < 1; lid45 += get_local_size(0)) {
        {
          float acc47;
          acc47 = 0.0f;
          for (int i48 = 0; i48 < 2; i48 += 1) {
            acc47 = (acc47 + tmp3[2 * lid45 + i48]);
          }
          tmp2[lid45] = acc47;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid51 = get_local_id(0); lid51 < 1; lid51 += get_local_size(0)) {
        output[wg1 + lid51] = tmp2[lid51];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
