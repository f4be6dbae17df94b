kernel void schedule_asum_0(
    global const float* restrict xs,
    global float* restrict output,
    global float* restrict tmp2,
    const int N) {
  local float tmp5[32] __attribute__((aligned(16)));
  local float tmp9[16] __attribute__((aligned(16)));
  local float tmp16[8] __attribute__((aligned(16)));
  local float tmp23[4] __attribute__((aligned(16)));
  local float tmp30[2] __attribute__((aligned(16)));
  local float tmp37[1] __attribute__((aligned(16)));
  {
    const int wg3 = get_group_id(0);
    if (wg3 < N / 128) {
      for (int lid6 = get_local_id(0); lid6 < 32; lid6 += get_local_size(0)) {
        {
          float acc7;
          acc7 = 0.0f;
          for (int i8 = 0; i8 < 4; i8 += 1) {
            acc7 = (acc7 + fabs(xs[128 * wg3 + lid6 + 32 * i8]));
          }
          tmp5[lid6] = acc7;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid10 = get_local_id(0); lid10 < 16; lid10 += get_local_size(0)) {
        {
          float acc12;
          acc12 = 0.0f;
          for (int i13 = 0; i13 < 2; i13 += 1) {
            acc12 = (acc12 + tmp5[lid10 + 16 * i13]);
          }
          tmp9[lid10] = acc12;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid17 = get_local_id(0); lid17 < 8; lid17 += get_local_size(0)) {
        {
          float acc19;
          acc19 = 0.0f;
          for (int i20 = 0; i20 < 2; i20 += 1) {
            acc19 = (acc19 + tmp9[lid17 + 8 * i20]);
          }
          tmp16[lid17] = acc19;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid24 = get_local_id(0); lid24 < 4; lid24 += get_local_size(0)) {
        {
          float acc26;
          acc26 = 0.0f;
          for (int i27 = 0; i27 < 2; i27 += 1) {
            acc26 = (acc26 + tmp16[lid24 + 4 * i27]);
          }
          tmp23[lid24] = acc26;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid31 = get_local_id(0); lid31 < 2; lid31 += get_local_size(0)) {
        {
          float acc33;
          acc33 = 0.0f;
          for (int i34 = 0; i34 < 2; i34 += 1) {
            acc33 = (acc33 + tmp23[lid31 + 2 * i34]);
          }
          tmp30[lid31] = acc33;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid38 = get_local_id(0); lid38 < 1; lid38 += get_local_size(0)) {
        {
          float acc40;
          acc40 = 0.0f;
          for (int i41 = 0; i41 < 2; i41 += 1) {
            acc40 = (acc40 + tmp30[2 * lid38 + i41]);
          }
          tmp37[lid38] = acc40;
        }
      }
      {
        float acc4;
        acc4 = 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc4 = (acc4 + tmp37[0]);
        if ((get_local_id(0) == 0)) {
          tmp2[wg3] = acc4;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}

kernel void schedule_asum_1(
    global const float* restrict xs,
    global float* restrict output,
    global float* restrict tmp2,
    const int N) {
  {
    float acc1;
    acc1 = 0.0f;
    for (int i47 = 0; i47 < N / 128; i47 += 1) {
      acc1 = (acc1 + tmp2[i47]);
    }
    output[0] = acc1;
  }
}
