kernel void schedule_vec_sum_two_kernels_0(
    global const float* restrict xs,
    global float* restrict output,
    global float* restrict tmp2,
    const int N) {
  local float tmp5[32] __attribute__((aligned(16)));
  local float tmp12[16] __attribute__((aligned(16)));
  local float tmp19[8] __attribute__((aligned(16)));
  local float tmp26[4] __attribute__((aligned(16)));
  local float tmp33[2] __attribute__((aligned(16)));
  local float tmp40[1] __attribute__((aligned(16)));
  {
    const int wg3 = get_group_id(0);
    if (wg3 < N / 128) {
      for (int lid6 = get_local_id(0); lid6 < 32; lid6 += get_local_size(0)) {
        {
          float acc8;
          acc8 = 0.0f;
          for (int i9 = 0; i9 < 4; i9 += 1) {
            acc8 = (acc8 + xs[128 * wg3 + lid6 + 32 * i9]);
          }
          tmp5[lid6] = acc8;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid13 = get_local_id(0); lid13 < 16; lid13 += get_local_size(0)) {
        {
          float acc15;
          acc15 = 0.0f;
          for (int i16 = 0; i16 < 2; i16 += 1) {
            acc15 = (acc15 + tmp5[lid13 + 16 * i16]);
          }
          tmp12[lid13] = acc15;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid20 = get_local_id(0); lid20 < 8; lid20 += get_local_size(0)) {
        {
          float acc22;
          acc22 = 0.0f;
          for (int i23 = 0; i23 < 2; i23 += 1) {
            acc22 = (acc22 + tmp12[lid20 + 8 * i23]);
          }
          tmp19[lid20] = acc22;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid27 = get_local_id(0); lid27 < 4; lid27 += get_local_size(0)) {
        {
          float acc29;
          acc29 = 0.0f;
          for (int i30 = 0; i30 < 2; i30 += 1) {
            acc29 = (acc29 + tmp19[lid27 + 4 * i30]);
          }
          tmp26[lid27] = acc29;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid34 = get_local_id(0); lid34 < 2; lid34 += get_local_size(0)) {
        {
          float acc36;
          acc36 = 0.0f;
          for (int i37 = 0; i37 < 2; i37 += 1) {
            acc36 = (acc36 + tmp26[lid34 + 2 * i37]);
          }
          tmp33[lid34] = acc36;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid41 = get_local_id(0); lid41 < 1; lid41 += get_local_size(0)) {
        {
          float acc43;
          acc43 = 0.0f;
          for (int i44 = 0; i44 < 2; i44 += 1) {
            acc43 = (acc43 + tmp33[2 * lid41 + i44]);
          }
          tmp40[lid41] = acc43;
        }
      }
      {
        float acc4;
        acc4 = 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc4 = (acc4 + tmp40[0]);
        if ((get_local_id(0) == 0)) {
          tmp2[wg3] = acc4;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}

kernel void schedule_vec_sum_two_kernels_1(
    global const float* restrict xs,
    global float* restrict output,
    global float* restrict tmp2,
    const int N) {
  {
    float acc1;
    acc1 = 0.0f;
    for (int i50 = 0; i50 < N / 128; i50 += 1) {
      acc1 = (acc1 + tmp2[i50]);
    }
    output[0] = acc1;
  }
}
