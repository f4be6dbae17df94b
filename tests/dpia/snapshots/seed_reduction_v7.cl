kernel void seed_reduction_v7(
    global const float* restrict xs,
    global float* restrict output,
    const int N) {
  local float tmp2[64] __attribute__((aligned(16)));
  local float tmp9[32] __attribute__((aligned(16)));
  local float tmp16[16] __attribute__((aligned(16)));
  local float tmp23[8] __attribute__((aligned(16)));
  local float tmp30[4] __attribute__((aligned(16)));
  local float tmp37[2] __attribute__((aligned(16)));
  local float tmp44[1] __attribute__((aligned(16)));
  {
    const int wg1 = get_group_id(0);
    if (wg1 < N / 512) {
      for (int lid3 = get_local_id(0); lid3 < 64; lid3 += get_local_size(0)) {
        {
          float acc5;
          acc5 = 0.0f;
          for (int i6 = 0; i6 < 8; i6 += 1) {
            acc5 = (acc5 + xs[512 * wg1 + lid3 + 64 * i6]);
          }
          tmp2[lid3] = acc5;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid10 = get_local_id(0); lid10 < 32; lid10 += get_local_size(0)) {
        {
          float acc12;
          acc12 = 0.0f;
          for (int i13 = 0; i13 < 2; i13 += 1) {
            acc12 = (acc12 + tmp2[2 * lid10 + i13]);
          }
          tmp9[lid10] = acc12;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid17 = get_local_id(0); lid17 < 16; lid17 += get_local_size(0)) {
        {
          float acc19;
          acc19 = 0.0f;
          for (int i20 = 0; i20 < 2; i20 += 1) {
            acc19 = (acc19 + tmp9[2 * lid17 + i20]);
          }
          tmp16[lid17] = acc19;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid24 = get_local_id(0); lid24 < 8; lid24 += get_local_size(0)) {
        {
          float acc26;
          acc26 = 0.0f;
          for (int i27 = 0; i27 < 2; i27 += 1) {
            acc26 = (acc26 + tmp16[2 * lid24 + i27]);
          }
          tmp23[lid24] = acc26;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid31 = get_local_id(0); lid31 < 4; lid31 += get_local_size(0)) {
        {
          float acc33;
          acc33 = 0.0f;
          for (int i34 = 0; i34 < 2; i34 += 1) {
            acc33 = (acc33 + tmp23[2 * lid31 + i34]);
          }
          tmp30[lid31] = acc33;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid38 = get_local_id(0); lid38 < 2; lid38 += get_local_size(0)) {
        {
          float acc40;
          acc40 = 0.0f;
          for (int i41 = 0; i41 < 2; i41 += 1) {
            acc40 = (acc40 + tmp30[2 * lid38 + i41]);
          }
          tmp37[lid38] = acc40;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid45 = get_local_id(0); lid45 < 1; lid45 += get_local_size(0)) {
        {
          float acc47;
          acc47 = 0.0f;
          for (int i48 = 0; i48 < 2; i48 += 1) {
            acc47 = (acc47 + tmp37[2 * lid45 + i48]);
          }
          tmp44[lid45] = acc47;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int lid51 = get_local_id(0); lid51 < 1; lid51 += get_local_size(0)) {
        output[wg1 + lid51] = tmp44[lid51];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
