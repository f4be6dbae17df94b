kernel void vec_sum_iterate(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  local float tmp2[64] __attribute__((aligned(16)));
  local float tmp4[32] __attribute__((aligned(16)));
  local float tmp11[16] __attribute__((aligned(16)));
  local float tmp18[8] __attribute__((aligned(16)));
  local float tmp25[4] __attribute__((aligned(16)));
  local float tmp32[2] __attribute__((aligned(16)));
  local float tmp39[1] __attribute__((aligned(16)));
  {
    const int wg1 = get_group_id(0);
    if (wg1 < N / 64) {
      for (int lid3 = get_local_id(0); lid3 < 64; lid3 += get_local_size(0)) {
        tmp2[lid3] = xs[64 * wg1 + lid3];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid5 = get_local_id(0); lid5 < 32; lid5 += get_local_size(0)) {
        {
          float acc7;
          acc7 = 0.0f;
          for (int i8 = 0; i8 < 2; i8 += 1) {
            acc7 = (acc7 + tmp2[2 * lid5 + i8]);
          }
          tmp4[lid5] = acc7;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid12 = get_local_id(0); lid12 < 16; lid12 += get_local_size(0)) {
        {
          float acc14;
          acc14 = 0.0f;
          for (int i15 = 0; i15 < 2; i15 += 1) {
            acc14 = (acc14 + tmp4[2 * lid12 + i15]);
          }
          tmp11[lid12] = acc14;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid19 = get_local_id(0); lid19 < 8; lid19 += get_local_size(0)) {
        {
          float acc21;
          acc21 = 0.0f;
          for (int i22 = 0; i22 < 2; i22 += 1) {
            acc21 = (acc21 + tmp11[2 * lid19 + i22]);
          }
          tmp18[lid19] = acc21;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid26 = get_local_id(0); lid26 < 4; lid26 += get_local_size(0)) {
        {
          float acc28;
          acc28 = 0.0f;
          for (int i29 = 0; i29 < 2; i29 += 1) {
            acc28 = (acc28 + tmp18[2 * lid26 + i29]);
          }
          tmp25[lid26] = acc28;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid33 = get_local_id(0); lid33 < 2; lid33 += get_local_size(0)) {
        {
          float acc35;
          acc35 = 0.0f;
          for (int i36 = 0; i36 < 2; i36 += 1) {
            acc35 = (acc35 + tmp25[2 * lid33 + i36]);
          }
          tmp32[lid33] = acc35;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid40 = get_local_id(0); lid40 < 1; lid40 += get_local_size(0)) {
        {
          float acc42;
          acc42 = 0.0f;
          for (int i43 = 0; i43 < 2; i43 += 1) {
            acc42 = (acc42 + tmp32[2 * lid40 + i43]);
          }
          tmp39[lid40] = acc42;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid46 = get_local_id(0); lid46 < 1; lid46 += get_local_size(0)) {
        output[wg1 + lid46] = tmp39[lid46];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
